//! XLA CPU's floating-point contraction (`fp_contract`): a single-use multiply
//! feeding an add or subtract is evaluated as one FMA by default; `off` rounds
//! every operation separately, as HLO's op-by-op definition says.

mod support;

use platform_api::evaluator::RunContext;
use platform_api::{CompileOptions, Literal};
use platform_interpreter::InterpreterProgram;
use support::{f32s, parse};

const MODULE: &str = r#"HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  c = f32[3] parameter(1)
  sq = f32[3] multiply(x, x)
  ROOT d = f32[3] subtract(sq, c)
}
"#;

/// `x*x - 1` with x = 1 + 2^-12: the exact result 2^-11 + 2^-24 survives only
/// with one rounding.
fn run(fp_contract: Option<&str>) -> Vec<f32> {
    let mut options = CompileOptions::default();
    if let Some(v) = fp_contract {
        options.debug_options.push(("fp_contract".into(), v.into()));
    }
    let exe = InterpreterProgram::new(parse(MODULE), &options).unwrap();
    let x = 1.0f32 + 2f32.powi(-12);
    let out = exe
        .evaluate_literals(
            vec![
                Literal::vector(&[x, 2.0, -0.5]),
                Literal::vector(&[1.0f32, 1.0, 1.0]),
            ],
            &RunContext::default(),
        )
        .unwrap();
    f32s(&out)
}

#[test]
fn default_contracts_like_xla_cpu() {
    let fused = run(None);
    assert_eq!(fused[0], 2f32.powi(-11) + 2f32.powi(-24));
    assert_eq!(fused[1..], [3.0, -0.75]);
    assert_eq!(run(Some("xla")), fused);
}

#[test]
fn off_rounds_each_operation() {
    let x = 1.0f32 + 2f32.powi(-12);
    let separate = run(Some("off"));
    assert_eq!(separate[0], x * x - 1.0);
    assert_ne!(separate[0], run(None)[0]);
}

#[test]
fn a_shared_multiply_is_not_contracted() {
    // `sq` has two users, so neither add may absorb it (LLVM needs a single use).
    let text = r#"HloModule m
ENTRY e {
  x = f32[1] parameter(0)
  c = f32[1] parameter(1)
  sq = f32[1] multiply(x, x)
  d = f32[1] subtract(sq, c)
  ROOT t = (f32[1], f32[1]) tuple(d, sq)
}
"#;
    let exe = InterpreterProgram::new(parse(text), &CompileOptions::default()).unwrap();
    let x = 1.0f32 + 2f32.powi(-12);
    let out = exe
        .evaluate_literals(
            vec![Literal::vector(&[x]), Literal::vector(&[1.0f32])],
            &RunContext::default(),
        )
        .unwrap();
    assert_eq!(f32s(&out.tuple_elements()[0])[0], x * x - 1.0);
}

#[test]
fn bad_option_value_is_an_error() {
    let mut options = CompileOptions::default();
    options
        .debug_options
        .push(("fp_contract".into(), "sometimes".into()));
    let err = InterpreterProgram::new(parse(MODULE), &options)
        .err()
        .unwrap();
    assert!(err.message().contains("fp_contract"), "{}", err.message());
}
