#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf64> loc("x")) -> (tensor<6xf64> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.minimum across dimensions = [0] : (tensor<4x6xf64>, tensor<f64>) -> tensor<6xf64> loc(#loc2)
    return %0 : tensor<6xf64> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_min")
#loc3 = loc("jit(<lambda>)")
