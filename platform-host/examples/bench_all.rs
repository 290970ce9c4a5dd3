//! Times every benchmark program (`shared/bench/*.hlo`) on the Host platform.
//!
//! `cargo run --release -p platform-host --example bench_all [NAME...]`
//!
//! Inputs are drawn from a seeded generator per each program's `.json` spec
//! (floats uniform in `[lo, hi)`, integers uniform in `[lo, hi)`). Each program
//! is compiled once (timed), run 3 times to warm up, then 10 times; the median
//! and minimum execution times are printed. Times cover the execution on
//! device buffers (arguments already transferred), waiting for completion.
//! The bench directory is `$HOST_BENCH_DIR`, else `../shared/bench` next to
//! the repository (or its parent). With `HOST_PROFILE` set, one more run
//! prints the time of every thunk.

use platform_api::{ElementType, Literal, Shape};
use platform_host::runner::HostRunner;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A small, fast, seeded generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn bench_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("HOST_BENCH_DIR") {
        return Some(PathBuf::from(dir));
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../../shared/bench"),
        manifest.join("../../../shared/bench"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

fn make_arg(spec: &serde_json::Value, rng: &mut Rng) -> Result<Literal, String> {
    let dims: Vec<usize> = spec["shape"]
        .as_array()
        .ok_or("shape")?
        .iter()
        .map(|d| d.as_u64().unwrap_or(0) as usize)
        .collect();
    let n: usize = dims.iter().product();
    let lo = spec["lo"].as_f64().unwrap_or(0.0);
    let hi = spec["hi"].as_f64().unwrap_or(1.0);
    let dtype = spec["dtype"].as_str().ok_or("dtype")?;
    let ints = |rng: &mut Rng| -> Vec<i64> {
        let span = (hi - lo).max(1.0) as u64;
        (0..n)
            .map(|_| lo as i64 + (rng.next() % span) as i64)
            .collect()
    };
    let lit = match dtype {
        "float32" => {
            let v: Vec<f32> = (0..n)
                .map(|_| (lo + (hi - lo) * rng.unit()) as f32)
                .collect();
            Literal::from_slice(&dims, &v)
        }
        "float64" => {
            let v: Vec<f64> = (0..n).map(|_| lo + (hi - lo) * rng.unit()).collect();
            Literal::from_slice(&dims, &v)
        }
        "int32" => Literal::from_slice(
            &dims,
            &ints(rng).into_iter().map(|v| v as i32).collect::<Vec<_>>(),
        ),
        "int64" => Literal::from_slice(&dims, &ints(rng)),
        "uint32" => Literal::from_slice(
            &dims,
            &ints(rng).into_iter().map(|v| v as u32).collect::<Vec<_>>(),
        ),
        "bool" => {
            let v: Vec<bool> = (0..n).map(|_| rng.next() & 1 == 1).collect();
            Literal::from_bools(&dims, &v)
        }
        other => return Err(format!("dtype {other} not supported by the bench driver")),
    };
    let lit = lit.map_err(|e| e.to_string())?;
    debug_assert_eq!(
        lit.shape(),
        &Shape::array(lit.element_type().unwrap_or(ElementType::F32), dims)
    );
    Ok(lit)
}

fn main() {
    let Some(dir) = bench_dir() else {
        eprintln!("no bench directory found; set HOST_BENCH_DIR");
        std::process::exit(1);
    };
    let filter: Vec<String> = std::env::args().skip(1).collect();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("bench directory")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".hlo"))
                .map(str::to_string)
        })
        .filter(|n| filter.is_empty() || filter.contains(n))
        .collect();
    names.sort();
    println!(
        "{:<32} {:>11} {:>11} {:>11}",
        "program", "compile_ms", "median_ms", "min_ms"
    );
    for name in names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.hlo"))).expect("hlo");
        let spec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("json"),
        )
        .expect("json");
        let mut rng = Rng(0x5EED);
        let args: Result<Vec<Literal>, String> = spec["args"]
            .as_array()
            .map(|a| a.iter().map(|s| make_arg(s, &mut rng)).collect())
            .unwrap_or_else(|| Ok(Vec::new()));
        let args = match args {
            Ok(a) => a,
            Err(e) => {
                println!("{name:<32} skipped: {e}");
                continue;
            }
        };
        let t0 = Instant::now();
        let runner = match HostRunner::compile(&text) {
            Ok(r) => r,
            Err(e) => {
                println!("{name:<32} compile failed: {e}");
                continue;
            }
        };
        let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
        let buffers = runner.to_device(&args).expect("transfer");
        let mut failed = None;
        for _ in 0..3 {
            if let Err(e) = runner.run_buffers(&buffers) {
                failed = Some(e);
                break;
            }
        }
        if let Some(e) = failed {
            println!("{name:<32} run failed: {e}");
            continue;
        }
        let mut times: Vec<f64> = (0..10)
            .map(|_| {
                let t = Instant::now();
                let out = runner.run_buffers(&buffers).expect("run");
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(out);
                ms
            })
            .collect();
        times.sort_by(|a, b| a.total_cmp(b));
        if std::env::var("HOST_PROFILE").is_ok() {
            let sink = std::sync::Arc::new(platform_api::ProfileSink::new());
            runner
                .run_buffers_with(&buffers, Some(sink.clone()))
                .expect("run");
            for e in sink.events() {
                println!(
                    "    {:>9.3} ms  {:<20} {}",
                    e.duration_us / 1e3,
                    e.category,
                    e.name
                );
            }
        }
        println!(
            "{name:<32} {compile_ms:>11.1} {:>11.2} {:>11.2}",
            (times[4] + times[5]) / 2.0,
            times[0]
        );
    }
}
