//! XLA's own fusions (the corpus' `optimized.hlo`) run as block programs
//! whenever their fused computation only uses operations the block evaluator
//! implements; the others fall back to the nested sequence (and still pass the
//! conformance test).

use platform_api::hlo::Op;
use platform_api::{CompileOptions, HloModule};
use platform_host::compiler::optimize;
use platform_host::fusion;
use std::path::Path;

/// Opcodes the block evaluator implements inside a fusion.
fn supported(op: &Op) -> bool {
    matches!(
        op,
        Op::Parameter { .. }
            | Op::Constant { .. }
            | Op::Iota { .. }
            | Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare { .. }
            | Op::Select
            | Op::Clamp
            | Op::Convert
            | Op::ReducePrecision { .. }
            | Op::Broadcast { .. }
            | Op::Reshape
            | Op::Copy
            | Op::Transpose { .. }
            | Op::Slice { .. }
            | Op::Reverse { .. }
            | Op::Tuple
    )
}

#[test]
fn xla_fusions_of_supported_ops_run_as_block_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let mut block = 0;
    let mut fallback = Vec::new();
    let mut failures = Vec::new();
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    for case in cases {
        let file = case.join("optimized.hlo");
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let module =
            optimize(HloModule::parse(&text).unwrap(), &CompileOptions::default()).unwrap();
        for comp in &module.computations {
            for instr in &comp.instructions {
                let Op::Fusion { calls, .. } = &instr.op else {
                    continue;
                };
                let fused = module.computation(*calls);
                let expected = fused.instructions.iter().all(|i| supported(&i.op));
                match (fusion::block_support(&module, instr), expected) {
                    (Ok(()), _) => block += 1,
                    (Err(e), true) => {
                        failures.push(format!("{}: %{}: {e}", case.display(), instr.name))
                    }
                    (Err(e), false) => fallback.push(format!("%{}: {e}", instr.name)),
                }
            }
        }
    }
    println!(
        "{block} XLA fusions run as block programs; {} fall back:",
        fallback.len()
    );
    for f in &fallback {
        println!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "supported fusions that fall back:\n{}",
        failures.join("\n")
    );
    assert!(block > 0);
}
