//! [`ModulePlan`]: what the evaluator precomputes once per executable.
//!
//! For every computation: how many times each instruction's value is used (so
//! the evaluator can move a value into its last user and free it right after),
//! which instructions must run at all (those the root depends on, plus any with
//! side effects), and the constants already wrapped as shared values (so a loop
//! body does not copy its constants every iteration), and which results are
//! big enough to try on the allocator first.
//!
//! Building the plan also checks the structural facts the evaluator relies on —
//! every operand precedes its user, every called computation exists, the root
//! exists — so a malformed module is an error here rather than a panic later.

use super::value::Value;
use hlo_ir::{CompId, HloInstruction, HloModule, InstrId, Op, Shape};
use hlo_ir::{Error, Result};
use hlo_semantics::contraction::{contraction_candidate, Contraction};

/// Per-computation facts for evaluation.
pub struct ComputationPlan {
    /// Uses of each instruction's value (one per operand slot that names it).
    pub use_counts: Vec<u32>,
    /// Whether the instruction must be evaluated.
    pub live: Vec<bool>,
    /// Prebuilt values of constant instructions.
    pub constants: Vec<Option<Value>>,
    /// For an add/subtract that absorbs a multiply (XLA CPU's FP contraction):
    /// which operand is the multiply and how to fuse it.
    pub contractions: Vec<Option<(usize, Contraction)>>,
    /// Multiplies absorbed by their one user: evaluated there, as part of an FMA.
    pub deferred: Vec<bool>,
    /// Bytes of a result large enough to be tried on the allocator before it
    /// is computed (0 for the rest): the kernels allocate infallibly, and a
    /// program may ask for more memory than the machine has.
    pub probe_bytes: Vec<usize>,
}

/// Results at least this large get a `probe_bytes` entry.
const PROBE_BYTES: usize = 1 << 30;

/// What evaluating `instr` allocates for its result, if that is at least
/// [`PROBE_BYTES`]; instructions that only forward values allocate nothing.
fn probe_bytes(instr: &HloInstruction) -> usize {
    fn bytes(shape: &Shape) -> usize {
        match shape {
            Shape::Array(a) => a.byte_size(),
            Shape::Tuple(t) => t.iter().map(bytes).fold(0, usize::saturating_add),
            Shape::Token => 0,
        }
    }
    if matches!(
        instr.op,
        Op::Parameter { .. } | Op::GetTupleElement { .. } | Op::Tuple | Op::Bitcast
    ) {
        return 0;
    }
    Some(bytes(&instr.shape))
        .filter(|&b| b >= PROBE_BYTES)
        .unwrap_or(0)
}

/// The plan of every computation of a module, indexed by computation id.
pub struct ModulePlan {
    pub computations: Vec<ComputationPlan>,
}

impl ModulePlan {
    pub fn new(module: &HloModule, contract: bool) -> Result<Self> {
        if module.entry.index() >= module.computations.len() {
            return Err(Error::invalid_argument(format!(
                "module {} has no entry computation {}",
                module.name, module.entry.0
            )));
        }
        let count = module.computations.len();
        let computations = module
            .computations
            .iter()
            .map(|comp| {
                let n = comp.instructions.len();
                if comp.root.index() >= n {
                    return Err(Error::invalid_argument(format!("computation {} has no root instruction", comp.name)));
                }
                let mut use_counts = vec![0u32; n];
                let mut constants = vec![None; n];
                for (i, instr) in comp.instructions.iter().enumerate() {
                    for op in &instr.operands {
                        if op.index() >= i {
                            return Err(Error::invalid_argument(format!(
                                "%{} in computation {} uses an operand that does not come before it",
                                instr.name, comp.name
                            )));
                        }
                        use_counts[op.index()] += 1;
                    }
                    for callee in instr.op.called_computations() {
                        if callee.index() >= count {
                            return Err(Error::invalid_argument(format!("%{} calls computation {} which does not exist", instr.name, callee.0)));
                        }
                    }
                    if let Op::Constant { literal } = &instr.op {
                        constants[i] = Some(Value::from_literal(literal.clone()));
                    }
                }
                // Live: reachable from the root through operands, or side-effecting.
                let mut live = vec![false; n];
                live[comp.root.index()] = true;
                for i in (0..n).rev() {
                    let instr = &comp.instructions[i];
                    if instr.op.has_side_effect() {
                        live[i] = true;
                    }
                    if live[i] {
                        for op in &instr.operands {
                            live[op.index()] = true;
                        }
                    }
                }
                // Dead instructions' uses do not count: their operands are never consumed by them.
                for (i, instr) in comp.instructions.iter().enumerate() {
                    if !live[i] {
                        for op in &instr.operands {
                            use_counts[op.index()] -= 1;
                        }
                    }
                }
                let mut contractions = vec![None; n];
                let mut deferred = vec![false; n];
                if contract {
                    for i in 0..n {
                        if !live[i] {
                            continue;
                        }
                        if let Some((k, how)) = contraction_candidate(comp, InstrId(i as u32), &use_counts) {
                            let m = comp.instructions[i].operands[k].index();
                            if !deferred[m] {
                                deferred[m] = true;
                                contractions[i] = Some((k, how));
                            }
                        }
                    }
                }
                Ok(ComputationPlan {
                    use_counts,
                    live,
                    constants,
                    contractions,
                    deferred,
                    probe_bytes: comp.instructions.iter().map(probe_bytes).collect(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ModulePlan { computations })
    }

    pub fn computation(&self, id: CompId) -> &ComputationPlan {
        &self.computations[id.index()]
    }
}
