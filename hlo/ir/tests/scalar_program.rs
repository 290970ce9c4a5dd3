//! The shared scalar-program front end: what compiles, how registers are laid
//! out, and that hostile computations give errors naming the instruction.

use hlo_ir::analysis::scalar_program::{
    Leaf, ScalarExtension, ScalarOp, ScalarProgram, MAX_INLINE_DEPTH,
};
use hlo_ir::{BinaryOp, ElementType, HloInstruction, HloModule, Result};

fn module(text: &str) -> HloModule {
    HloModule::parse(text).unwrap()
}

fn compile(m: &HloModule, name: &str) -> Result<ScalarProgram> {
    ScalarProgram::compile(m, m.find_computation(name).unwrap(), &())
}

#[test]
fn tuple_parameters_flatten_and_calls_inline() {
    let m = module(
        r#"
HloModule m
inner {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
outer {
  p = (f32[], s32[]) parameter(0)
  q = f32[] parameter(1)
  a = f32[] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  dead = f32[] sine(q)
  c = f32[] call(a, q), to_apply=inner
  two = f32[] constant(2)
  r = f32[] reshape(c)
  m = f32[] multiply(r, two)
  ROOT t = (f32[], s32[]) tuple(m, i)
}
ENTRY e {
  ROOT z = f32[] parameter(0)
}
"#,
    );
    let p = compile(&m, "outer").unwrap();
    use ElementType::{F32, S32};
    assert_eq!(p.param_types(), [F32, S32, F32]);
    assert_eq!(
        p.params,
        [
            Leaf { reg: 0, ty: F32 },
            Leaf { reg: 1, ty: S32 },
            Leaf { reg: 2, ty: F32 }
        ]
    );
    // The sine is dead; the call became its add; the reshape aliased it.
    let ops: Vec<_> = p.steps.iter().map(|s| s.op.clone()).collect();
    assert_eq!(
        ops,
        [
            ScalarOp::Binary(BinaryOp::Add),
            ScalarOp::Binary(BinaryOp::Multiply)
        ]
    );
    assert_eq!(p.steps[0].args(), [0, 2]);
    assert_eq!(p.constants.len(), 1);
    let two = p.constants[0].0;
    assert_eq!(p.steps[1].args(), [p.steps[0].out, two]);
    assert_eq!(p.output_types(), [F32, S32]);
    assert_eq!(p.outputs[1], Leaf { reg: 1, ty: S32 });
    assert_eq!(p.num_regs(), 6);
}

#[test]
fn unsupported_instructions_are_named() {
    let m = module(
        r#"
HloModule m
c {
  x = f32[] parameter(0)
  v = f32[4] broadcast(x), dimensions={}
  ROOT r = f32[] reduce(v, x), dimensions={0}, to_apply=c
}
ENTRY e {
  ROOT z = f32[] parameter(0)
}
"#,
    );
    let err = compile(&m, "c").unwrap_err().to_string();
    assert!(err.contains("%v") && err.contains("not a scalar"), "{err}");
}

#[test]
fn expressions_may_use_only_their_parameter() {
    let m = module(
        r#"
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  na = f32[] negate(a)
  nb = f32[] negate(b)
  mixed = f32[] add(a, b)
  ROOT lt = pred[] compare(na, nb), direction=LT
}
ENTRY e {
  ROOT z = f32[] parameter(0)
}
"#,
    );
    let id = m.find_computation("cmp").unwrap();
    let comp = &m.computations[id.index()];
    let find = |name: &str| comp.ids().find(|&i| comp.instr(i).name == name).unwrap();
    let key = ScalarProgram::compile_expression(&m, id, find("nb"), 1, &()).unwrap();
    assert_eq!(key.param_types(), [ElementType::F32]);
    assert_eq!(key.steps.len(), 1);
    assert_eq!(key.steps[0].args(), [0]);
    let err = ScalarProgram::compile_expression(&m, id, find("mixed"), 1, &()).unwrap_err();
    assert!(err.to_string().contains("%a"), "{err}");
}

/// A chain of computations each calling the next twice: inlining is bounded
/// by depth, and a call graph that would grow without bound is an error.
#[test]
fn inlining_is_bounded() {
    let levels = MAX_INLINE_DEPTH + 4;
    let mut text = String::from("HloModule m\n");
    text.push_str("c0 {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n");
    for k in 1..=levels {
        text.push_str(&format!(
            "c{k} {{\n  x = f32[] parameter(0)\n  a = f32[] call(x), to_apply=c{prev}\n  b = f32[] call(a), to_apply=c{prev}\n  ROOT s = f32[] add(a, b)\n}}\n",
            prev = k - 1
        ));
    }
    text.push_str("ENTRY e {\n  ROOT z = f32[] parameter(0)\n}\n");
    let m = module(&text);
    let err = compile(&m, &format!("c{levels}")).unwrap_err().to_string();
    assert!(
        err.contains("nested deeper") || err.contains("registers"),
        "{err}"
    );
    // Shallow enough: compiles, with every call inlined.
    let p = compile(&m, "c3").unwrap();
    assert!(p.steps.len() > 8);
}

/// The extension hook turns the custom calls a backend knows into steps.
#[test]
fn custom_calls_go_through_the_extension() {
    struct Fma;
    impl ScalarExtension for Fma {
        type Op = &'static str;
        fn custom_call(
            &self,
            instr: &HloInstruction,
            types: &[ElementType],
        ) -> Result<Option<&'static str>> {
            Ok((instr.name == "f" && types.len() == 3).then_some("fma"))
        }
    }
    let m = module(
        r#"
HloModule m
c {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT f = f32[] custom-call(a, b, a), custom_call_target="fma"
}
ENTRY e {
  ROOT z = f32[] parameter(0)
}
"#,
    );
    let id = m.find_computation("c").unwrap();
    let p = ScalarProgram::compile(&m, id, &Fma).unwrap();
    assert_eq!(p.steps[0].op, ScalarOp::Extension("fma"));
    assert_eq!(p.steps[0].args(), [0, 1, 0]);
    let err = ScalarProgram::compile(&m, id, &()).unwrap_err().to_string();
    assert!(err.contains("%f") && err.contains("custom call"), "{err}");
}
