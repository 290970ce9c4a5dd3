//! Times the standard HLO pipeline on each file given (median of 11 runs, each
//! on a fresh copy of the parsed module), with the slowest passes.
//! `cargo run --release -p platform-api --example passes_time -- FILES...`
use hlo_ir::HloModule;
use hlo_passes::{standard_pipeline, HloPass};
use std::time::Instant;

fn main() -> Result<(), hlo_ir::Error> {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path)?;
        let start = Instant::now();
        let module = HloModule::parse(&text)?;
        let parse_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::new();
        let mut last = None;
        // Per pass name, its smallest total over the runs (the machine is shared).
        let mut best: Vec<(String, f64)> = Vec::new();
        for _ in 0..11 {
            let mut m = module.clone();
            let mut pipeline = standard_pipeline();
            pipeline.verify_after_each_pass(false);
            let start = Instant::now();
            pipeline.run(&mut m)?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
            for (name, d) in pipeline.time_per_pass() {
                let ms = d.as_secs_f64() * 1e3;
                match best.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, b)) => *b = b.min(ms),
                    None => best.push((name, ms)),
                }
            }
            last = Some((pipeline, m));
        }
        times.sort_by(f64::total_cmp);
        let (_, m) = last.expect("ran at least once");
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> = best
            .iter()
            .take(4)
            .map(|(name, ms)| format!("{name} {ms:.3}"))
            .collect();
        let count = |m: &HloModule| {
            m.computations
                .iter()
                .map(|c| c.instructions.len())
                .sum::<usize>()
        };
        println!(
            "{path}: parse {parse_ms:.2} ms, pipeline median {:.3} ms (min {:.3}), {} -> {} instructions; slowest passes (best run): {}",
            times[times.len() / 2],
            times[0],
            count(&module),
            count(&m),
            top.join(", ")
        );
    }
    Ok(())
}
