//! The standard pipeline over every real program: the conformance corpus
//! (`module.hlo` and `optimized.hlo`) and the benchmark programs in
//! `../shared/bench` (or `$HLO_BENCH_DIR`; skipped with a note when absent).
//!
//! Each program must still verify after every pass, keep its entry signature
//! (element types and dimensions), and end with no `call`, `bitcast`, `copy` or
//! layout left. On the conformance inputs (`argN.npy`), each program gives
//! bit-identical results on the reference interpreter before and after the
//! pipeline.

mod passes_common;

use hlo_ir::verifier::verify_module;
use hlo_ir::{HloModule, Op};
use hlo_ir::{Literal, Shape};
use hlo_passes::{standard_pipeline, HloPass};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bench_dir() -> PathBuf {
    match std::env::var_os("HLO_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => repo_root().join("../shared/bench"),
    }
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let root = repo_root().join("tests/conformance");
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
    files
}

fn has_layout(shape: &Shape) -> bool {
    match shape {
        Shape::Array(a) => a.layout.is_some(),
        Shape::Tuple(t) => t.iter().any(has_layout),
        Shape::Token => false,
    }
}

fn pipelined(file: &Path) -> Result<(HloModule, HloModule), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("read: {e}"))?;
    let module = HloModule::parse(&text).map_err(|e| format!("parse: {e}"))?;
    let mut out = module.clone();
    let mut pipeline = standard_pipeline();
    pipeline.verify_after_each_pass(true);
    pipeline.run(&mut out).map_err(|e| e.to_string())?;
    Ok((module, out))
}

#[test]
fn standard_pipeline_keeps_corpus_results_bit_identical() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut not_evaluable = Vec::new();
    let mut contraction_differs = Vec::new();
    for file in corpus_files() {
        let args = passes_common::case_args(file.parent().expect("case directory"));
        let (before, after) = match pipelined(&file) {
            Ok(pair) => pair,
            Err(e) => {
                failures.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        let want = match passes_common::evaluate(&before, &args) {
            Ok(v) => v,
            Err(e) => {
                not_evaluable.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        // Informational: with XLA CPU's contraction modelled, which multiplies
        // fuse into adds depends on the graph the passes reshaped.
        if let (Ok(x), Ok(y)) = (
            passes_common::evaluate_with(&before, &args, true),
            passes_common::evaluate_with(&after, &args, true),
        ) {
            if let Err(why) = passes_common::same_bits(&x, &y) {
                contraction_differs.push(format!(
                    "note: {} differs under fp_contract=xla ({why})",
                    file.display()
                ));
            }
        }
        match passes_common::evaluate(&after, &args) {
            Ok(got) => match passes_common::same_bits(&want, &got) {
                Ok(()) => compared += 1,
                Err(why) => failures.push(format!("{}: {why}\n{after}", file.display())),
            },
            Err(e) => failures.push(format!(
                "{}: evaluates before the pipeline but not after: {e}",
                file.display()
            )),
        }
    }
    for note in &not_evaluable {
        println!("not evaluable on the interpreter (compared structurally only): {note}");
    }
    for note in &contraction_differs {
        println!("{note}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        compared >= 80,
        "only {compared} programs compared:\n{}",
        not_evaluable.join("\n")
    );
}

/// Runs the pipeline (verifying after each pass) and checks the end state;
/// returns the number of entry instructions before and after and the time.
fn check(file: &Path) -> Result<(usize, usize, f64), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("read: {e}"))?;
    let mut module = HloModule::parse(&text).map_err(|e| format!("parse: {e}"))?;
    verify_module(&module).map_err(|e| format!("input does not verify: {e}"))?;
    let before_sig = module.entry_program_shape();
    let before = module.entry().instructions.len();
    let mut pipeline = standard_pipeline();
    pipeline.verify_after_each_pass(true);
    let start = Instant::now();
    pipeline.run(&mut module).map_err(|e| e.to_string())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    verify_module(&module).map_err(|e| format!("result does not verify: {e}\n{module}"))?;
    let after_sig = module.entry_program_shape();
    let same_sig = before_sig.parameters.len() == after_sig.parameters.len()
        && before_sig
            .parameters
            .iter()
            .zip(&after_sig.parameters)
            .all(|(a, b)| a.compatible(b))
        && before_sig.result.compatible(&after_sig.result);
    if !same_sig {
        return Err(format!(
            "entry signature changed from {before_sig} to {after_sig}"
        ));
    }
    for comp in &module.computations {
        for instr in &comp.instructions {
            if matches!(instr.op, Op::Call { .. } | Op::Bitcast | Op::Copy) {
                return Err(format!(
                    "%{} ({}) is left\n{module}",
                    instr.name,
                    instr.opcode()
                ));
            }
            if has_layout(&instr.shape) {
                return Err(format!("%{} keeps a layout: {}", instr.name, instr.shape));
            }
        }
    }
    Ok((before, module.entry().instructions.len(), ms))
}

#[test]
fn standard_pipeline_keeps_the_corpus_valid() {
    let files = corpus_files();
    assert!(
        files.len() >= 80,
        "corpus incomplete: {} files",
        files.len()
    );
    let mut failures = Vec::new();
    for f in &files {
        match check(f) {
            Ok((before, after, ms)) => {
                println!(
                    "{}: {before} -> {after} entry instructions, {ms:.2} ms",
                    f.display()
                )
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn standard_pipeline_keeps_the_bench_programs_valid() {
    let dir = bench_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "note: {} does not exist; benchmark programs not checked",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        match check(f) {
            Ok((before, after, ms)) => {
                println!(
                    "{}: {before} -> {after} entry instructions, {ms:.2} ms",
                    f.display()
                )
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Arguments for a benchmark program from its `NAME.json` (uniform values in
/// `[lo, hi)`; integers in `[lo, hi)`), from a fixed seed.
fn bench_args(spec: &Path) -> Vec<Literal> {
    let text = std::fs::read_to_string(spec).expect("readable spec");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    let mut rng = passes_common::Rng(0x1234_5678_9ABC_DEF1);
    let mut args = Vec::new();
    for arg in json["args"].as_array().expect("args") {
        let dims: Vec<usize> = arg["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| d.as_u64().expect("dimension") as usize)
            .collect();
        let (lo, hi) = (
            arg["lo"].as_f64().unwrap_or(0.0),
            arg["hi"].as_f64().unwrap_or(1.0),
        );
        let n: usize = dims.iter().product();
        let mut unit = || (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let lit = match arg["dtype"].as_str().expect("dtype") {
            "float32" => Literal::from_slice(
                &dims,
                &(0..n)
                    .map(|_| (lo + (hi - lo) * unit()) as f32)
                    .collect::<Vec<_>>(),
            ),
            "int32" => Literal::from_slice(
                &dims,
                &(0..n)
                    .map(|_| (lo + ((hi - lo) * unit()).floor()) as i32)
                    .collect::<Vec<_>>(),
            ),
            other => panic!("{}: dtype {other} not handled", spec.display()),
        };
        args.push(lit.expect("sizes agree"));
    }
    args
}

/// Slow in debug builds: `cargo test --release -p hlo-passes --test
/// passes_corpus -- --ignored`.
#[test]
#[ignore]
fn standard_pipeline_keeps_bench_results_bit_identical() {
    let dir = bench_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "note: {} does not exist; benchmark programs not checked",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for file in files {
        let args = bench_args(&file.with_extension("json"));
        let (before, after) =
            pipelined(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let start = Instant::now();
        let want = match passes_common::evaluate(&before, &args) {
            Ok(v) => v,
            Err(e) => {
                println!("{}: not evaluable: {e}", file.display());
                continue;
            }
        };
        let got = passes_common::evaluate(&after, &args);
        match got
            .map_err(|e| e.to_string())
            .and_then(|g| passes_common::same_bits(&want, &g))
        {
            Ok(()) => println!(
                "{}: identical ({:.1} s)",
                file.display(),
                start.elapsed().as_secs_f64()
            ),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
