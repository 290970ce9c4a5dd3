#loc1 = loc("x")
#loc2 = loc("y")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf64> loc("x"), %arg1: tensor<4x6xf64> loc("y")) -> (tensor<4x8xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg1 [0:4, 0:2] : (tensor<4x6xf64>) -> tensor<4x2xf64> loc(#loc3)
    %1 = stablehlo.concatenate %arg0, %0, dim = 1 : (tensor<4x6xf64>, tensor<4x2xf64>) -> tensor<4x8xf64> loc(#loc4)
    return %1 : tensor<4x8xf64> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/slice")
#loc4 = loc("jit(<lambda>)/concatenate")
#loc5 = loc("jit(<lambda>)")
