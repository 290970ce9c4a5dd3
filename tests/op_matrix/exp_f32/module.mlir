#loc1 = loc("x")
module @jit_exp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> loc("x")) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.exponential %arg0 : tensor<4x6xf32> loc(#loc2)
    return %0 : tensor<4x6xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(exp)/exp")
#loc3 = loc("jit(exp)")
