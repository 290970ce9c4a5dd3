//! Replays the cases `scripts/gen_kernel_cases.py` computed with XLA CPU
//! (`tests/data/kernel_cases.txt`) through the interpreter's kernels.

mod kernel_support;

use hlo_ir::HloModule;

#[test]
fn kernels_match_xla_cpu() {
    let cases = kernel_support::load_cases();
    assert!(cases.len() >= 90, "only {} cases loaded", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let module = match HloModule::parse(&case.hlo) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: parse: {e}", case.name));
                continue;
            }
        };
        let got = match kernel_support::run_root(&module, &case.args) {
            Ok((lit, _)) => lit.flatten_leaves(),
            Err(e) => {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        if got.len() != case.outs.len() {
            failures.push(format!(
                "{}: {} results, expected {}",
                case.name,
                got.len(),
                case.outs.len()
            ));
            continue;
        }
        for (i, (g, w)) in got.iter().zip(&case.outs).enumerate() {
            if let Err(e) = kernel_support::compare(g, w, case.tol) {
                failures.push(format!("{} result {i}: {e}", case.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
