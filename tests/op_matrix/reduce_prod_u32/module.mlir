#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui32> loc("x")) -> (tensor<6xui32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<ui32> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.multiply across dimensions = [0] : (tensor<4x6xui32>, tensor<ui32>) -> tensor<6xui32> loc(#loc2)
    return %0 : tensor<6xui32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_prod")
#loc3 = loc("jit(<lambda>)")
