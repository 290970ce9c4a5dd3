#loc1 = loc("k")
#loc2 = loc("v")
#loc4 = loc("sort")
#loc7 = loc("sort:"(#loc4))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi64> loc("k"), %arg1: tensor<4x6xi32> loc("v")) -> (tensor<4x6xi64> {jax.result_info = "result[0]"}, tensor<4x6xi32> {jax.result_info = "result[1]"}) {
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<i64> loc("sort:"(#loc4)), %arg3: tensor<i64> loc("sort:"(#loc4)), %arg4: tensor<i32> loc("sort:"(#loc4)), %arg5: tensor<i32> loc("sort:"(#loc4))):
      %1 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc(#loc5)
      stablehlo.return %1 : tensor<i1> loc(#loc3)
    }) : (tensor<4x6xi64>, tensor<4x6xi32>) -> (tensor<4x6xi64>, tensor<4x6xi32>) loc(#loc3)
    return %0#0, %0#1 : tensor<4x6xi64>, tensor<4x6xi32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/sort")
#loc5 = loc("jit(<lambda>)/lt_to")
#loc6 = loc("jit(<lambda>)")
