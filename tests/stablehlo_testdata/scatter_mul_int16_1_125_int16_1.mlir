// RUN: stablehlo-opt -inline %s | stablehlo-translate --interpret
// RUN: stablehlo-translate --serialize --target=current %s | stablehlo-translate --deserialize | stablehlo-opt > %t.0
// RUN: stablehlo-opt %s > %t.1
// RUN: diff %t.0 %t.1

module @jit_main attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<1x125xi16> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<0> : tensor<1xi64>
    %0:2 = call @inputs() : () -> (tensor<1x125xi16>, tensor<1xi16>)
    %1 = call @expected() : () -> tensor<1x125xi16>
    %2 = "stablehlo.scatter"(%0#0, %c, %0#1) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg0: tensor<i16>, %arg1: tensor<i16>):
      %3 = stablehlo.multiply %arg0, %arg1 : tensor<i16>
      stablehlo.return %3 : tensor<i16>
    }) : (tensor<1x125xi16>, tensor<1xi64>, tensor<1xi16>) -> tensor<1x125xi16>
    stablehlo.custom_call @check.expect_eq(%2, %1) {has_side_effect = true} : (tensor<1x125xi16>, tensor<1x125xi16>) -> ()
    return %2 : tensor<1x125xi16>
  }
  func.func private @inputs() -> (tensor<1x125xi16> {mhlo.layout_mode = "default"}, tensor<1xi16> {mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<"0xFFFF00000000FFFF0000FFFF00000000FFFF0000FDFF0700FAFFF9FF0300FBFFFEFF000001000100FCFFFEFFFAFF01000000FDFF05000200020000000000FAFF0000FFFF0500FEFF0000020000000300FAFF0000020000000000FFFFFFFFFEFF040001000000FFFF04000000FBFF0200FEFF0000030002000000030005000000FFFF0000000002000000FDFFFEFFFDFF02000300FCFF030005000200000001000000000002000000FFFFFCFFFCFF02000400FEFF0200FDFF01000200060002000100FFFF0000FCFFFFFF0000FEFF0600FFFF0000FEFF0000FDFF0000000000000400FDFFFEFFFEFF0000FEFFFEFF0000FCFF0000010000000500"> : tensor<1x125xi16>
    %c_0 = stablehlo.constant dense<-1> : tensor<1xi16>
    return %c, %c_0 : tensor<1x125xi16>, tensor<1xi16>
  }
  func.func private @expected() -> (tensor<1x125xi16> {mhlo.layout_mode = "default"}) {
    %c = stablehlo.constant dense<"0x010000000000FFFF0000FFFF00000000FFFF0000FDFF0700FAFFF9FF0300FBFFFEFF000001000100FCFFFEFFFAFF01000000FDFF05000200020000000000FAFF0000FFFF0500FEFF0000020000000300FAFF0000020000000000FFFFFFFFFEFF040001000000FFFF04000000FBFF0200FEFF0000030002000000030005000000FFFF0000000002000000FDFFFEFFFDFF02000300FCFF030005000200000001000000000002000000FFFFFCFFFCFF02000400FEFF0200FDFF01000200060002000100FFFF0000FCFFFFFF0000FEFF0600FFFF0000FEFF0000FDFF0000000000000400FDFFFEFFFEFF0000FEFFFEFF0000FCFF0000010000000500"> : tensor<1x125xi16>
    return %c : tensor<1x125xi16>
  }
}
