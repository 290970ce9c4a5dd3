//! Every program in the conformance corpus parses, and its canonical text is a
//! fixed point of print → parse → print.

use hlo_ir::HloModule;
use std::path::PathBuf;

fn corpus_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&root).expect("tests/conformance exists") {
        let dir = entry.unwrap().path();
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
    files
}

#[test]
fn corpus_parses_and_round_trips() {
    let mut failures = Vec::new();
    for file in corpus_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let module = match HloModule::parse(&text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: parse: {e}", file.display()));
                continue;
            }
        };
        let printed = module.to_text();
        match HloModule::parse(&printed) {
            Ok(again) => {
                if again != module {
                    failures.push(format!("{}: reparsed module differs", file.display()));
                }
                let reprinted = again.to_text();
                if reprinted != printed {
                    failures.push(format!("{}: print is not a fixed point", file.display()));
                }
            }
            Err(e) => failures.push(format!("{}: reparse of printed text: {e}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
