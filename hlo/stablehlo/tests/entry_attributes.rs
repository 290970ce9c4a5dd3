//! What JAX writes on the entry's arguments and results reaches the HLO
//! module: donation (`tf.aliasing_output`, `jax.buffer_donor`) as input-output
//! aliases and buffer donors, shardings (`mhlo.sharding`) on parameters and
//! the root.

const TEXT: &str = r#"module @jit_f attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 1 : i32, mhlo.sharding = "{devices=[2]<=[2]}"}, %arg1: tensor<4xf32> {jax.buffer_donor = true}, %arg2: tensor<4xf32>) -> (tensor<4xf32> {mhlo.sharding = "{replicated}"}, tensor<4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    %1 = stablehlo.multiply %0, %arg2 : tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}
"#;

#[test]
fn donation_and_shardings_reach_the_module() {
    let m = hlo_stablehlo::parse_module(TEXT).expect("reads");
    let alias = &m.config.input_output_alias;
    assert_eq!(alias.len(), 1, "{alias:?}");
    assert_eq!(alias[0].parameter_number, 0);
    assert_eq!(alias[0].output_index, vec![1]);
    assert_eq!(m.config.buffer_donor, vec![(1, vec![])]);
    assert_eq!(m.config.num_partitions, Some(2));
    let entry = m.entry();
    let p0 = entry.instr(entry.parameters()[0]);
    assert_eq!(p0.sharding.as_deref(), Some("{devices=[2]<=[2]}"));
    assert_eq!(entry.instr(entry.parameters()[2]).sharding, None);
    assert_eq!(
        entry.root_instr().sharding.as_deref(),
        Some("{{replicated}, {replicated}}")
    );
}
