#loc1 = loc("x1")
#loc2 = loc("x2")
module @jit_nextafter attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> loc("x1"), %arg1: tensor<4x6xf32> loc("x2")) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = chlo.next_after %arg0, %arg1 : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32> loc(#loc3)
    return %0 : tensor<4x6xf32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(nextafter)/nextafter")
#loc4 = loc("jit(nextafter)")
