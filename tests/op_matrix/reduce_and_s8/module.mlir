#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi8> loc("x")) -> (tensor<4xi8> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<-1> : tensor<i8> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.and across dimensions = [1] : (tensor<4x6xi8>, tensor<i8>) -> tensor<4xi8> loc(#loc2)
    return %0 : tensor<4xi8> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/reduce_and")
#loc3 = loc("jit(<lambda>)")
