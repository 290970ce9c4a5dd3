//! `compare`'s default rule on whole models: the cases of `tests/model_compare`
//! (JAX programs lowered to HLO with XLA CPU's outputs, made by
//! `scripts/gen_model_compare_cases.py`: a GPT-2 style block whose causal mask
//! writes -inf before the softmax, a post-norm transformer layer masked with
//! -1e9, a CNN, an LSTM over `scan`, a training step with its gradients).
//!
//! For each, the Host's result must pass against the f64 shadow reference and
//! against XLA CPU's outputs with the default threshold, with every error
//! scale bounded; and moving one element of any floating output by 1% must
//! fail. The same models at full size (sequence 2048) come from the script's
//! `--large DIR` and are checked with `hlorun compare` (see the script).

use platform_api::{CompileOptions, HloModule, Literal, Scalar};
use service::compare::{compare_by_scale, ComparisonReport};
use service::conformance::{case_dirs, Case, Form};
use service::{LocalClient, ScaleRule};
use std::path::Path;

use platform_host as _;
use platform_interpreter as _;

fn cases() -> Vec<Case> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("model_compare");
    case_dirs(&corpus)
        .expect("tests/model_compare")
        .iter()
        .map(|d| Case::load(d).expect("case"))
        .collect()
}

fn judge(
    module: &HloModule,
    case: &Case,
    got: &Literal,
    expected: Option<Literal>,
) -> ComparisonReport {
    compare_by_scale(
        module,
        &CompileOptions::default(),
        &case.args,
        got,
        expected.map(|e| (e, "XLA CPU's outputs")),
        ScaleRule::default(),
        &case.name,
        "Host",
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

fn as_result(leaves: Vec<Literal>, like: &Literal) -> Literal {
    if like.is_tuple() {
        Literal::tuple(leaves)
    } else {
        leaves.into_iter().next().expect("one output")
    }
}

/// `leaves` with the largest-magnitude element of leaf `k` moved by 1%, or
/// `None` when that leaf is not floating point.
fn nudged(leaves: &[Literal], k: usize) -> Option<Vec<Literal>> {
    let leaf = &leaves[k];
    if !leaf.element_type()?.is_float() {
        return None;
    }
    let mut best = (0usize, 0.0f64);
    for i in 0..leaf.element_count() {
        let v = leaf.get(i).ok()?.to_f64_lossy();
        if v.is_finite() && v.abs() > best.1 {
            best = (i, v.abs());
        }
    }
    let mut out = leaves.to_vec();
    let v = leaf.get(best.0).ok()?.to_f64_lossy();
    let moved =
        platform_api::semantics::convert_scalar(Scalar::F64(v * 1.01), leaf.element_type()?);
    out[k].set(best.0, moved).ok()?;
    Some(out)
}

#[test]
fn host_passes_on_models_and_one_element_off_by_one_percent_fails() {
    let client = LocalClient::for_platform(Some("Host")).expect("Host");
    let cases = cases();
    assert!(cases.len() >= 5, "only {} model cases", cases.len());
    for case in &cases {
        let text = case.program(Form::Module).expect("module.hlo");
        let module = HloModule::parse(&text).expect("parse");
        let compiled = client
            .compile(&module, &CompileOptions::default())
            .expect("compile");
        let got = client
            .execute(&compiled.executable, &case.args)
            .expect("execute");
        let report = judge(&module, case, &got, None);
        assert!(report.ok(), "{}", report.text);
        assert!(
            !report.text.contains("no finite error bound"),
            "{}",
            report.text
        );
        let xla = as_result(case.outputs.clone(), &got);
        let report = judge(&module, case, &got, Some(xla));
        assert!(report.ok(), "against XLA CPU:\n{}", report.text);
        let leaves = got.clone().flatten_leaves();
        for k in 0..leaves.len() {
            let Some(bad) = nudged(&leaves, k) else {
                continue;
            };
            let report = judge(&module, case, &as_result(bad, &got), None);
            assert_eq!(
                report.failed, 1,
                "{}: output {k} off by 1% in one element passed:\n{}",
                case.name, report.text
            );
        }
    }
}
