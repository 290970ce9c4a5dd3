//! The conformance corpus on every available platform, through
//! `service::conformance`.
//!
//! For every registered platform whose probe says *available*, every case in
//! `tests/conformance/` and both of its forms (`module.hlo`, `optimized.hlo`)
//! must pass or be covered by a `ConformanceGap` its backend crate registers;
//! a registered gap whose case passes fails this test too, so the gap lists
//! always say exactly what does not work yet. A table is printed either way
//! (`cargo test -p tests --test suite conformance:: -- --nocapture`).

use service::conformance::run_corpus;

// Linking a backend registers it (and its gaps).
use example_backend as _;
use platform_host as _;
use platform_interpreter as _;

#[test]
fn conformance_corpus_on_every_available_platform() {
    let platforms = tests::available_platforms();
    let corpus = tests::corpus_dir();
    let mut problems = Vec::new();
    for &platform in &platforms {
        // An available platform that cannot run (missing pieces, a shared
        // name) is a problem, not a platform to skip.
        let report = match run_corpus(platform, std::slice::from_ref(&corpus)) {
            Ok(report) => report,
            Err(e) => {
                problems.push(format!("{platform}: {e}"));
                continue;
            }
        };
        assert!(
            report.results.len() >= 80,
            "{platform}: {} runs; expected the full corpus (40+ cases, 2 forms each)",
            report.results.len()
        );
        println!("\n{:<30} {:<10} {:<15} detail", "case", "form", platform);
        for r in &report.results {
            println!(
                "{:<30} {:<10} {:<15} {}",
                r.case,
                r.form,
                r.status.label(),
                r.status.detail()
            );
            // Not ok: a failure without a gap, or a gap whose case passes
            // (`Status::GapNowPasses`).
            if !r.status.is_ok() {
                problems.push(format!(
                    "{platform} {} {}: {}: {}",
                    r.case,
                    r.form,
                    r.status.label(),
                    r.status.detail()
                ));
            }
        }
        println!("{}", report.summary());
        // The full corpus ran: a gap that matched nothing is misspelt or stale
        // (unless it names an op-matrix case; tests/op_matrix.rs runs those).
        for gap in tests::stale_gaps(&report.unmatched_gaps) {
            problems.push(format!(
                "{platform}: the gap for {gap} matches no case of the corpus or the op matrix"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "conformance problems:\n{}",
        problems.join("\n")
    );
}
