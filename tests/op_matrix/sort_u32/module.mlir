#loc1 = loc("x")
#loc3 = loc("sort")
#loc6 = loc("sort:"(#loc3))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui32> loc("x")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<ui32> loc("sort:"(#loc3)), %arg2: tensor<ui32> loc("sort:"(#loc3))):
      %1 = stablehlo.compare LT, %arg1, %arg2, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1> loc(#loc4)
      stablehlo.return %1 : tensor<i1> loc(#loc2)
    }) : (tensor<4x6xui32>) -> tensor<4x6xui32> loc(#loc2)
    return %0 : tensor<4x6xui32> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/sort")
#loc4 = loc("jit(<lambda>)/lt_to")
#loc5 = loc("jit(<lambda>)")
