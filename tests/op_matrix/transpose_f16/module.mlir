#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<4x2x3xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<4x6xf16>) -> tensor<2x3x4xf16> loc(#loc2)
    %1 = stablehlo.transpose %0, dims = [2, 0, 1] : (tensor<2x3x4xf16>) -> tensor<4x2x3xf16> loc(#loc3)
    return %1 : tensor<4x2x3xf16> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reshape")
#loc3 = loc("jit(<lambda>)/transpose")
#loc4 = loc("jit(<lambda>)")
