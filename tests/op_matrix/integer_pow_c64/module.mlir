#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xcomplex<f32>> loc("x")) -> (tensor<4x6xcomplex<f32>> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x6xcomplex<f32>> loc(#loc2)
    %1 = stablehlo.multiply %0, %arg0 : tensor<4x6xcomplex<f32>> loc(#loc2)
    return %1 : tensor<4x6xcomplex<f32>> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/integer_pow")
#loc3 = loc("jit(<lambda>)")
