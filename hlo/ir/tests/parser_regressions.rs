//! Inputs that once broke the parser or printer — found by the fuzzers
//! (`fuzz_*.hlo`) or by reading the code (`review_*.hlo`) — each checked with the
//! fuzzers' oracle: parsing returns instead of panicking, overflowing the stack or
//! allocating without bound, and whatever parses prints to a fixed point that reads
//! back to an equal module.

#[path = "parser_support/oracle.rs"]
mod oracle;

use std::path::PathBuf;

#[test]
fn regression_inputs_hold_the_oracle() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/parser_regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    let mut parsed = 0;
    for file in &files {
        // Regression inputs may be arbitrary bytes; the fuzzers feed valid UTF-8 only.
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        match std::panic::catch_unwind(|| oracle::check_text(&text)) {
            Ok(Ok(true)) => parsed += 1,
            Ok(Ok(false)) => {}
            Ok(Err(why)) => failures.push(format!("{name}: {why}")),
            Err(_) => failures.push(format!("{name}: panicked")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("{} regression inputs, {parsed} of them parse", files.len());
}
