#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui8> loc("x")) -> (tensor<6xui8> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<ui8> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.multiply across dimensions = [0] : (tensor<4x6xui8>, tensor<ui8>) -> tensor<6xui8> loc(#loc2)
    return %0 : tensor<6xui8> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_prod")
#loc3 = loc("jit(<lambda>)")
