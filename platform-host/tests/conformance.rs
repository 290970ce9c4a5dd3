//! Every case of the conformance corpus (`tests/conformance/`), both its
//! `module.hlo` and its `optimized.hlo`, runs on the Host platform and must
//! match the expected `out*.npy` as the corpus README says (integers and bools
//! exactly; floats within the case's `rtol`/`atol`, NaN where NaN, same
//! infinities). The same harness runs this crate's own cases
//! (`platform-host/tests/cases/`, made by `scripts/gen_host_cases.py` with
//! outputs from XLA CPU) for ops and corner cases the corpus does not reach.
//!
//! Known gaps are listed with the reason; a listed case must still fail (so
//! the list cannot go stale silently), and any other failure fails the test.

use platform_api::{ElementType, Literal, Shape};
use platform_host::runner::HostRunner;
use std::path::{Path, PathBuf};

/// (case, file, why it is expected to fail).
const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

/// Reads a little-endian, C-order `.npy` file (version 1 or 2).
fn read_npy(path: &Path) -> Result<Literal, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(format!("{}: not a .npy file", path.display()));
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
    };
    let header =
        std::str::from_utf8(&bytes[start..start + header_len]).map_err(|e| e.to_string())?;
    let descr = header
        .split("'descr':")
        .nth(1)
        .and_then(|s| s.split('\'').nth(1))
        .ok_or("no descr")?;
    if header.contains("'fortran_order': True") {
        return Err("fortran order".into());
    }
    let shape_text = header
        .split("'shape':")
        .nth(1)
        .and_then(|s| s.split('(').nth(1))
        .and_then(|s| s.split(')').next())
        .ok_or("no shape")?;
    let dims: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let ty = match descr {
        "<f4" => ElementType::F32,
        "<f8" => ElementType::F64,
        "<f2" => ElementType::F16,
        "|i1" => ElementType::S8,
        "<i2" => ElementType::S16,
        "<i4" => ElementType::S32,
        "<i8" => ElementType::S64,
        "|u1" => ElementType::U8,
        "<u2" => ElementType::U16,
        "<u4" => ElementType::U32,
        "<u8" => ElementType::U64,
        "|b1" => ElementType::Pred,
        "<c8" => ElementType::C64,
        "<c16" => ElementType::C128,
        other => return Err(format!("dtype {other}")),
    };
    Literal::from_bytes(Shape::array(ty, dims), &bytes[start + header_len..])
        .map_err(|e| e.to_string())
}

fn as_f64(lit: &Literal) -> Vec<(f64, f64)> {
    let n = lit.element_count();
    (0..n)
        .map(|i| match lit.get(i).unwrap() {
            platform_api::Scalar::C64(c) => (c.re as f64, c.im as f64),
            platform_api::Scalar::C128(c) => (c.re, c.im),
            s => (s.to_f64_lossy(), 0.0),
        })
        .collect()
}

fn compare(got: &Literal, want: &Literal, rtol: f64, atol: f64) -> Result<(), String> {
    if got.shape().without_layout() != want.shape().without_layout() {
        return Err(format!(
            "shape {} != expected {}",
            got.shape(),
            want.shape()
        ));
    }
    let ty = want.element_type().ok_or("not an array")?;
    if !ty.is_floating_or_complex() {
        if got.bytes().map_err(|e| e.to_string())? != want.bytes().map_err(|e| e.to_string())? {
            let g = got.scalars().unwrap();
            let w = want.scalars().unwrap();
            let first = g.iter().zip(&w).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!(
                "element {first}: got {} want {}",
                g[first], w[first]
            ));
        }
        return Ok(());
    }
    let close = |g: f64, w: f64| -> bool {
        if w.is_nan() {
            return g.is_nan();
        }
        if w.is_infinite() {
            return g == w;
        }
        (g - w).abs() <= atol + rtol * w.abs()
    };
    for (i, (g, w)) in as_f64(got).iter().zip(as_f64(want)).enumerate() {
        if !close(g.0, w.0) || !close(g.1, w.1) {
            return Err(format!("element {i}: got {g:?} want {w:?}"));
        }
    }
    Ok(())
}

fn run_case(dir: &Path, file: &str) -> Result<(), String> {
    let case: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("case.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let rtol = case["rtol"].as_f64().unwrap_or(0.0);
    let atol = case["atol"].as_f64().unwrap_or(0.0);
    let text = std::fs::read_to_string(dir.join(file)).map_err(|e| e.to_string())?;
    let mut args = Vec::new();
    for i in 0.. {
        let p = dir.join(format!("arg{i}.npy"));
        if !p.exists() {
            break;
        }
        args.push(read_npy(&p)?);
    }
    let runner = HostRunner::compile(&text).map_err(|e| format!("compile: {e}"))?;
    let result = runner.run(&args).map_err(|e| format!("run: {e}"))?;
    let leaves = result.flatten_leaves();
    for (i, got) in leaves.iter().enumerate() {
        let want = read_npy(&dir.join(format!("out{i}.npy")))?;
        compare(got, &want, rtol, atol).map_err(|e| format!("out{i}: {e}"))?;
    }
    if dir.join(format!("out{}.npy", leaves.len())).exists() {
        return Err(format!("only {} outputs produced", leaves.len()));
    }
    Ok(())
}

/// Known gaps among this crate's own cases.
const HOST_CASE_GAPS: &[(&str, &str, &str)] = &[];

#[test]
fn conformance_corpus_on_host() {
    run_all(&corpus_dir(), KNOWN_GAPS);
}

#[test]
fn host_cases_on_host() {
    run_all(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases"),
        HOST_CASE_GAPS,
    );
}

fn run_all(root: &Path, gaps: &[(&str, &str, &str)]) {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("case directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("case.json").exists())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no conformance cases found");
    let mut failures = Vec::new();
    let mut passed = 0;
    for dir in &cases {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        for file in ["module.hlo", "optimized.hlo"] {
            if !dir.join(file).exists() {
                continue;
            }
            let gap = gaps.iter().find(|(c, f, _)| *c == name && *f == file);
            match (run_case(dir, file), gap) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some((_, _, why))) => failures.push(format!(
                    "{name}/{file} passes but is listed as a known gap ({why}); remove it from KNOWN_GAPS"
                )),
                (Err(e), None) => failures.push(format!("{name}/{file}: {e}")),
                (Err(_), Some(_)) => {}
            }
        }
    }
    eprintln!(
        "{passed} programs of {} passed on Host; {} known gaps",
        root.display(),
        gaps.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
