#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<6xf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f16> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.multiply across dimensions = [0] : (tensor<4x6xf16>, tensor<f16>) -> tensor<6xf16> loc(#loc2)
    return %0 : tensor<6xf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_prod")
#loc3 = loc("jit(<lambda>)")
