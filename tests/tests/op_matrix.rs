//! The op × element-type matrix (`tests/op_matrix/`, made by
//! `scripts/gen_op_matrix.py` with XLA CPU's results) on every available
//! platform, through `service::conformance`.
//!
//! Prints, per platform, a table with one row per op and one column per
//! element type (`cargo test -p tests --test suite op_matrix:: -- --nocapture`), and
//! fails on any `wrong`, `error` or `gap-now-passes` run. `unsupported` is
//! allowed only on the Example platform, which runs a small core set and
//! reports what its legalization cannot express; every other platform must
//! pass each case or register a `ConformanceGap` for it in its own crate.

use service::conformance::{case_dirs, run_corpus, CaseResult, Form, Report, Status};
use std::collections::BTreeMap;

// Linking a backend registers it (and its gaps).
use example_backend as _;
use platform_host as _;
use platform_interpreter as _;

/// The element types of the matrix, in column order (the suffix of a case's
/// folder name, `<op>_<dtype>`).
const DTYPES: [&str; 11] = [
    "f32", "f64", "f16", "bf16", "s8", "s32", "s64", "u8", "u32", "pred", "c64",
];

/// `("convert_to_f16", "f32")` from `convert_to_f16_f32`.
fn op_and_dtype(case: &str) -> (&str, &str) {
    match case.rsplit_once('_') {
        Some((op, dtype)) if DTYPES.contains(&dtype) => (op, dtype),
        _ => (case, "?"),
    }
}

/// One letter per status.
fn letter(status: &Status) -> char {
    match status {
        Status::Pass => 'P',
        Status::Unsupported { .. } => 'U',
        Status::KnownGap { .. } => 'G',
        Status::Wrong { .. } => 'W',
        Status::Error { .. } => 'E',
        Status::GapNowPasses { .. } => '!',
    }
}

/// The table: a row per op, a column per element type; a cell is one letter
/// when every form agrees, else one per form (module/optimized/stablehlo/
/// bytecode/jaxexport).
fn table(report: &Report) -> String {
    let mut rows: BTreeMap<&str, BTreeMap<&str, [char; 5]>> = BTreeMap::new();
    for r in &report.results {
        let (op, dtype) = op_and_dtype(&r.case);
        let cell = rows.entry(op).or_default().entry(dtype).or_insert(['.'; 5]);
        let i = match r.form {
            Form::Module => 0,
            Form::Optimized => 1,
            Form::StableHlo => 2,
            Form::Bytecode => 3,
            Form::JaxExport => 4,
        };
        cell[i] = letter(&r.status);
    }
    let width = rows.keys().map(|op| op.len()).max().unwrap_or(2).max(2);
    let mut out = format!("{:<width$}", "op");
    for dtype in DTYPES {
        out += &format!(" {dtype:>6}");
    }
    out.push('\n');
    for (op, cells) in &rows {
        out += &format!("{op:<width$}");
        for dtype in DTYPES {
            let text = match cells.get(dtype) {
                None => "-".to_string(),
                Some(c) => {
                    let present: Vec<char> = c.iter().copied().filter(|&l| l != '.').collect();
                    if present.windows(2).all(|w| w[0] == w[1]) {
                        present.first().copied().unwrap_or('.').to_string()
                    } else {
                        c.iter().map(char::to_string).collect::<Vec<_>>().join("/")
                    }
                }
            };
            out += &format!(" {text:>6}");
        }
        out.push('\n');
    }
    out += "P pass, U unsupported, G known gap, W wrong, E error, ! gap now passes, \
            - not generated; A/B/C/D/E: module/optimized/stablehlo/bytecode/jaxexport differ\n";
    out
}

/// Why a run is not acceptable on `platform`, if it is not.
fn problem(platform: &str, r: &CaseResult) -> Option<String> {
    let allowed = match r.status {
        Status::Unsupported { .. } => tests::PARTIAL_PLATFORMS.contains(&platform),
        _ => r.status.is_ok(),
    };
    (!allowed).then(|| {
        format!(
            "{platform} {} {}: {}: {}",
            r.case,
            r.form,
            r.status.label(),
            r.status.detail()
        )
    })
}

#[test]
fn op_matrix_on_every_available_platform() {
    let platforms = tests::available_platforms();
    let matrix = tests::op_matrix_dir();
    let cases = case_dirs(&matrix).expect("tests/op_matrix holds the generated cases");
    let mut problems = Vec::new();
    for &platform in &platforms {
        let report = match run_corpus(platform, std::slice::from_ref(&matrix)) {
            Ok(report) => report,
            Err(e) => {
                problems.push(format!("{platform}: {e}"));
                continue;
            }
        };
        // Every generated case ran, in both forms.
        let extra: usize = [Form::StableHlo, Form::Bytecode, Form::JaxExport]
            .iter()
            .map(|f| {
                cases
                    .iter()
                    .filter(|c| c.join(f.file_name()).exists())
                    .count()
            })
            .sum();
        assert_eq!(
            report.results.len(),
            2 * cases.len() + extra,
            "{platform}: every case of {} runs in both HLO forms, and as StableHLO text, bytecode and jax.export where it has them",
            matrix.display()
        );
        println!("\n{platform}\n{}", table(&report));
        for r in &report.results {
            if r.status != Status::Pass {
                println!(
                    "{platform:<12} {:<28} {:<10} {:<12} {}",
                    r.case,
                    r.form,
                    r.status.label(),
                    r.status.detail()
                );
            }
            problems.extend(problem(platform, r));
        }
        println!("{}", report.summary());
        // Gaps of the conformance corpus match nothing here; any other gap
        // that matches nothing is misspelt or stale.
        for gap in tests::stale_gaps(&report.unmatched_gaps) {
            problems.push(format!(
                "{platform}: the gap for {gap} matches no case of the op matrix or the corpus"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "op matrix problems ({}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
