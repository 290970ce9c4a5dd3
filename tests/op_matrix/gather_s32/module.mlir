#loc1 = loc("x")
#loc2 = loc("i")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi32> loc("x"), %arg1: tensor<5x1xi32> loc("i")) -> (tensor<5x6xi32> {jax.result_info = "result"}) {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xi32>, tensor<5x1xi32>) -> tensor<5x6xi32> loc(#loc3)
    return %0 : tensor<5x6xi32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/gather")
#loc4 = loc("jit(<lambda>)")
