//! Runs the standard HLO pipeline on a file and prints the result and pass times.
//! `cargo run -p platform-api --example passes_run -- FILE.hlo`
use hlo_ir::HloModule;
use hlo_passes::{standard_pipeline, HloPass};

fn main() -> Result<(), hlo_ir::Error> {
    let path = std::env::args().nth(1).expect("usage: passes_run FILE.hlo");
    let text = std::fs::read_to_string(&path)?;
    let mut module = HloModule::parse(&text)?;
    let mut pipeline = standard_pipeline();
    pipeline.run(&mut module)?;
    println!("{module}");
    for run in pipeline.log() {
        eprintln!(
            "{:40} changed={:5} {:?}",
            run.pass, run.changed, run.elapsed
        );
    }
    Ok(())
}
