#loc1 = loc("x")
module @jit_exp2 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xcomplex<f32>> loc("x")) -> (tensor<4x6xcomplex<f32>> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<(0.693147182,0.000000e+00)> : tensor<complex<f32>> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<4x6xcomplex<f32>> loc(#loc2)
    %1 = stablehlo.multiply %0, %arg0 : tensor<4x6xcomplex<f32>> loc(#loc2)
    %2 = stablehlo.exponential %1 : tensor<4x6xcomplex<f32>> loc(#loc2)
    return %2 : tensor<4x6xcomplex<f32>> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(exp2)/exp2")
#loc3 = loc("jit(exp2)")
