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
