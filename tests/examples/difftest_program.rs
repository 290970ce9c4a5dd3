//! Prints the random program of a differential-test seed, its arguments and
//! the tolerance of each output, and writes it where `hlorun` can run it.
//!
//! ```sh
//! cargo run -p tests --example difftest_program -- 1556 [OUT_DIR]
//! ```

use tests::differential::write_case;
use tests::random_program::generate;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(seed) = args.next().and_then(|s| s.parse::<u64>().ok()) else {
        eprintln!("usage: difftest_program SEED [OUT_DIR]");
        std::process::exit(2);
    };
    let program = match generate(seed) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("seed {seed}: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", program.module);
    for (i, a) in program.args.iter().enumerate() {
        println!("arg{i} = {a}");
    }
    for (i, c) in program.outputs.iter().enumerate() {
        println!("output {i}: atol {:e}", c.atol);
    }
    println!("features: {}", program.features.join(", "));
    if let Some(dir) = args.next() {
        let atol = program.outputs.iter().map(|c| c.atol).fold(0.0, f64::max);
        match write_case(
            std::path::Path::new(&dir),
            "Host",
            &program.module,
            &program.args,
            atol,
        ) {
            Ok(cmd) => println!("{cmd}"),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
}
