#loc1 = loc("min")
#loc2 = loc("x")
#loc3 = loc("max")
module @jit_clamp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<ui32> loc("min"), %arg1: tensor<4x6xui32> loc("x"), %arg2: tensor<ui32> loc("max")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<4x6xui32> loc(#loc4)
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<ui32>) -> tensor<4x6xui32> loc(#loc4)
    %2 = stablehlo.clamp %0, %arg1, %1 : tensor<4x6xui32> loc(#loc4)
    return %2 : tensor<4x6xui32> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("jit(clamp)/clamp")
#loc5 = loc("jit(clamp)")
