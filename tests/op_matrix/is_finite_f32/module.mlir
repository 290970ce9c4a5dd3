#loc1 = loc("x")
module @jit_is_finite attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> loc("x")) -> (tensor<4x6xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.is_finite %arg0 : (tensor<4x6xf32>) -> tensor<4x6xi1> loc(#loc2)
    return %0 : tensor<4x6xi1> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(is_finite)/is_finite")
#loc3 = loc("jit(is_finite)")
