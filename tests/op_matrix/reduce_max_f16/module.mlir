#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<4xf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFC00> : tensor<f16> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x6xf16>, tensor<f16>) -> tensor<4xf16> loc(#loc2)
    return %0 : tensor<4xf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_max")
#loc3 = loc("jit(<lambda>)")
