//! HLO text that XLA's parser accepts beyond the printer's canonical form: names
//! reused across computations, instructions without shapes, instructions written
//! inline as operands, module header variants, `algorithm=` on dot. Each module
//! must parse, verify, and print to text that reads back to an equal module.

use hlo_ir::verifier::verify_module;
use hlo_ir::{ElementType, HloModule, Op, Shape};

/// Parses, verifies, and checks that print → parse is the identity.
fn accept(text: &str) -> HloModule {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("verify: {e}\n{}", module.to_text()));
    let printed = module.to_text();
    let again = HloModule::parse(&printed).unwrap_or_else(|e| panic!("reparse: {e}\n{printed}"));
    assert_eq!(
        again, module,
        "print → parse changed the module:\n{printed}"
    );
    module
}

fn instr_named<'a>(module: &'a HloModule, comp: &str, name: &str) -> &'a hlo_ir::HloInstruction {
    let c = module.computation(module.find_computation(comp).unwrap());
    c.instr(
        c.find(name)
            .unwrap_or_else(|| panic!("no %{name} in %{comp}")),
    )
}

fn all_names(module: &HloModule) -> Vec<String> {
    module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
        .collect()
}

// ---------------------------------------------------------------- item 1

#[test]
fn names_may_repeat_across_computations_and_are_made_unique() {
    let text = r#"HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}

ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  r.1 = f32[4] negate(x)
  ROOT r = f32[] reduce(r.1, zero), dimensions={0}, to_apply=add
}
"#;
    let module = accept(text);
    let mut names = all_names(&module);
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        count,
        "names are unique module-wide: {names:?}"
    );
    // The first definition keeps its name; later ones get a fresh suffix that
    // skips names already taken (`r.1` is).
    assert_eq!(
        instr_named(&module, "add", "x").opcode().name(),
        "parameter"
    );
    assert_eq!(instr_named(&module, "add", "r").opcode().name(), "add");
    assert_eq!(
        instr_named(&module, "e", "x.1").opcode().name(),
        "parameter"
    );
    assert_eq!(instr_named(&module, "e", "r.2").opcode().name(), "reduce");
    assert_eq!(instr_named(&module, "e", "r.1").opcode().name(), "negate");
    assert_eq!(module.entry().root_instr().name, "r.2");
}

#[test]
fn names_still_unique_within_a_computation() {
    let text = "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  x = f32[] negate(x)\n}\n";
    let e = HloModule::parse(text).unwrap_err();
    assert!(e.message().contains("duplicate instruction name %x"), "{e}");
}

// ---------------------------------------------------------------- item 2

#[test]
fn shapes_may_be_left_out_where_xla_infers_them() {
    let text = r#"HloModule m

ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  a = add(p0, p1)
  c = compare(a, p1), direction=LT
  s = select(c, a, p1)
  t = transpose(s), dimensions={1,0}
  d = dot(p0, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = tuple(d, c)
}
"#;
    let module = accept(text);
    let shape = |n: &str| instr_named(&module, "e", n).shape.to_string();
    assert_eq!(shape("a"), "f32[2,3]");
    assert_eq!(shape("c"), "pred[2,3]");
    assert_eq!(shape("t"), "f32[3,2]");
    assert_eq!(shape("d"), "f32[2,2]");
    assert_eq!(shape("r"), "(f32[2,2], pred[2,3])");
}

#[test]
fn a_left_out_shape_uses_called_computations() {
    let text = r#"HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = add(x, y)
}

ENTRY e {
  p = f32[5,7] parameter(0)
  z = f32[] constant(0)
  ROOT r = reduce(p, z), dimensions={1}, to_apply=add
}
"#;
    let module = accept(text);
    assert_eq!(module.entry().root_instr().shape.to_string(), "f32[5]");
}

#[test]
fn shapes_that_cannot_be_inferred_are_refused_with_a_reason() {
    for (line, want) in [
        (
            "ROOT r = convert(p)",
            "the shape of convert cannot be inferred",
        ),
        (
            "ROOT r = parameter(1)",
            "the shape of parameter cannot be inferred",
        ),
        ("ROOT r = add(p, q)", "cannot infer the shape of add"),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  {line}\n}}\n"
        );
        let e = HloModule::parse(&text).unwrap_err();
        assert!(e.message().contains(want), "{line}: {e}");
        assert!(e.message().starts_with("5:"), "{line}: located: {e}");
    }
}

// ---------------------------------------------------------------- item 3

#[test]
fn instructions_may_be_written_inline_as_operands() {
    let text = r#"HloModule m

ENTRY e {
  ROOT r = s32[] add(s32[] parameter(0), s32[] constant(1))
}
"#;
    let module = accept(text);
    let e = module.entry();
    assert_eq!(e.instructions.len(), 3);
    assert!(matches!(e.root_instr().op, Op::Binary(_)));
    assert_eq!(e.num_parameters(), 1);
    let names = all_names(&module);
    assert!(names.contains(&"parameter.anon".to_string()), "{names:?}");
    assert!(names.contains(&"constant.anon".to_string()), "{names:?}");
}

#[test]
fn inline_instructions_nest_and_infer_their_shapes() {
    let text = r#"HloModule m

ENTRY e {
  x = f32[3] parameter(0)
  ROOT r = multiply(add(x, negate(x)), add(x, f32[3] constant({1, 2, 3})))
}
"#;
    let module = accept(text);
    let e = module.entry();
    // x, negate, add, constant, add, multiply: operands before users.
    let ops: Vec<&str> = e.instructions.iter().map(|i| i.opcode().name()).collect();
    assert_eq!(
        ops,
        ["parameter", "negate", "add", "constant", "add", "multiply"]
    );
    assert_eq!(
        e.root_instr().shape,
        Shape::array(ElementType::F32, vec![3])
    );
    let mut names = all_names(&module);
    names.sort();
    assert_eq!(
        names,
        [
            "add.anon",
            "add.anon.1",
            "constant.anon",
            "negate.anon",
            "r",
            "x"
        ]
    );
}

#[test]
fn inline_instructions_take_no_attributes_and_need_known_operands() {
    // The comma after an inline instruction separates operands, as in XLA.
    let text = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = pred[2] and(compare(p, p), direction=EQ)\n}\n";
    assert!(HloModule::parse(text).is_err());
    let text =
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, q)\n}\n";
    let e = HloModule::parse(text).unwrap_err();
    assert!(e.message().contains("unknown instruction %q"), "{e}");
}

#[test]
fn inline_nesting_is_bounded() {
    let depth = 10_000;
    let text = format!(
        "HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = {}p{}\n}}\n",
        "negate(".repeat(depth),
        ")".repeat(depth)
    );
    let e = HloModule::parse(&text).unwrap_err();
    assert!(e.message().contains("nest deeper"), "{e}");
}

#[test]
fn inline_nesting_up_to_the_bound_parses_on_a_test_thread_stack() {
    // The deepest nesting allowed, each level's shape inferred, must fit the
    // default 2 MiB stack of a test thread (and so any caller's).
    let depth = hlo_ir::parser::MAX_INLINE_NESTING;
    let text = format!(
        "HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = {}p{}\n}}\n",
        "negate(".repeat(depth),
        ")".repeat(depth)
    );
    let module = accept(&text);
    assert_eq!(module.entry().instructions.len(), depth + 1);
}

// ---------------------------------------------------------------- item 4

#[test]
fn module_header_variants() {
    for header in [
        "HloModule m:",
        "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}",
        "HloModule m:, entry_computation_layout={(f32[2]{0})->f32[2]{0}}",
        "HloModule m, is_scheduled=true, alias_passthrough_params=true",
        "HloModule m, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={false,true}",
        "HloModule m, replica_count=1, num_partitions=1, frontend_attributes={a=\"b\"}",
    ] {
        let text = format!("{header}\n\nENTRY e {{\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}}\n");
        let module = accept(&text);
        assert_eq!(module.name, "m", "{header}");
    }
}

// ---------------------------------------------------------------- item 5

#[test]
fn dot_algorithm_is_kept_and_printed() {
    for algorithm in [
        "dot_bf16_bf16_f32",
        "dot_tf32_tf32_f32",
        "dot_f32_f32_f32",
        "dot_bf16_bf16_f32_x3",
        "dot_f64_f64_f64",
    ] {
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, operand_precision={{highest,highest}}, algorithm={algorithm}\n}}\n"
        );
        let module = accept(&text);
        let Op::Dot { algorithm: got, .. } = &module.entry().root_instr().op else {
            panic!("not a dot");
        };
        assert_eq!(got.map(|a| a.name()), Some(algorithm));
        assert!(
            module.to_text().contains(&format!("algorithm={algorithm}")),
            "{}",
            module.to_text()
        );
    }
    // `unset` is the same as no attribute.
    let text = "HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT d = f32[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}, algorithm=unset\n}\n";
    let module = accept(text);
    assert!(!module.to_text().contains("algorithm"));
    let bad = text.replace("unset", "dot_f7_f7_f7");
    let e = HloModule::parse(&bad).unwrap_err();
    assert!(
        e.message()
            .contains("'dot_f7_f7_f7' is not a dot algorithm"),
        "{e}"
    );
}

// ---------------------------------------------------------------- item 8

#[test]
fn verifier_errors_carry_the_line_and_column() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n    q = s32[2] negate(p)\n  ROOT r = f32[2] add(p, p)\n}\n";
    let module = HloModule::parse(text).unwrap();
    let e = verify_module(&module).unwrap_err();
    assert!(
        e.message()
            .starts_with("5:5: computation %e, instruction %q"),
        "{e}"
    );
    // Instructions built by code have no location; messages are as before.
    let mut module = module;
    module.computations[0].instructions[1].source = hlo_ir::SourceLocation::default();
    let e = verify_module(&module).unwrap_err();
    assert!(
        e.message().starts_with("computation %e, instruction %q"),
        "{e}"
    );
}

#[test]
fn stablehlo_input_gets_a_hint() {
    let text = "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n  func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>) {\n    return %arg0 : tensor<2xf32>\n  }\n}\n";
    let e = HloModule::parse(text).unwrap_err();
    assert!(e.message().contains("StableHLO"), "{e}");
    assert!(e.message().contains("as_text(dialect=\"hlo\")"), "{e}");
    assert!(e.message().contains("compiler_ir(\"hlo\")"), "{e}");
    // Plain HLO errors carry no hint.
    let e = HloModule::parse("HloModule m\nENTRY e {\n  ROOT p = f32[] bogus()\n}\n").unwrap_err();
    assert!(!e.message().contains("StableHLO"), "{e}");
}
