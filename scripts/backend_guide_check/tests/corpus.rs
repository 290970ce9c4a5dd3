//! The Toy backend runs the repository's conformance corpus from outside the
//! repository: every case passes, in both forms.

use toy_backend as _; // links the crate, which registers the platform

#[test]
fn toy_runs_the_corpus() {
    let corpus = std::path::PathBuf::from(env!("CORPUS_DIR"));
    let report = service::conformance::run_corpus("toy", &[corpus]).unwrap();
    println!("{}", report.summary());
    for r in &report.results {
        assert_eq!(
            r.status.label(),
            "pass",
            "{} {}: {}",
            r.case,
            r.form,
            r.status.detail()
        );
    }
    assert!(report.results.len() >= 80, "{}", report.summary());
}
