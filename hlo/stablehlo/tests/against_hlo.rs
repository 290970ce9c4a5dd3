//! Every case of `tests/op_matrix` that has a `module.mlir` (the StableHLO
//! JAX printed for the same program as `module.hlo`): the module read from
//! StableHLO must compute what the module read from HLO computes, bit for
//! bit, on the case's arguments, under the reference evaluator.

use std::path::{Path, PathBuf};

use hlo_evaluator::{PreparedModule, RunContext};
use hlo_ir::{Code, HloModule, Literal};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/op_matrix")
}

fn args(dir: &Path) -> Vec<Literal> {
    let mut out = Vec::new();
    for i in 0.. {
        let p = dir.join(format!("arg{i}.npy"));
        if !p.exists() {
            break;
        }
        out.push(Literal::read_npy(&p).expect("argument"));
    }
    out
}

fn eval(m: HloModule, args: Vec<Literal>) -> Result<Literal, String> {
    let prepared = PreparedModule::new(m, true).map_err(|e| e.to_string())?;
    prepared
        .evaluate(args, &RunContext::default())
        .map_err(|e| e.to_string())
}

/// The leaves' bytes, NaN payloads included.
fn same(a: &Literal, b: &Literal) -> bool {
    if a.shape().without_layout() != b.shape().without_layout() {
        return false;
    }
    let (la, lb) = (a.clone().flatten_leaves(), b.clone().flatten_leaves());
    la.len() == lb.len()
        && la.iter().zip(&lb).all(|(x, y)| {
            x.shape().without_layout() == y.shape().without_layout()
                && x.bytes().ok() == y.bytes().ok()
        })
}

/// Cases whose two forms are known to compute differently, with why.
const KNOWN: &[(&str, &str)] = &[
    ("log_c64", COMPLEX_MATH),
    ("log1p_c64", COMPLEX_MATH),
    ("sqrt_c64", COMPLEX_MATH),
];

/// JAX's HLO text comes out of StableHLO's complex-math expander, which
/// rewrites complex `log`, `log1p` and `sqrt` into real arithmetic; the
/// reader keeps the complex op, which computes the same values within
/// rounding (the op-matrix conformance test checks them against XLA CPU's
/// outputs).
const COMPLEX_MATH: &str = "XLA expands complex log/log1p/sqrt before HLO; the reader keeps the op";

#[test]
fn op_matrix_stablehlo_agrees_with_hlo() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/op_matrix")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("module.mlir").exists())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() > 800,
        "only {} cases have module.mlir",
        dirs.len()
    );
    let (mut pass, mut unsupported, mut failures) = (0, Vec::new(), Vec::new());
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(dir.join("module.mlir")).unwrap();
        let ours = match hlo_stablehlo::parse_module(&text) {
            Ok(m) => m,
            Err(e) if e.code() == Code::Unimplemented => {
                unsupported.push(format!("{name}: {e}"));
                continue;
            }
            Err(e) => {
                failures.push(format!("{name}: read: {e}"));
                continue;
            }
        };
        let hlo_text = std::fs::read_to_string(dir.join("module.hlo")).unwrap();
        let theirs = HloModule::parse(&hlo_text).expect("module.hlo parses");
        let want = eval(theirs, args(dir));
        let got = eval(ours, args(dir));
        let known = KNOWN.iter().find(|(k, _)| *k == name).map(|(_, why)| *why);
        let agree = match (&got, &want) {
            (Ok(g), Ok(w)) => same(g, w),
            // Both refuse alike (an op XLA itself rejects on this type).
            (Err(g), Err(w)) => g.split(':').next() == w.split(':').next(),
            _ => false,
        };
        if let Some(why) = known {
            if agree {
                failures.push(format!(
                    "{name}: listed as a known difference ({why}) but agrees"
                ));
            } else {
                unsupported.push(format!("{name}: known difference: {why}"));
            }
            continue;
        }
        match (got, want) {
            _ if agree => pass += 1,
            (Ok(g), Ok(w)) => failures.push(format!(
                "{name}: differs: got {} want {}",
                g.values_text(),
                w.values_text()
            )),
            (Err(e), Ok(_)) => failures.push(format!("{name}: evaluating the StableHLO form: {e}")),
            (_, Err(e)) => failures.push(format!("{name}: evaluating module.hlo: {e}")),
        }
    }
    println!(
        "{pass} of {} cases agree; {} unsupported:",
        dirs.len(),
        unsupported.len()
    );
    for u in &unsupported {
        println!("  {u}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}
