#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xbf16> loc("x")) -> (tensor<4x6xi1> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16> loc(#loc2)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<4x6xbf16> loc(#loc2)
    %1 = stablehlo.compare NE, %arg0, %0, FLOAT : (tensor<4x6xbf16>, tensor<4x6xbf16>) -> tensor<4x6xi1> loc(#loc2)
    %2 = stablehlo.convert %1 : tensor<4x6xi1> loc(#loc2)
    return %2 : tensor<4x6xi1> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/convert_element_type")
#loc3 = loc("jit(<lambda>)")
