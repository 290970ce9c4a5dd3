#loc1 = loc("x")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf16> loc("x")) -> (tensor<4x3xf16> {jax.result_info = "result[0]"}, tensor<4x3xi32> {jax.result_info = "result[1]"}) {
    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<4x6xf16> -> (tensor<4x3xf16>, tensor<4x3xi32>) loc(#loc2)
    return %values, %indices : tensor<4x3xf16>, tensor<4x3xi32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(<lambda>)/top_k")
#loc3 = loc("jit(<lambda>)")
