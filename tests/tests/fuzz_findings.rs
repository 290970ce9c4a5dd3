//! Programs on which fuzzing once made `hlorun compare --platform host` fail
//! (`tests/fuzz_findings`, made by `scripts/gen_fuzz_finding_cases.py` from
//! `../shared/fuzz_findings` with XLA CPU's outputs): infinities, NaNs and
//! values at the edge of the range in constants, Cholesky of matrices that
//! are not positive definite, FFT of non-finite input, a triangular solve
//! reading an infinity.
//!
//! `compare` with its defaults must accept the Host on each, against the f64
//! shadow reference and against XLA CPU's outputs, or call the output
//! undefined where XLA leaves it so; where XLA refuses the program, hlorun's
//! parser must refuse it too.

use platform_api::{CompileOptions, HloModule, Literal};
use service::compare::compare_by_scale;
use service::conformance::{Case, Form};
use service::{LocalClient, ScaleRule};
use std::path::Path;

use platform_host as _;
use platform_interpreter as _;

/// Cases whose XLA CPU output is not the program's meaning, with the reason.
const XLA_DIFFERS: &[(&str, &str)] = &[(
    "interpret_interp_fft_7_fft_op_test_rfft_339465859",
    "XLA's HLO parser reads the f64 constant 18446744073709551615 as -1 (an \
     integer wrapped to int64); hlorun reads the number written",
)];

fn as_result(leaves: Vec<Literal>, like: &Literal) -> Literal {
    if like.is_tuple() {
        Literal::tuple(leaves)
    } else {
        leaves.into_iter().next().expect("one output")
    }
}

#[test]
fn compare_accepts_the_host_on_every_fuzz_finding() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz_findings");
    let mut dirs: Vec<_> = std::fs::read_dir(&corpus)
        .expect("tests/fuzz_findings")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 20, "only {} findings", dirs.len());
    let client = LocalClient::for_platform(Some("Host")).expect("Host");
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(dir.join("module.hlo")).expect("module.hlo");
        if dir.join("xla_rejects.txt").is_file() {
            if let Ok(module) = HloModule::parse(&text) {
                let verified = platform_api::hlo::verifier::verify_module(&module);
                if verified.is_ok() {
                    failures.push(format!("{name}: XLA rejects it, hlorun accepts it"));
                }
            }
            continue;
        }
        let case = Case::load(dir).expect("case");
        let module = HloModule::parse(&case.program(Form::Module).unwrap()).expect("parse");
        let compiled = client
            .compile(&module, &CompileOptions::default())
            .expect("compile");
        let got = client
            .execute(&compiled.executable, &case.args)
            .expect("execute");
        let xla_differs = XLA_DIFFERS.iter().any(|(n, _)| *n == name);
        let expected = [None, Some(as_result(case.outputs.clone(), &got))];
        for want in expected.into_iter().filter(|w| w.is_none() || !xla_differs) {
            let report = compare_by_scale(
                &module,
                &CompileOptions::default(),
                &case.args,
                &got,
                want.map(|w| (w, "XLA CPU's outputs")),
                ScaleRule::default(),
                &name,
                "Host",
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            if !report.ok() {
                failures.push(report.text);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
