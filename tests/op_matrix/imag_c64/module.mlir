#loc1 = loc("x")
module @jit_imag attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xcomplex<f32>> loc("x")) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.imag %arg0 : (tensor<4x6xcomplex<f32>>) -> tensor<4x6xf32> loc(#loc2)
    return %0 : tensor<4x6xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(imag)/imag")
#loc3 = loc("jit(imag)")
