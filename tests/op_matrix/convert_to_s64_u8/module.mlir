#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xui8> loc("x")) -> (tensor<4x6xi64> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x6xui8>) -> tensor<4x6xi64> loc(#loc2)
    return %0 : tensor<4x6xi64> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/convert_element_type")
#loc3 = loc("jit(<lambda>)")
