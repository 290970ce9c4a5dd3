#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi1> loc("x")) -> (tensor<2x4x3x6xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1, 3] : (tensor<4x6xi1>) -> tensor<2x4x3x6xi1> loc(#loc2)
    return %0 : tensor<2x4x3x6xi1> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/broadcast_in_dim")
#loc3 = loc("jit(<lambda>)")
