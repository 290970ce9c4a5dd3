#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi8> loc("x")) -> (tensor<2x3xi8> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [1:4:2, 1:6:2] : (tensor<4x6xi8>) -> tensor<2x3xi8> loc(#loc2)
    return %0 : tensor<2x3xi8> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/slice")
#loc3 = loc("jit(<lambda>)")
