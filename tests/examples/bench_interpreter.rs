//! Runs every program of the benchmark folder (`shared/bench/`) on the
//! interpreter with seeded random inputs drawn as each program's `.json` says,
//! and prints how long each execution takes.
//!
//! ```text
//! cargo run --release -p tests --example bench_interpreter [BENCH_DIR] [NAME_FILTER]
//! ```
//! `BENCH_DIR` defaults to `../shared/bench` beside the repository. The goal is
//! that every program finishes within 60 s in release mode. With `BENCH_PROFILE`
//! set, the slowest instructions of each run are listed too.

use platform_api::registry;
use platform_api::{
    CompileOptions, ElementType, Error, HloModule, Literal, ProfileSink, Result, RunOptions, Shape,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use platform_interpreter as _;

/// SplitMix64: a tiny seeded generator, enough for benchmark inputs.
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

fn element_type(dtype: &str) -> Result<ElementType> {
    Ok(match dtype {
        "float32" => ElementType::F32,
        "float64" => ElementType::F64,
        "float16" => ElementType::F16,
        "int32" => ElementType::S32,
        "int64" => ElementType::S64,
        "uint32" => ElementType::U32,
        "uint8" => ElementType::U8,
        "int8" => ElementType::S8,
        "bool" => ElementType::Pred,
        other => {
            return Err(Error::invalid_argument(format!(
                "unsupported dtype {other}"
            )))
        }
    })
}

/// A random argument as the spec describes: uniform in `[lo, hi)`.
fn random_arg(spec: &serde_json::Value, rng: &mut Rng) -> Result<Literal> {
    let ty = element_type(spec["dtype"].as_str().unwrap_or(""))?;
    let dims: Vec<usize> = spec["shape"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d.as_u64())
                .map(|d| d as usize)
                .collect()
        })
        .unwrap_or_default();
    let lo = spec["lo"].as_f64().unwrap_or(0.0);
    let hi = spec["hi"].as_f64().unwrap_or(1.0);
    let n: usize = dims.iter().product();
    let mut lit = Literal::zeros(&Shape::array(ty, dims));
    let size = ty.byte_size();
    let bytes = lit.bytes_mut()?;
    for i in 0..n {
        let u = rng.unit();
        let slot = &mut bytes[i * size..(i + 1) * size];
        match ty {
            ElementType::F32 => slot.copy_from_slice(&((lo + (hi - lo) * u) as f32).to_le_bytes()),
            ElementType::F64 => slot.copy_from_slice(&(lo + (hi - lo) * u).to_le_bytes()),
            ElementType::F16 => {
                slot.copy_from_slice(&half::f16::from_f64(lo + (hi - lo) * u).to_le_bytes())
            }
            ElementType::Pred => slot[0] = (u < 0.5) as u8,
            _ => {
                let v = (lo + ((hi - lo) * u).floor()) as i64;
                slot.copy_from_slice(&v.to_le_bytes()[..size]);
            }
        }
    }
    Ok(lit)
}

fn run(path: &Path) -> Result<(f64, f64)> {
    let text = std::fs::read_to_string(path)?;
    let spec_text = std::fs::read_to_string(path.with_extension("json"))?;
    let spec: serde_json::Value =
        serde_json::from_str(&spec_text).map_err(|e| Error::invalid_argument(e.to_string()))?;
    let mut rng = Rng(42);
    let args = spec["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| random_arg(s, &mut rng))
                .collect::<Result<Vec<_>>>()
        })
        .unwrap_or_else(|| Ok(Vec::new()))?;
    let platform = registry::platform("Interpreter")?;
    let executor = platform.executor(0)?;
    let compiler = registry::compiler(platform.id())?;
    let transfer = registry::transfer_manager(platform.id())?;
    let start = Instant::now();
    let exe = compiler.compile(
        HloModule::parse(&text)?,
        &executor,
        &CompileOptions::default(),
    )?;
    let compile = start.elapsed().as_secs_f64();
    let stream = executor.clone().create_stream()?;
    let buffers = args
        .iter()
        .map(|a| transfer.literal_to_device(&stream, a))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = buffers.iter().collect();
    let mut options = RunOptions::new(stream.clone());
    let profile = std::env::var_os("BENCH_PROFILE").map(|_| Arc::new(ProfileSink::new()));
    options.profile = profile.clone();
    let start = Instant::now();
    let result = exe.execute_on_stream(&options, &refs)?;
    let execute = start.elapsed().as_secs_f64();
    drop(result);
    if let Some(sink) = profile {
        // The slowest instructions (nested ones included), for finding hot spots.
        let mut events = sink.events();
        events.sort_by(|a, b| b.duration_us.total_cmp(&a.duration_us));
        for e in events.iter().take(8) {
            eprintln!(
                "    {:>10.1} ms  {} ({})",
                e.duration_us / 1000.0,
                e.name,
                e.category
            );
        }
    }
    Ok((compile, execute))
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let dir = argv
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench"));
    let filter = argv.next().unwrap_or_default();
    let mut programs: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "hlo"))
            .filter(|p| p.to_string_lossy().contains(&filter))
            .collect(),
        Err(e) => {
            eprintln!("cannot read {}: {e}", dir.display());
            std::process::exit(2);
        }
    };
    programs.sort();
    println!(
        "{:<34} {:>10} {:>10}  status",
        "program", "compile s", "run s"
    );
    for p in programs {
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match run(&p) {
            Ok((c, r)) => println!(
                "{name:<34} {c:>10.3} {r:>10.3}  {}",
                if r <= 60.0 { "ok" } else { "over 60 s" }
            ),
            Err(e) => println!(
                "{name:<34} {:>10} {:>10}  {}",
                "-",
                "-",
                e.to_string().chars().take(150).collect::<String>()
            ),
        }
    }
}
