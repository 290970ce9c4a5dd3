#loc = loc(unknown)
#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32> loc("x")) -> (tensor<4x4xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<4x6xf32>) -> tensor<4x4xcomplex<f32>> loc(#loc2)
    return %0 : tensor<4x4xcomplex<f32>> loc(#loc3)
  } loc(#loc)
  func.func private @fft(%arg0: tensor<4x6xf32> loc(unknown)) -> tensor<4x4xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [6] : (tensor<4x6xf32>) -> tensor<4x4xcomplex<f32>> loc(#loc5)
    return %0 : tensor<4x4xcomplex<f32>> loc(#loc)
  } loc(#loc6)
} loc(#loc)
#loc2 = loc("jit(<lambda>)/jit(fft)")
#loc3 = loc("jit(<lambda>)")
#loc4 = loc("jit(<lambda>)/jit")
#loc5 = loc("fft")
#loc6 = loc("jit:"(#loc4))
