#loc1 = loc("x")
module @jit_cbrt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<4x6xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.cbrt %arg0 : tensor<4x6xf16> loc(#loc2)
    return %0 : tensor<4x6xf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(cbrt)/cbrt")
#loc3 = loc("jit(cbrt)")
