#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> loc("x")) -> (tensor<6xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.minimum across dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32> loc(#loc2)
    return %0 : tensor<6xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_min")
#loc3 = loc("jit(<lambda>)")
