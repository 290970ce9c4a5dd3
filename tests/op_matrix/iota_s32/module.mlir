module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<3x5xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 1 : tensor<3x5xi32> loc(#loc1)
    return %0 : tensor<3x5xi32> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("jit(<lambda>)/iota")
#loc2 = loc("jit(<lambda>)")
