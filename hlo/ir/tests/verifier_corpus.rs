//! Every real program verifies: the conformance corpus (`module.hlo` as JAX lowers
//! it and `optimized.hlo` as XLA CPU leaves it), the programs in
//! `tests/verifier_data/xla_generated` (made by JAX and XLA for operations the
//! corpus lacks; `generate.py` beside them remakes them) and the benchmark programs in
//! `../shared/bench` (skipped with a note when that directory is absent;
//! `HLO_BENCH_DIR` points elsewhere).

use hlo_ir::verifier::verify_module;
use hlo_ir::HloModule;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn verify_file(file: &Path, failures: &mut Vec<String>) {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            failures.push(format!("{}: read: {e}", file.display()));
            return;
        }
    };
    let module = match HloModule::parse(&text) {
        Ok(m) => m,
        Err(e) => {
            failures.push(format!("{}: parse: {e}", file.display()));
            return;
        }
    };
    if let Err(e) = verify_module(&module) {
        failures.push(format!("{}: {e}", file.display()));
    }
}

#[test]
fn conformance_corpus_verifies() {
    let root = repo_root().join("tests/conformance");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&root).expect("tests/conformance exists") {
        let dir = entry.expect("readable directory entry").path();
        for name in ["module.hlo", "optimized.hlo"] {
            let f = dir.join(name);
            if f.exists() {
                files.push(f);
            }
        }
    }
    files.sort();
    assert!(
        files.len() >= 80,
        "corpus incomplete: {} files",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        verify_file(f, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `../shared/bench` relative to the repository root, or `$HLO_BENCH_DIR` when set
/// (for running this test from a checkout that lives elsewhere).
fn bench_dir() -> PathBuf {
    match std::env::var_os("HLO_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("../shared/bench"),
    }
}

#[test]
fn bench_programs_verify() {
    let dir = bench_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "note: {} does not exist; benchmark programs not verified",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no .hlo files", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        verify_file(f, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn xla_generated_programs_verify() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/verifier_data/xla_generated");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/verifier_data/xla_generated exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
        .collect();
    files.sort();
    assert!(files.len() >= 70, "only {} generated programs", files.len());
    let mut failures = Vec::new();
    for f in &files {
        verify_file(f, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
