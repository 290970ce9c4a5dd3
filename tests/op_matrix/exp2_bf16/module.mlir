#loc1 = loc("x")
module @jit_exp2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xbf16> loc("x")) -> (tensor<4x6xbf16> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<6.914060e-01> : tensor<bf16> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<4x6xbf16> loc(#loc2)
    %1 = stablehlo.multiply %0, %arg0 : tensor<4x6xbf16> loc(#loc2)
    %2 = stablehlo.exponential %1 : tensor<4x6xbf16> loc(#loc2)
    return %2 : tensor<4x6xbf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(exp2)/exp2")
#loc3 = loc("jit(exp2)")
