//! Passes must not panic on a malformed module: corpus programs with random
//! damage (references out of range, wrong shapes, huge dimensions, wrong
//! attributes) go through every pass, which may fail with an error but never
//! panic.

mod legalize_common;

use hlo_ir::{CompId, HloModule, InstrId, Op};
use hlo_ir::{ElementType, Shape};
use hlo_passes::legalize::Legalize;
use hlo_passes::{
    standard_pipeline, AlgebraicSimplifier, CallInliner, CommonSubexpressionElimination,
    ComputationDeduplication, ConstantFolding, DeadCodeElimination, FusionInliner, HloPass,
    LayoutNormalization,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn corpus_modules() -> Vec<(PathBuf, HloModule)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&root).expect("tests/conformance exists") {
        let dir = entry.expect("directory entry").path();
        for name in ["module.hlo", "optimized.hlo"] {
            if dir.join(name).exists() {
                files.push(dir.join(name));
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("readable");
            let m = HloModule::parse(&text).expect("corpus parses");
            (f, m)
        })
        .collect()
}

/// A small deterministic generator (xorshift) so failures are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(m: &mut HloModule, rng: &mut Rng) {
    let count = m.computations.len();
    let c = rng.below(count);
    let comp = &mut m.computations[c];
    let n = comp.instructions.len();
    let i = rng.below(n);
    let instr = &mut comp.instructions[i];
    match rng.below(9) {
        0 => {
            if !instr.operands.is_empty() {
                let k = rng.below(instr.operands.len());
                instr.operands[k] = InstrId(rng.below(n + 2) as u32);
            }
        }
        1 => comp.root = InstrId(rng.below(n + 2) as u32),
        2 => instr.op.map_called(|_| CompId(rng.below(count + 1) as u32)),
        3 => {
            if let Shape::Array(a) = &mut instr.shape {
                if !a.dims.is_empty() {
                    let d = rng.below(a.dims.len());
                    a.dims[d] = rng.below(5);
                }
            }
        }
        4 => {
            if rng.below(2) == 0 {
                instr.operands.pop();
            } else if let Some(&o) = instr.operands.first() {
                instr.operands.push(o);
            }
        }
        5 => {
            if let Shape::Array(a) = &mut instr.shape {
                a.dims.push(usize::MAX / 3);
            }
        }
        6 => {
            if let Shape::Array(a) = &mut instr.shape {
                a.element_type = ElementType::ALL[rng.below(ElementType::ALL.len())];
            }
        }
        7 => {
            // An attribute out of range or permuted wrongly.
            let v = rng.below(6);
            match &mut instr.op {
                Op::Transpose { dimensions }
                | Op::Broadcast { dimensions }
                | Op::Reverse { dimensions }
                | Op::Reduce { dimensions, .. } => {
                    if dimensions.is_empty() {
                        dimensions.push(v)
                    } else {
                        dimensions[0] = v
                    }
                }
                Op::Slice { slice } => {
                    if let Some(s) = slice.first_mut() {
                        s.limit = s.limit.wrapping_add(v).wrapping_sub(2);
                    }
                }
                Op::Concatenate { dimension } | Op::Iota { dimension } => *dimension = v,
                Op::GetTupleElement { index } => *index = v,
                Op::Pad { config } => {
                    if let Some(p) = config.first_mut() {
                        p.low = -(v as i64) * 1000;
                    }
                }
                _ => {}
            }
        }
        _ => {
            // A layout that is not a permutation.
            if let Shape::Array(a) = &mut instr.shape {
                a.layout = Some(hlo_ir::Layout {
                    minor_to_major: vec![0; a.dims.len()],
                    ..Default::default()
                });
            }
        }
    }
}

#[test]
fn damaged_programs_never_make_a_pass_panic() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut runs = 0;
    for (file, module) in corpus_modules() {
        for round in 0..8 {
            let mut damaged = module.clone();
            mutate(&mut damaged, &mut rng);
            let passes: Vec<Box<dyn HloPass>> = vec![
                Box::new(LayoutNormalization::new()),
                Box::new(CallInliner::new()),
                Box::new(AlgebraicSimplifier::new()),
                Box::new(ConstantFolding::new()),
                Box::new(ComputationDeduplication::new()),
                Box::new(CommonSubexpressionElimination::new()),
                Box::new(DeadCodeElimination::new()),
                Box::new(FusionInliner::new()),
                // Legalization to a small op set, so most expanders run.
                Box::new(Legalize::new(legalize_common::core_support())),
            ];
            for mut pass in passes {
                let mut m = damaged.clone();
                let name = pass.name().to_string();
                let outcome = catch_unwind(AssertUnwindSafe(|| pass.run(&mut m)));
                assert!(
                    outcome.is_ok(),
                    "{name} panicked on {} (round {round})",
                    file.display()
                );
                runs += 1;
            }
            let mut m = damaged.clone();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let mut p = standard_pipeline();
                p.verify_after_each_pass(false);
                p.run(&mut m)
            }));
            assert!(
                outcome.is_ok(),
                "the pipeline panicked on {} (round {round})",
                file.display()
            );
        }
    }
    assert!(runs > 900);
}
