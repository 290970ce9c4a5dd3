#loc1 = loc("x")
#loc2 = loc("y")
#loc3 = loc("n")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xcomplex<f32>> loc("x"), %arg1: tensor<4x6xcomplex<f32>> loc("y"), %arg2: tensor<i32> loc("n")) -> (tensor<4x6xcomplex<f32>> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc4)
    %0:4 = stablehlo.while(%iterArg = %arg2, %iterArg_0 = %arg1, %iterArg_1 = %c, %iterArg_2 = %arg0) : tensor<i32>, tensor<4x6xcomplex<f32>>, tensor<i32>, tensor<4x6xcomplex<f32>>
    cond {
      %1 = stablehlo.compare LT, %iterArg_1, %iterArg, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc6)
      stablehlo.return %1 : tensor<i1> loc(#loc5)
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i32> loc(#loc5)
      %1 = stablehlo.add %iterArg_1, %c_3 : tensor<i32> loc(#loc7)
      %2 = stablehlo.reverse %iterArg_2, dims = [1] : tensor<4x6xcomplex<f32>> loc(#loc8)
      %3 = stablehlo.add %2, %iterArg_0 : tensor<4x6xcomplex<f32>> loc(#loc7)
      stablehlo.return %iterArg, %iterArg_0, %1, %3 : tensor<i32>, tensor<4x6xcomplex<f32>>, tensor<i32>, tensor<4x6xcomplex<f32>> loc(#loc5)
    } loc(#loc5)
    return %0#3 : tensor<4x6xcomplex<f32>> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc4 = loc("jit(f)")
#loc5 = loc("jit(f)/while")
#loc6 = loc("jit(f)/while/cond/lt")
#loc7 = loc("jit(f)/while/body/add")
#loc8 = loc("jit(f)/while/body/rev")
