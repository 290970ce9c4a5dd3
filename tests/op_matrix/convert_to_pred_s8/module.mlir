#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi8> loc("x")) -> (tensor<4x6xi1> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i8> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i8>) -> tensor<4x6xi8> loc(#loc2)
    %1 = stablehlo.compare NE, %arg0, %0, SIGNED : (tensor<4x6xi8>, tensor<4x6xi8>) -> tensor<4x6xi1> loc(#loc2)
    %2 = stablehlo.convert %1 : tensor<4x6xi1> loc(#loc2)
    return %2 : tensor<4x6xi1> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/convert_element_type")
#loc3 = loc("jit(<lambda>)")
