//! Helpers shared by the custom-call tests: finding the `custom-call` in parsed
//! HLO, test inputs, and building C sources into shared libraries. Also used by
//! the service crate's custom-call tests (through `#[path]`), so paths are
//! spelled from the workspace root.
#![allow(dead_code)]

use platform_api::hlo::Opcode;
use platform_api::{HloInstruction, HloModule};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The first `custom-call` instruction of the entry computation of `hlo`.
pub fn custom_call(hlo: &str) -> HloInstruction {
    let module =
        HloModule::parse(hlo).unwrap_or_else(|e| panic!("test HLO does not parse: {e}\n{hlo}"));
    module
        .entry()
        .instructions
        .iter()
        .find(|i| i.opcode() == Opcode::CustomCall)
        .cloned()
        .expect("the test HLO has a custom-call")
}

/// `n` varied f32 values (deterministic, no two neighbours equal).
pub fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 + seed) * 0.7311).sin() * 10.0 + seed)
        .collect()
}

/// The workspace root (every crate sits one level below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The C sources of the tests.
pub fn c_source(name: &str) -> PathBuf {
    workspace_root()
        .join("platform-api/tests/data/custom_call")
        .join(name)
}

/// A fresh directory for this test process, under cargo's scratch directory
/// for integration tests (inside `target/`, so nothing is left in /tmp).
pub fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "custom-call-{}-{}-{tag}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The C compiler to use: `$CC`, else the first of cc, gcc, clang that runs.
pub fn c_compiler() -> Option<String> {
    let candidates = std::env::var("CC")
        .ok()
        .into_iter()
        .chain(["cc", "gcc", "clang"].map(String::from));
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Compiles `source` (under tests/data/custom_call) into a shared library in a
/// temporary directory. No C compiler is a test failure, unless
/// `HLORUN_SKIP_C_TESTS` is set: then `None`, with the reason printed. A
/// failing compiler is always a test failure.
pub fn build_shared_library(source: &str) -> Option<PathBuf> {
    let Some(cc) = c_compiler() else {
        // The guide's C examples are part of what must work: a machine
        // without a compiler fails loudly unless the skip is asked for.
        assert!(
            std::env::var_os("HLORUN_SKIP_C_TESTS").is_some(),
            "no C compiler found ($CC, cc, gcc and clang all missing): install one \
             (`.ci/run` installs gcc) or set HLORUN_SKIP_C_TESTS=1 to skip the C tests"
        );
        eprintln!("skipping ({source}): no C compiler and HLORUN_SKIP_C_TESTS is set");
        return None;
    };
    let include = workspace_root().join("include");
    let out = temp_dir("lib").join(format!("lib{}.so", source.trim_end_matches(".c")));
    let output = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg("-I")
        .arg(&include)
        .arg(c_source(source))
        .output()
        .expect("run the C compiler");
    assert!(
        output.status.success(),
        "{cc} failed on {source}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(out)
}
