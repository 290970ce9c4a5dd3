#loc1 = loc("pred")
#loc2 = loc("on_true")
#loc3 = loc("on_false")
module @jit_select attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xi1> loc("pred"), %arg1: tensor<4x6xi1> loc("on_true"), %arg2: tensor<4x6xi1> loc("on_false")) -> (tensor<4x6xi1> {jax.result_info = "result"}) {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x6xi1>, tensor<4x6xi1> loc(#loc4)
    return %0 : tensor<4x6xi1> loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("jit(select)/select_n")
#loc5 = loc("jit(select)")
