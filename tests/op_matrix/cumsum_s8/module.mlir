#loc1 = loc("x")
#loc2 = loc("jit(<lambda>)")
#loc3 = loc("reduce_window_sum")
#loc4 = loc("reduce_window_sum:"(#loc3))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi8> loc("x")) -> (tensor<4x6xi8> {jax.result_info = "result"}) {
    %0 = call @cumsum(%arg0) : (tensor<4x6xi8>) -> tensor<4x6xi8> loc(#loc2)
    return %0 : tensor<4x6xi8> loc(#loc2)
  } loc(#loc)
  func.func private @cumsum(%arg0: tensor<4x6xi8> loc("jit(<lambda>)")) -> tensor<4x6xi8> {
    %c = stablehlo.constant dense<0> : tensor<i8> loc(#loc3)
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i8>) -> tensor<i8> loc(#loc3)
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [5, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 6>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<i8> loc("reduce_window_sum:"(#loc3)), %arg2: tensor<i8> loc("reduce_window_sum:"(#loc3))):
      %2 = stablehlo.add %arg1, %arg2 : tensor<i8> loc(#loc3)
      stablehlo.return %2 : tensor<i8> loc(#loc3)
    }) : (tensor<4x6xi8>, tensor<i8>) -> tensor<4x6xi8> loc(#loc3)
    return %1 : tensor<4x6xi8> loc(#loc2)
  } loc(#loc2)
} loc(#loc)
#loc = loc(unknown)
