#loc1 = loc("x")
#loc2 = loc("v")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf64> loc("x"), %arg1: tensor<f64> loc("v")) -> (tensor<7x6xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.pad %arg0, %arg1, low = [1, -2], high = [-1, 2], interior = [1, 0] : (tensor<4x6xf64>, tensor<f64>) -> tensor<7x6xf64> loc(#loc3)
    return %0 : tensor<7x6xf64> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/pad")
#loc4 = loc("jit(<lambda>)")
