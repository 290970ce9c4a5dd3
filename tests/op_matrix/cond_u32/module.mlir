#loc1 = loc("p")
#loc2 = loc("x")
#loc3 = loc("y")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i1> loc("p"), %arg1: tensor<4x6xui32> loc("x"), %arg2: tensor<4x6xui32> loc("y")) -> (tensor<4x6xui32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg0 : (tensor<i1>) -> tensor<i32> loc(#loc4)
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.reverse %arg1, dims = [0] : tensor<4x6xui32> loc(#loc6)
      stablehlo.return %2 : tensor<4x6xui32> loc(#loc5)
    }, {
      %2 = stablehlo.add %arg1, %arg2 : tensor<4x6xui32> loc(#loc7)
      stablehlo.return %2 : tensor<4x6xui32> loc(#loc5)
    }) : (tensor<i32>) -> tensor<4x6xui32> loc(#loc5)
    return %1 : tensor<4x6xui32> loc(#loc8)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("jit(f)/convert_element_type")
#loc5 = loc("jit(f)/cond")
#loc6 = loc("jit(f)/cond/branch_0_fun/rev")
#loc7 = loc("jit(f)/cond/branch_1_fun/add")
#loc8 = loc("jit(f)")
