#loc1 = loc("x")
module @jit_acosh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<4x6xf16> {jax.result_info = "result"}) {
    %0 = chlo.acosh %arg0 : tensor<4x6xf16> -> tensor<4x6xf16> loc(#loc2)
    return %0 : tensor<4x6xf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(acosh)/acosh")
#loc3 = loc("jit(acosh)")
