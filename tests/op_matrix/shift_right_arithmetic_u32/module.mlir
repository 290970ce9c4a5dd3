#loc1 = loc("x")
#loc2 = loc("y")
module @jit_shift_right_arithmetic attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui32> loc("x"), %arg1: tensor<4x6xui32> loc("y")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = stablehlo.shift_right_arithmetic %arg0, %arg1 : tensor<4x6xui32> loc(#loc3)
    return %0 : tensor<4x6xui32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(shift_right_arithmetic)/shift_right_arithmetic")
#loc4 = loc("jit(shift_right_arithmetic)")
