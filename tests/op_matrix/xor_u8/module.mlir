#loc1 = loc("x")
#loc2 = loc("y")
module @jit_bitwise_xor attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui8> loc("x"), %arg1: tensor<4x6xui8> loc("y")) -> (tensor<4x6xui8> {jax.result_info = "result"}) {
    %0 = stablehlo.xor %arg0, %arg1 : tensor<4x6xui8> loc(#loc3)
    return %0 : tensor<4x6xui8> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(bitwise_xor)/xor")
#loc4 = loc("jit(bitwise_xor)")
