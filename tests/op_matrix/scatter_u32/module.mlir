#loc1 = loc("x")
#loc2 = loc("i")
#loc3 = loc("u")
#loc5 = loc("scatter")
#loc7 = loc("scatter:"(#loc5))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui32> loc("x"), %arg1: tensor<3x1xi32> loc("i"), %arg2: tensor<3x6xui32> loc("u")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<ui32> loc("scatter:"(#loc5)), %arg4: tensor<ui32> loc("scatter:"(#loc5))):
      stablehlo.return %arg4 : tensor<ui32> loc(#loc4)
    }) : (tensor<4x6xui32>, tensor<3x1xi32>, tensor<3x6xui32>) -> tensor<4x6xui32> loc(#loc4)
    return %0 : tensor<4x6xui32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("jit(<lambda>)/scatter")
#loc6 = loc("jit(<lambda>)")
