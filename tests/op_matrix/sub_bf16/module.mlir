#loc1 = loc("x")
#loc2 = loc("y")
module @jit_sub attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xbf16> loc("x"), %arg1: tensor<4x6xbf16> loc("y")) -> (tensor<4x6xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<4x6xbf16> loc(#loc3)
    return %0 : tensor<4x6xbf16> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(sub)/sub")
#loc4 = loc("jit(sub)")
