#loc1 = loc("x")
module @jit_acos attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xbf16> loc("x")) -> (tensor<4x6xbf16> {jax.result_info = "result"}) {
    %0 = chlo.acos %arg0 : tensor<4x6xbf16> -> tensor<4x6xbf16> loc(#loc2)
    return %0 : tensor<4x6xbf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(acos)/acos")
#loc3 = loc("jit(acos)")
