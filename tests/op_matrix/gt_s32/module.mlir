#loc1 = loc("x")
#loc2 = loc("y")
module @jit_gt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi32> loc("x"), %arg1: tensor<4x6xi32> loc("y")) -> (tensor<4x6xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.compare GT, %arg0, %arg1, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1> loc(#loc3)
    return %0 : tensor<4x6xi1> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(gt)/gt")
#loc4 = loc("jit(gt)")
