#loc1 = loc("x")
module @jit_floor attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf64> loc("x")) -> (tensor<4x6xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.floor %arg0 : tensor<4x6xf64> loc(#loc2)
    return %0 : tensor<4x6xf64> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(floor)/floor")
#loc3 = loc("jit(floor)")
