//! Operations XLA accepts that JAX does not emit (`scan`), on every CPU
//! platform: the hand-written cases of `tests/xla_ops` (made by
//! `scripts/gen_xla_op_cases.py`, with XLA CPU's outputs), both forms; and the
//! text form of `scan` and its shape errors.

use platform_api::HloModule;
use std::path::Path;

use platform_host as _;
use platform_interpreter as _;

#[test]
fn hand_written_cases_match_xla_cpu() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("xla_ops");
    for platform in ["Interpreter", "Host"] {
        let report = service::conformance::run_corpus(platform, std::slice::from_ref(&corpus))
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        assert!(
            report.results.len() >= 10,
            "{platform}: only {} runs",
            report.results.len()
        );
        let failing: Vec<String> = report
            .results
            .iter()
            .filter(|r| !r.status.is_ok())
            .map(|r| format!("{} ({}): {}", r.case, r.form, r.status.detail()))
            .collect();
        assert!(failing.is_empty(), "{platform}:\n{}", failing.join("\n"));
    }
}

const SCAN: &str = "HloModule m
add_pair {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  sum = f32[] add(x, acc)
  ROOT out = (f32[], f32[]) tuple(sum, sum)
}
ENTRY main {
  x = f32[10] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[10], f32[]) scan(x, zero), dimensions={0}, num_carries=1, is_reverse=true, is_associative=false, to_apply=add_pair
}
";

#[test]
fn scan_prints_and_parses_back() {
    let module = HloModule::parse(SCAN).unwrap();
    let printed = module.to_string();
    assert!(
        printed.contains("dimensions={0}, num_carries=1, is_reverse=true, is_associative=false"),
        "{printed}"
    );
    assert_eq!(HloModule::parse(&printed).unwrap().to_string(), printed);
}

/// The verifier's error for `text`.
fn rejected(text: &str) -> String {
    let module = HloModule::parse(text).expect("parses");
    platform_api::hlo::verifier::verify_module(&module)
        .expect_err("the verifier rejects it")
        .to_string()
}

#[test]
fn scan_shape_errors_name_the_shapes() {
    platform_api::hlo::verifier::verify_module(&HloModule::parse(SCAN).unwrap()).unwrap();
    // The body's carry is f32[] but the init is s32[].
    let bad_init = SCAN.replace("zero = f32[] constant(0)", "zero = s32[] constant(0)");
    let err = rejected(&bad_init);
    assert!(err.contains("add_pair") && err.contains("s32[]"), "{err}");
    // No input to scan over.
    let no_input = SCAN.replace("scan(x, zero)", "scan(zero)");
    let err = rejected(&no_input);
    assert!(err.contains("at least one input"), "{err}");
    // num_carries larger than the operand count.
    let too_many = SCAN.replace("num_carries=1", "num_carries=3");
    let err = rejected(&too_many);
    assert!(err.contains("num_carries=3"), "{err}");
    // The scanned dimension is out of range.
    let bad_dim = SCAN.replace("dimensions={0}", "dimensions={1}");
    let err = rejected(&bad_dim);
    assert!(err.contains("out of range"), "{err}");
}

/// Runs `text` on both CPU platforms on `args`.
fn run_both(text: &str, args: &[platform_api::Literal]) -> Vec<Vec<platform_api::Literal>> {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    ["Interpreter", "Host"]
        .iter()
        .map(|p| tests::run_program(p, module.clone(), args).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect()
}

fn f32s(values: &[f32]) -> platform_api::Literal {
    platform_api::Literal::from_slice(&[values.len()], values).unwrap()
}

fn s32(v: i32) -> platform_api::Literal {
    platform_api::Literal::from_slice(&[], &[v]).unwrap()
}

const DYNAMIC: &str = "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] custom-call(x, n), custom_call_target=\"SliceToDynamic\"
  zero = f32[] constant(0)
  sum = f32[] reduce(d, zero), dimensions={0}, to_apply=add
  p = (f32[6], s32[]) custom-call(d), custom_call_target=\"PadToStatic\"
  size = s32[] get-tuple-element(p), index=1
  y = f32[<=6] negate(d)
  ROOT t = (f32[], s32[], f32[<=6]) tuple(sum, size, y)
}
";

#[test]
fn dynamic_sizes_flow_through_xla_custom_calls_and_results_are_compact() {
    let x = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    for got in run_both(DYNAMIC, &[x, s32(3)]) {
        // Past the dynamic size XLA leaves results unspecified; here they are 0.
        let sum = platform_api::Literal::from_slice(&[], &[6.0f32]).unwrap();
        let want = [sum, s32(3), f32s(&[-1.0, -2.0, -3.0, 0.0, 0.0, 0.0])];
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(&want) {
            tests::compare(g, w, 0.0, 0.0).unwrap();
        }
    }
}

#[test]
fn a_dynamic_parameter_arrives_whole() {
    let text = "HloModule m
ENTRY main {
  x = f32[<=4] parameter(0)
  n = s32[] get-dimension-size(x), dimensions={0}
  ROOT out = (s32[], f32[<=4]) tuple(n, x)
}
";
    let x = f32s(&[1.0, 2.0, 3.0, 4.0]);
    for got in run_both(text, std::slice::from_ref(&x)) {
        tests::compare(&got[0], &s32(4), 0.0, 0.0).unwrap();
        tests::compare(&got[1], &x, 0.0, 0.0).unwrap();
    }
}

#[test]
fn a_dynamic_dimension_an_op_cannot_carry_is_reported() {
    let text = "HloModule m
first {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[6] parameter(0)
  n = s32[] parameter(1)
  u = f32[6] negate(x)
  d = f32[<=6] set-dimension-size(u, n), dimensions={0}
  i = s32[6,1] iota(), iota_dimension=0
  ROOT s = f32[6] scatter(x, i, d), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=first
}
";
    let module = HloModule::parse(text).unwrap();
    for p in ["Interpreter", "Host"] {
        let err = tests::run_program(p, module.clone(), &[f32s(&[0.0; 6]), s32(2)])
            .expect_err("dynamic scatter updates are not supported");
        let msg = err.to_string();
        assert!(
            msg.contains("%s (scatter)") && msg.contains("dynamic"),
            "{p}: {msg}"
        );
    }
}
