//! StableHLO's own test programs (`tests/stablehlo_testdata/`, a selection
//! from openxla/stablehlo's `stablehlo/testdata`, made by
//! `scripts/vendor_stablehlo_testdata.py`), read natively and run on the
//! Interpreter and the Host, each in both forms: its text (`.mlir`) and the
//! portable artifact jaxlib serializes from it (`.mlirbc`, by
//! `scripts/gen_stablehlo_bytecode.py`, CHLO ops decomposed as jaxlib
//! decomposes them for a PJRT plugin).
//!
//! Each program computes something from embedded inputs and compares it with
//! embedded expected values through `check.eq` / `check.expect_*` custom
//! calls. The reader turns each check into a pair of outputs (actual,
//! expected) and this test judges the pairs: integers and booleans exactly,
//! floating point by class (NaN where NaN, the same infinity) and otherwise
//! within a relative 1e-4 for f32/f64/complex, 2^-9 for f16 and 2^-6 for bf16
//! (two units of the type's last place), the values having been computed by
//! XLA in the program's own types.
//!
//! Every program must pass, or fail to read for one of the reader's declared
//! gaps (`hlo_stablehlo::KNOWN_GAPS`), or be listed in [`KNOWN`] with why.
//! `STABLEHLO_TESTDATA_VERBOSE=1` prints every program's status;
//! `STABLEHLO_TESTDATA_DIR=DIR` runs another folder of such programs (a whole
//! `stablehlo/testdata` checkout: about 2,300 programs, 30 s).

use std::path::{Path, PathBuf};

use platform_api::{CompileOptions, ElementType, Literal, Scalar};
use service::LocalClient;

use platform_host as _;
use platform_interpreter as _;

/// Programs known to fail on a platform, with why.
const KNOWN: &[(&str, &str, &str)] = &[];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("stablehlo_testdata")
}

fn programs() -> Vec<PathBuf> {
    let dir = std::env::var_os("STABLEHLO_TESTDATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(corpus);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "mlir" || x == "mlirbc"))
        .collect();
    files.sort();
    files
}

/// The tolerance of a floating element type, relative to `max(1, |want|)`.
fn tolerance(ty: ElementType) -> f64 {
    match ty {
        ElementType::BF16 => 2.0 * 2f64.powi(-7),
        ElementType::F16 => 2.0 * 2f64.powi(-10),
        _ => 1e-4,
    }
}

fn close(g: f64, w: f64, tol: f64) -> bool {
    if w.is_nan() {
        return g.is_nan();
    }
    if w.is_infinite() || g.is_infinite() {
        return g == w;
    }
    (g - w).abs() <= tol * w.abs().max(1.0)
}

/// Why `got` does not pass as `want`, if it does not.
fn judge(got: &Literal, want: &Literal) -> Option<String> {
    if got.dims() != want.dims() {
        return Some(format!("shape {:?} against {:?}", got.dims(), want.dims()));
    }
    let ty = got.element_type()?;
    let (g, w) = (got.scalars().ok()?, want.scalars().ok()?);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = match (a, b) {
            (Scalar::C64(x), Scalar::C64(y)) => {
                close(x.re as f64, y.re as f64, tolerance(ty))
                    && close(x.im as f64, y.im as f64, tolerance(ty))
            }
            (Scalar::C128(x), Scalar::C128(y)) => {
                close(x.re, y.re, tolerance(ty)) && close(x.im, y.im, tolerance(ty))
            }
            _ if ty.is_float() => close(a.to_f64_lossy(), b.to_f64_lossy(), tolerance(ty)),
            _ => a == b,
        };
        if !ok {
            return Some(format!("element {i}: got {a:?}, want {b:?}"));
        }
    }
    None
}

enum Outcome {
    Pass,
    /// A gap the reader declares: its op, and why.
    Gap(&'static str, String),
    Fail(String),
}

fn run(client: &LocalClient, program: &[u8]) -> Outcome {
    let read = match hlo_stablehlo::parse_test_module_bytes(program) {
        Ok(r) => r,
        Err(e) => {
            return match hlo_stablehlo::known_gap(e.message()) {
                Some((op, why)) => Outcome::Gap(op, format!("{op}: {why}")),
                None => Outcome::Fail(format!("read: {e}")),
            }
        }
    };
    if read.checks == 0 {
        return Outcome::Fail("the program has no check".into());
    }
    let result = client
        .compile(&read.module, &CompileOptions::default())
        .and_then(|c| client.execute(&c.executable, &[]));
    let leaves = match result {
        Ok(r) => r.flatten_leaves(),
        Err(e) => return Outcome::Fail(format!("run: {e}")),
    };
    let pairs = &leaves[read.results..];
    for (k, pair) in pairs.chunks(2).enumerate() {
        if let [got, want] = pair {
            if let Some(why) = judge(got, want) {
                return Outcome::Fail(format!("check {k}: {why}"));
            }
        }
    }
    Outcome::Pass
}

#[test]
fn stablehlo_testdata_on_interpreter_and_host() {
    let files = programs();
    assert!(!files.is_empty(), "no StableHLO test programs found");
    let verbose = std::env::var_os("STABLEHLO_TESTDATA_VERBOSE").is_some();
    let mut problems = Vec::new();
    let mut met = std::collections::BTreeSet::new();
    for platform in ["Interpreter", "Host"] {
        let client = LocalClient::for_platform(Some(platform)).expect("platform");
        let (mut pass, mut gaps, mut known) = (0, 0, 0);
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let program = std::fs::read(f).unwrap();
            let listed = KNOWN
                .iter()
                .find(|(p, k, _)| *p == platform && *k == name)
                .map(|(_, _, w)| *w);
            let outcome = run(&client, &program);
            client.clear_cache();
            let line = match (&outcome, listed) {
                (Outcome::Pass, None) => {
                    pass += 1;
                    "pass".to_string()
                }
                (Outcome::Pass, Some(why)) => {
                    problems.push(format!(
                        "{platform} {name}: listed as failing ({why}) but passes"
                    ));
                    "pass (listed)".to_string()
                }
                (Outcome::Gap(op, why), _) => {
                    gaps += 1;
                    met.insert(*op);
                    format!("reader gap: {why}")
                }
                (Outcome::Fail(why), Some(listed)) => {
                    known += 1;
                    format!("known: {listed} ({why})")
                }
                (Outcome::Fail(why), None) => {
                    problems.push(format!("{platform} {name}: {why}"));
                    format!("FAIL: {why}")
                }
            };
            if verbose {
                println!("{platform:<12} {name:<90} {line}");
            }
        }
        println!(
            "{platform}: {} programs: {pass} pass, {gaps} reader gaps, {known} known failures, {} failures",
            files.len(),
            problems.iter().filter(|p| p.starts_with(platform)).count()
        );
    }
    // Between them, StableHLO's test data and the op matrix exercise every op
    // the reader declares a gap for: a declared gap that no program meets is
    // stale.
    if std::env::var_os("STABLEHLO_TESTDATA_DIR").is_none() {
        let matrix = Path::new(env!("CARGO_MANIFEST_DIR")).join("op_matrix");
        for entry in std::fs::read_dir(&matrix).expect("tests/op_matrix") {
            let path = entry.expect("readable entry").path().join("module.mlir");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if let Err(e) = hlo_stablehlo::parse_module(&text) {
                if let Some((op, _)) = hlo_stablehlo::known_gap(e.message()) {
                    met.insert(op);
                }
            }
        }
        for (op, why) in hlo_stablehlo::KNOWN_GAPS {
            if !met.contains(op) {
                problems.push(format!(
                    "the reader's declared gap {op} ({why}) matches no program"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
