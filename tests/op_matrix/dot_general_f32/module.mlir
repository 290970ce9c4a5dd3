#loc1 = loc("a")
#loc2 = loc("b")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32> loc("a"), %arg1: tensor<2x4x3xf32> loc("b")) -> (tensor<2x3x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32> loc(#loc3)
    return %0 : tensor<2x3x3xf32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/dot_general")
#loc4 = loc("jit(<lambda>)")
