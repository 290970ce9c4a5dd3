//! Legalizing the whole conformance corpus (`module.hlo` and `optimized.hlo`
//! of every case) to the core op set of `legalize_common::core_support`, after
//! the standard pipeline as a compiler runs them, and straight from the text
//! (with the same outcome).
//!
//! Every program either legalizes, verifies, and evaluates on the case's inputs
//! (`argN.npy`) to what the original evaluates to (NaN-ness exact, floats within
//! 4 ulp or the case's own `rtol`/`atol`: `tan`, `rsqrt`, `log1p`, `expm1`
//! expansions round more than once, `f32` `atan2`, `cbrt`, `erf`, `power` are
//! within 1 ulp, `fft` within the case's tolerance, everything else is exact), or fails with `Unimplemented` naming only ops listed in
//! [`KNOWN_GAPS`] with the reason no expander handles them yet. Any other
//! outcome fails the test; nothing is skipped silently, and the counts are
//! printed.

mod legalize_common;
mod passes_common;

use hlo_ir::error::Code;
use hlo_ir::verifier::verify_module;
use hlo_ir::{HloModule, Op};
use hlo_passes::legalize::{legalize, legalize_as_far_as_possible};
use hlo_passes::{standard_pipeline, HloPass};
use legalize_common::{close_or_within, core_support};
use std::path::{Path, PathBuf};

/// What the core set lacks and no expander rewrites yet — `opcode [element
/// types]` as the legalization error spells it — with why. Every entry must
/// still be needed (the test fails on a stale one).
const KNOWN_GAPS: &[(&str, &str)] = &[];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
}

/// The case's `rtol` and `atol` (`case.json`): a `log1p` within 4 ulp can
/// still move a result that cancels (`exp(a) * b + log1p(|b|)`) by more ulps
/// of the result than that, but not beyond what the case was checked with.
fn case_tolerance(dir: &Path) -> Result<(f64, f64), String> {
    let text =
        std::fs::read_to_string(dir.join("case.json")).map_err(|e| format!("case.json: {e}"))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("case.json: {e}"))?;
    let get = |k: &str| {
        json.get(k)
            .and_then(|v| v.as_f64())
            .ok_or(format!("case.json lacks {k}"))
    };
    Ok((get("rtol")?, get("atol")?))
}

/// The [`KNOWN_GAPS`] key an unlegalized kind matches, if any.
fn gap_of(m: &hlo_passes::legalize::Unlegalized) -> Option<String> {
    let types: Vec<&str> = m.types.iter().map(|t| t.name()).collect();
    let key = format!("{} [{}]", m.opcode.name(), types.join(", "));
    KNOWN_GAPS
        .iter()
        .map(|(k, _)| *k)
        .find(|k| *k == key || *k == m.opcode.name())
        .map(str::to_string)
}

/// `module` with XLA's `TopK` custom calls as the `topk` op they stand for:
/// the evaluator has no custom-call targets (the platforms register `TopK`
/// with these semantics: largest first in total order, ties by index).
fn evaluable(module: &HloModule) -> HloModule {
    let mut out = module.clone();
    for comp in &mut out.computations {
        for instr in &mut comp.instructions {
            let Op::CustomCall(attrs) = &instr.op else {
                continue;
            };
            let k = instr
                .shape
                .tuple_shapes()
                .first()
                .and_then(|v| v.dims().last().copied());
            if let (true, Some(k)) = (attrs.target == "TopK", k) {
                instr.op = Op::TopK { k, largest: true };
            }
        }
    }
    out
}

enum Outcome {
    Equal,
    Gap(Vec<String>),
}

/// Legalizes `file`'s program after the standard pipeline (`pipeline`, as a
/// compiler runs them) or straight from the text.
fn run_case(file: &Path, pipeline: bool) -> Result<Outcome, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("read: {e}"))?;
    let original = HloModule::parse(&text).map_err(|e| format!("parse: {e}"))?;
    let mut module = original.clone();
    if pipeline {
        standard_pipeline()
            .run(&mut module)
            .map_err(|e| format!("pipeline: {e}"))?;
    }
    let legal = match legalize(&module, &core_support()) {
        Ok(m) => m,
        Err(e) if e.code() == Code::Unimplemented => {
            let mut partial = module.clone();
            let (_, missing) = legalize_as_far_as_possible(&mut partial, &core_support())
                .map_err(|e| format!("legalize_as_far_as_possible: {e}"))?;
            let unknown: Vec<String> = missing
                .iter()
                .filter(|m| gap_of(m).is_none())
                .map(|m| m.to_string())
                .collect();
            if !unknown.is_empty() || missing.is_empty() {
                return Err(format!("not a known gap: {e}"));
            }
            return Ok(Outcome::Gap(missing.iter().filter_map(gap_of).collect()));
        }
        Err(e) => return Err(format!("legalize: {e}")),
    };
    verify_module(&legal).map_err(|e| format!("invalid after legalize: {e}\n{legal}"))?;
    let args = passes_common::case_args(file.parent().ok_or("no parent")?);
    let want = passes_common::evaluate(&evaluable(&original), &args)
        .map_err(|e| format!("evaluate: {e}"))?;
    let got = passes_common::evaluate(&legal, &args)
        .map_err(|e| format!("evaluate legalized: {e}\n{legal}"))?;
    let (rtol, atol) = case_tolerance(file.parent().ok_or("no parent")?)?;
    close_or_within(&want, &got, 4.0, rtol, atol).map_err(|why| format!("{why}\n{legal}"))?;
    Ok(Outcome::Equal)
}

#[test]
fn corpus_legalizes_to_the_core_set_or_names_known_gaps() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).expect("tests/conformance exists") {
        let dir = entry.expect("directory entry").path();
        for name in ["module.hlo", "optimized.hlo"] {
            if dir.join(name).exists() {
                files.push(dir.join(name));
            }
        }
    }
    files.sort();
    assert!(
        files.len() >= 80,
        "corpus incomplete: {} files",
        files.len()
    );
    let (mut equal, mut gaps, mut failures) = (0, Vec::new(), Vec::new());
    let mut used = std::collections::BTreeSet::new();
    for f in &files {
        let name = f
            .strip_prefix(corpus_dir())
            .unwrap_or(f)
            .display()
            .to_string();
        // Without the pipeline the outcome must be the same (fusions, calls,
        // copies and bitcasts are then legalization's to remove).
        let raw = match run_case(f, false) {
            Ok(Outcome::Equal) => "equal".to_string(),
            Ok(Outcome::Gap(ops)) => ops.join("; "),
            Err(e) => format!("error: {e}"),
        };
        match run_case(f, true) {
            Ok(Outcome::Equal) => {
                equal += 1;
                if raw != "equal" {
                    failures.push(format!(
                        "{name}: legal after the pipeline, not without: {raw}"
                    ));
                }
            }
            Ok(Outcome::Gap(ops)) => {
                gaps.push(format!("{name}: {}", ops.join("; ")));
                if raw == "equal" || raw.starts_with("error") {
                    failures.push(format!(
                        "{name}: a gap after the pipeline, without it: {raw}"
                    ));
                }
                used.extend(ops);
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    println!(
        "{equal} of {} programs legalize and evaluate equal",
        files.len()
    );
    for g in &gaps {
        println!("known gap: {g}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let stale: Vec<&str> = KNOWN_GAPS
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !used.contains(*k))
        .collect();
    assert!(
        stale.is_empty(),
        "known gaps no corpus program has any more: {stale:?}"
    );
    assert_eq!(equal + gaps.len(), files.len());
    // Raise this as expanders land; it guards against silent regressions.
    assert!(equal >= MIN_EQUAL, "only {equal} programs legalize");
}

const MIN_EQUAL: usize = 86;
