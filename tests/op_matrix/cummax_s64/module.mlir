#loc1 = loc("x")
#loc2 = loc("jit(<lambda>)")
#loc3 = loc("reduce_window_max")
#loc4 = loc("reduce_window_max:"(#loc3))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi64> loc("x")) -> (tensor<4x6xi64> {jax.result_info = "result"}) {
    %0 = call @cummax(%arg0) : (tensor<4x6xi64>) -> tensor<4x6xi64> loc(#loc2)
    return %0 : tensor<4x6xi64> loc(#loc2)
  } loc(#loc)
  func.func private @cummax(%arg0: tensor<4x6xi64> loc("jit(<lambda>)")) -> tensor<4x6xi64> {
    %c = stablehlo.constant dense<-9223372036854775808> : tensor<i64> loc(#loc3)
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i64>) -> tensor<i64> loc(#loc3)
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[3, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 4, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<i64> loc("reduce_window_max:"(#loc3)), %arg2: tensor<i64> loc("reduce_window_max:"(#loc3))):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<i64> loc(#loc3)
      stablehlo.return %2 : tensor<i64> loc(#loc3)
    }) : (tensor<4x6xi64>, tensor<i64>) -> tensor<4x6xi64> loc(#loc3)
    return %1 : tensor<4x6xi64> loc(#loc2)
  } loc(#loc2)
} loc(#loc)
#loc = loc(unknown)
