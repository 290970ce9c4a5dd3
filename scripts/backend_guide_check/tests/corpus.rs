//! The Toy backend runs the repository's conformance corpus from outside the
//! repository: it passes, or fails only where legalization reports ops it
//! cannot rewrite, or on the gap it lists.

use toy_backend as _; // links the crate, which registers the platform

platform_api::inventory::submit! {
    platform_api::registry::ConformanceGap {
        platform: "Toy",
        case: "fori_loop",
        form: None,
        reason: "XLA CPU contracts a multiply-add into one FMA; Toy rounds each op",
    }
}

#[test]
fn toy_runs_the_corpus() {
    let corpus = std::path::PathBuf::from(env!("CORPUS_DIR"));
    let report = service::conformance::run_corpus("toy", &[corpus]).unwrap();
    println!("{}", report.summary());
    for r in &report.results {
        if !matches!(r.status.label(), "pass" | "unsupported" | "known-gap") {
            panic!("{} {}: {}", r.case, r.form, r.status.detail());
        }
    }
    assert!(report.count("pass") >= 60, "{}", report.summary());
}
