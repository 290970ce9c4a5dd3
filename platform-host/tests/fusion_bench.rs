//! Timing of the bench programs (`../shared/bench` beside the repository, or
//! `$BENCH_DIR`) on
//! Host with fusion decisions and block evaluation, and with both off
//! (JAX's unfused program, instruction by instruction). Ignored by default; run
//!
//! ```text
//! cargo test -p platform-host --release --test suite fusion_bench:: -- --ignored --nocapture
//! ```
//!
//! `BENCH=name,name` selects programs, `FUSION_DUMP=1` prints each program
//! after the Host's passes, `BENCH_RUNS=n` sets the timed runs (median
//! reported), `BENCH_UNFUSED=0` skips the unfused runs (for profiling),
//! `BENCH_PROFILE=1` prints where the fused program's time goes, per thunk.

use platform_api::{CompileOptions, ElementType, HloModule, Literal, Shape};
use platform_host::compiler::optimize;
use platform_host::fusion::Strategy;
use platform_host::runner::HostRunner;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::rng::Rng;

fn arg(spec: &serde_json::Value, rng: &mut Rng) -> Literal {
    let dims: Vec<usize> = spec["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let (lo, hi) = (spec["lo"].as_f64().unwrap(), spec["hi"].as_f64().unwrap());
    let n: usize = dims.iter().product();
    let (ty, bytes) = match spec["dtype"].as_str().unwrap() {
        "float32" => (
            ElementType::F32,
            (0..n)
                .flat_map(|_| ((lo + (hi - lo) * rng.unit()) as f32).to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
        "int32" => (
            ElementType::S32,
            (0..n)
                .flat_map(|_| ((lo + ((hi - lo) * rng.unit()).floor()) as i32).to_le_bytes())
                .collect(),
        ),
        other => panic!("dtype {other}"),
    };
    Literal::from_bytes(Shape::array(ty, dims), &bytes).unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
#[ignore]
fn bench_programs() {
    let dir = std::env::var("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"));
    let only: Option<Vec<String>> = std::env::var("BENCH")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".hlo"))
                .map(str::to_string)
        })
        .filter(|n| only.as_ref().is_none_or(|o| o.contains(n)))
        .collect();
    names.sort();
    println!(
        "{:<30} {:>10} {:>8} {:>18} {:>18} {:>8} {:>9}",
        "program",
        "compile ms",
        "fusions",
        "fused ms med/min",
        "unfused med/min",
        "speedup",
        "max diff"
    );
    for name in names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.hlo"))).unwrap();
        let spec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let mut rng = Rng(42);
        let args: Vec<Literal> = spec["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| arg(a, &mut rng))
            .collect();
        if std::env::var("FUSION_DUMP").is_ok() {
            let m = optimize(HloModule::parse(&text).unwrap(), &CompileOptions::default()).unwrap();
            println!("{m}");
        }
        let t0 = Instant::now();
        let fused = HostRunner::compile(&text).unwrap();
        let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
        let module =
            optimize(HloModule::parse(&text).unwrap(), &CompileOptions::default()).unwrap();
        let n_fusions: usize = module
            .computations
            .iter()
            .map(|c| {
                c.instructions
                    .iter()
                    .filter(|i| matches!(i.op, platform_api::hlo::Op::Fusion { .. }))
                    .count()
            })
            .sum();
        let unfused = HostRunner::compile_with(&text, &Strategy::Unfused.options());
        let time = |runner: &HostRunner| -> (f64, f64) {
            let bufs = runner.to_device(&args).unwrap();
            for _ in 0..2 {
                runner.run_buffers(&bufs).unwrap();
            }
            let times: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    runner.run_buffers(&bufs).unwrap();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            let min = times.iter().copied().fold(f64::INFINITY, f64::min);
            (median(times), min)
        };
        let fused_ms = time(&fused);
        if std::env::var("BENCH_PROFILE").is_ok() {
            let bufs = fused.to_device(&args).unwrap();
            let sink = std::sync::Arc::new(platform_api::ProfileSink::new());
            for _ in 0..runs {
                fused.run_buffers_with(&bufs, Some(sink.clone())).unwrap();
            }
            let mut by: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
            for e in sink.events() {
                let slot = by
                    .entry(format!("{} ({})", e.name, e.category))
                    .or_default();
                slot.0 += e.duration_us / runs as f64;
                slot.1 += 1;
            }
            let mut rows: Vec<_> = by.into_iter().collect();
            rows.sort_by(|a, b| b.1 .0.partial_cmp(&a.1 .0).unwrap());
            for (name, (us, count)) in rows.iter().take(12) {
                println!("    {:>10.1} us/run  {:>5} calls  {name}", us, count / runs);
            }
        }
        let skip_unfused = std::env::var("BENCH_UNFUSED").is_ok_and(|v| v == "0");
        let base_ms = match &unfused {
            _ if skip_unfused => (f64::NAN, f64::NAN),
            Ok(runner) => time(runner),
            Err(e) => {
                println!("{name}: unfused compile failed: {e}");
                (f64::NAN, f64::NAN)
            }
        };
        // The fused and unfused results agree (up to reassociated sums and
        // the transcendental kernels' ULPs).
        let mut max_err = 0f64;
        if let (false, Ok(unfused)) = (skip_unfused, &unfused) {
            let a = fused.run(&args).unwrap().flatten_leaves();
            let b = unfused.run(&args).unwrap().flatten_leaves();
            for (x, y) in a.iter().zip(&b) {
                for i in 0..x.element_count() {
                    let (u, v) = (
                        x.get(i).unwrap().to_f64_lossy(),
                        y.get(i).unwrap().to_f64_lossy(),
                    );
                    if !(u.is_nan() && v.is_nan()) && u != v {
                        max_err = max_err.max((u - v).abs() / (1.0 + v.abs()));
                    }
                }
            }
        }
        println!(
            "{:<30} {:>10.1} {:>8} {:>9.2}/{:<8.2} {:>9.2}/{:<8.2} {:>8.2} {:>9.1e}",
            name,
            compile_ms,
            n_fusions,
            fused_ms.0,
            fused_ms.1,
            base_ms.0,
            base_ms.1,
            base_ms.0 / fused_ms.0,
            max_err
        );
    }
}
