#loc1 = loc("x")
module @jit_bitwise_not attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui32> loc("x")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = stablehlo.not %arg0 : tensor<4x6xui32> loc(#loc2)
    return %0 : tensor<4x6xui32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(bitwise_not)/not")
#loc3 = loc("jit(bitwise_not)")
