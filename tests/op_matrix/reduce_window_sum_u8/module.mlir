#loc1 = loc("x")
#loc3 = loc("reduce_window_sum")
#loc5 = loc("reduce_window_sum:"(#loc3))
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui8> loc("x")) -> (tensor<3x2xui8> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<ui8> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<ui8> loc(#loc2)
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%arg1: tensor<ui8> loc("reduce_window_sum:"(#loc3)), %arg2: tensor<ui8> loc("reduce_window_sum:"(#loc3))):
      %2 = stablehlo.add %arg1, %arg2 : tensor<ui8> loc(#loc2)
      stablehlo.return %2 : tensor<ui8> loc(#loc2)
    }) : (tensor<4x6xui8>, tensor<ui8>) -> tensor<3x2xui8> loc(#loc2)
    return %1 : tensor<3x2xui8> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_window_sum")
#loc4 = loc("jit(<lambda>)")
