#loc1 = loc("x")
#loc2 = loc("k")
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x2x3x4xui8> loc("x"), %arg1: tensor<2x2x2x1xui8> loc("k")) -> (tensor<1x2x3x4xui8> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x2x3x4xui8>, tensor<2x2x2x1xui8>) -> tensor<1x2x3x4xui8> loc(#loc3)
    return %0 : tensor<1x2x3x4xui8> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(<lambda>)/conv_general_dilated")
#loc4 = loc("jit(<lambda>)")
