//! Serialized `jax.export` modules (`tests/stablehlo_bytecode/jax_export/`,
//! written by `scripts/gen_jax_export_cases.py`): read natively (the
//! flatbuffer, its portable artifact, its calling convention), run on every
//! available platform with the exported function's arguments (those the
//! module kept, as its calling convention says), and checked against
//! `jax.jit` on XLA CPU.

use std::path::{Path, PathBuf};

use platform_api::Literal;
use service::program::exported_arguments;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("stablehlo_bytecode/jax_export");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("module.jaxexport").exists())
        .collect();
    out.sort();
    out
}

fn numbered(dir: &Path, prefix: &str) -> Vec<Literal> {
    (0..)
        .map(|i| dir.join(format!("{prefix}{i}.npy")))
        .take_while(|p| p.exists())
        .map(|p| Literal::read_npy(&p).expect("npy"))
        .collect()
}

#[test]
fn jax_export_modules_run_as_jax_ran_them() {
    let cases = cases();
    assert!(cases.len() >= 8, "only {} jax.export cases", cases.len());
    let mut problems = Vec::new();
    for platform in tests::available_platforms() {
        for dir in &cases {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            let bytes = std::fs::read(dir.join("module.jaxexport")).expect("module");
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap())
                    .unwrap();
            let (rtol, atol) = (
                json["rtol"].as_f64().unwrap(),
                json["atol"].as_f64().unwrap(),
            );
            let run = service::program::parse_program_bytes(&bytes).and_then(|module| {
                let args = exported_arguments(&bytes, numbered(dir, "arg"))?;
                tests::run_program(platform, module, &args)
            });
            let outs = match run {
                Ok(o) => o,
                Err(e) if tests::declined(platform, &e.to_string()) => continue,
                Err(e) => {
                    problems.push(format!("{platform} {name}: {e}"));
                    continue;
                }
            };
            let want = numbered(dir, "out");
            if outs.len() != want.len() {
                problems.push(format!(
                    "{platform} {name}: {} results, JAX gave {}",
                    outs.len(),
                    want.len()
                ));
                continue;
            }
            for (i, (g, w)) in outs.iter().zip(&want).enumerate() {
                if let Err(e) = tests::compare(g, w, rtol, atol) {
                    problems.push(format!("{platform} {name} result {i}: {e}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
