#loc1 = loc("x")
module @jit_asinh attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xcomplex<f32>> loc("x")) -> (tensor<4x6xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = chlo.asinh %arg0 : tensor<4x6xcomplex<f32>> -> tensor<4x6xcomplex<f32>> loc(#loc2)
    return %0 : tensor<4x6xcomplex<f32>> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(asinh)/asinh")
#loc3 = loc("jit(asinh)")
