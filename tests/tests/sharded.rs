//! JAX's sharded programs (tests/sharded, written by its gen_sharded_cases.py)
//! run on global arrays on every CPU platform, in one process, and match JAX's
//! own results: the partitioned program (`optimized.hlo`, one program per
//! device with collectives) cut by its parameters' shardings, run on all its
//! devices, and assembled by the result shardings JAX's executable reported.
//!
//! These check the collectives' group modes end to end: a wrong group (the
//! 60 s wait the cross-partition all-to-all once had, a wrong rank order in an
//! all-gather) shows as a wrong global result or a timeout.

use platform_api::hlo::sharding::HloSharding;
use platform_api::{CompileOptions, HloModule, Literal, PlatformOptions};
use service::compare::{compare_arrays, Tolerance};
use service::sharded::run_global;
use service::{Backend, ExecuteOptions, LoadedExecutable, LocalClient};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("sharded");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/sharded exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 7, "tests/sharded incomplete: {dirs:?}");
    dirs
}

/// A client of `platform` with `replicas x partitions` devices, and `module`
/// compiled for them.
pub(crate) fn compile_on(
    platform: &str,
    module: &HloModule,
    replicas: usize,
    partitions: usize,
) -> Result<(LocalClient, Arc<LoadedExecutable>), String> {
    let backend = Backend::with_options(
        Some(platform),
        &PlatformOptions {
            device_count: Some(replicas * partitions),
        },
    )
    .map_err(|e| e.to_string())?;
    let client = LocalClient::new(Arc::new(backend));
    let options = CompileOptions {
        replica_count: replicas,
        num_partitions: partitions,
        ..CompileOptions::default()
    };
    let exe = client
        .compile(module, &options)
        .map_err(|e| e.to_string())?
        .executable;
    Ok((client, exe))
}

fn run_case(platform: &str, dir: &Path) -> Result<(), String> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
    let text = std::fs::read_to_string(dir.join("optimized.hlo")).unwrap();
    let module = HloModule::parse(&text).map_err(|e| e.to_string())?;
    let devices = meta["devices"].as_u64().unwrap() as usize;
    assert_eq!(
        module.config.num_partitions,
        Some(devices),
        "{}",
        dir.display()
    );
    let shardings: Vec<HloSharding> = meta["out_shardings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| HloSharding::parse(s.as_str().unwrap()).unwrap())
        .collect();
    let args: Vec<Literal> = (0..meta["args"].as_array().unwrap().len())
        .map(|i| Literal::read_npy(dir.join(format!("arg{i}.npy"))).unwrap())
        .collect();
    let (client, exe) = compile_on(platform, &module, 1, devices)?;
    let got = run_global(
        &client,
        &module,
        &exe,
        &args,
        &shardings,
        &ExecuteOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let got = got.into_iter().next().unwrap().flatten_leaves();
    let tol = Tolerance {
        rtol: meta["rtol"].as_f64().unwrap(),
        atol: meta["atol"].as_f64().unwrap(),
    };
    for (i, leaf) in got.iter().enumerate() {
        let want = Literal::read_npy(dir.join(format!("out{i}.npy"))).unwrap();
        let report = compare_arrays(i, leaf, &want, tol).map_err(|e| e.to_string())?;
        if !report.ok() {
            return Err(format!("output {i}: {report:?}"));
        }
    }
    Ok(())
}

#[test]
fn sharded_jax_programs_match_jax_on_cpu_platforms() {
    let mut failures = Vec::new();
    for platform in ["interpreter", "host"] {
        for dir in cases() {
            if let Err(e) = run_case(platform, &dir) {
                failures.push(format!("{platform} {}: {e}", dir.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
