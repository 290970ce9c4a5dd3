//! Common-subexpression elimination: of two instructions that compute the same
//! thing, the later one is replaced by the earlier.
//!
//! Two instructions are the same computation when they have the same op with the
//! same attributes (constants: the same bytes), the same operands in the same
//! order, the same shape (layout included) and the same backend configuration
//! and sharding; every HLO op without side effects is a function of exactly
//! those, so merging them changes no result. Metadata (source locations) is
//! ignored.
//!
//! Never merged: instructions with effects (including calls of computations that
//! have them), `rng`, `rng-bit-generator` and `rng-get-and-update-state` (each
//! call is meant to draw anew), parameters, collectives and asynchronous or
//! host-transfer ops (their identity matters to other devices or to pairing),
//! token-producing ops, and instructions with control edges.
//!
//! Commutative canonicalization: `add(a, b)` and `add(b, a)` are merged only
//! for integer and `pred` operands. For floating-point types the order matters
//! for NaN payloads — when both operands are NaN, x86 returns the first one's —
//! so swapping would change bits.
//!
//! Instructions are visited in order with a hash table keyed on (op, operands,
//! shape); since an instruction's operands are merged before it is visited, one
//! sweep finds every redundancy: linear time.

use super::HloPass;
use hlo_ir::error::Result;
use hlo_ir::rewrite::{
    effectful_computations, instruction_has_effect, remove_unreachable_computations, CallGraph,
    ComputationEditor, NameGen,
};
use hlo_ir::rewrite::{FastHasher, PreHashed};
use hlo_ir::shape::Shape;
use hlo_ir::{CompId, HloComputation, HloInstruction, HloModule, InstrId, Op};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Merges instructions that compute the same value.
#[derive(Clone, Debug, Default)]
pub struct CommonSubexpressionElimination;

impl CommonSubexpressionElimination {
    pub fn new() -> Self {
        CommonSubexpressionElimination
    }
}

impl HloPass for CommonSubexpressionElimination {
    fn name(&self) -> &str {
        "cse"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let mut changed = false;
        let effectful = effectful_computations(module);
        let mut names = NameGen::new();
        for comp in &mut module.computations {
            let mut ed = ComputationEditor::new(comp, &mut names);
            let mut table: HashMap<u64, Vec<InstrId>, BuildHasherDefault<PreHashed>> =
                HashMap::default();
            for i in 0..ed.len() {
                let id = InstrId(i as u32);
                let instr = ed.instr(id);
                if !is_candidate(instr, &effectful) {
                    continue;
                }
                let key = key_hash(instr);
                let bucket = table.entry(key).or_default();
                let earlier = bucket
                    .iter()
                    .copied()
                    .find(|&other| same_computation(ed.instr(other), ed.instr(id)));
                match earlier {
                    Some(other) => ed.replace_all_uses(id, other)?,
                    None => bucket.push(id),
                }
            }
            changed |= ed.finish(&effectful)?;
        }
        Ok(changed)
    }
}

fn produces_token(shape: &Shape) -> bool {
    match shape {
        Shape::Token => true,
        Shape::Tuple(t) => t.iter().any(produces_token),
        Shape::Array(_) => false,
    }
}

/// Whether merging this instruction with an identical one is safe (module docs).
fn is_candidate(instr: &HloInstruction, effectful: &[bool]) -> bool {
    use Op::*;
    let excluded = matches!(
        instr.op,
        Parameter { .. }
            | Rng { .. }
            | RngBitGenerator { .. }
            | RngGetAndUpdateState { .. }
            | AllReduce { .. }
            | AllReduceStart { .. }
            | AllReduceDone
            | AllGather { .. }
            | AllGatherStart { .. }
            | AllGatherDone
            | ReduceScatter { .. }
            | AllToAll { .. }
            | CollectivePermute { .. }
            | CollectivePermuteStart { .. }
            | CollectivePermuteDone
            | CollectiveBroadcast { .. }
            | Infeed { .. }
            | Outfeed { .. }
            | Send { .. }
            | SendDone { .. }
            | Recv { .. }
            | RecvDone { .. }
            | AsyncStart { .. }
            | AsyncUpdate
            | AsyncDone
            | CopyStart { .. }
            | CopyDone
            | AfterAll
            | AddDependency
            | OptimizationBarrier
    );
    !excluded
        && instr.control_predecessors.is_empty()
        && !produces_token(&instr.shape)
        && !instruction_has_effect(instr, effectful)
}

/// Whether the operand order of `instr` may be canonicalized (sorted).
fn commutes_exactly(instr: &HloInstruction) -> bool {
    match &instr.op {
        Op::Binary(b) => {
            b.is_commutative()
                && instr
                    .shape
                    .element_type()
                    .is_some_and(|t| t.is_integer() || t.is_pred())
        }
        _ => false,
    }
}

/// The operands in canonical order.
fn canonical_operands(instr: &HloInstruction) -> Vec<InstrId> {
    let mut ops = instr.operands.clone();
    if commutes_exactly(instr) {
        ops.sort_unstable();
    }
    ops
}

/// A hash consistent with [`same_computation`]: equal instructions hash equal.
fn key_hash(instr: &HloInstruction) -> u64 {
    let mut h = FastHasher::default();
    instr.opcode().hash(&mut h);
    canonical_operands(instr).hash(&mut h);
    instr.shape.hash(&mut h);
    hash_attributes(&instr.op, &mut h);
    h.finish()
}

/// Hashes the attributes that most often tell instructions of one opcode apart
/// (enough to keep buckets small; equality is decided by [`same_computation`]).
fn hash_attributes(op: &Op, h: &mut FastHasher) {
    match op {
        Op::Constant { literal } => {
            literal.shape().hash(h);
            if let Ok(bytes) = literal.bytes() {
                // A prefix and the length: enough to separate constants without
                // hashing megabytes of weights.
                bytes.len().hash(h);
                bytes[..bytes.len().min(256)].hash(h);
            }
        }
        Op::Iota { dimension } => dimension.hash(h),
        Op::Unary(u) => u.hash(h),
        Op::Binary(b) => b.hash(h),
        Op::Compare { direction, .. } => direction.hash(h),
        Op::Broadcast { dimensions }
        | Op::Transpose { dimensions }
        | Op::Reverse { dimensions }
        | Op::Reduce { dimensions, .. } => dimensions.hash(h),
        Op::Slice { slice } => slice.hash(h),
        Op::DynamicSlice { sizes } => sizes.hash(h),
        Op::Concatenate { dimension } => dimension.hash(h),
        Op::Pad { config } => config.hash(h),
        Op::GetTupleElement { index } => index.hash(h),
        _ => {}
    }
}

/// Whether two instructions compute the same value (module docs).
fn same_computation(a: &HloInstruction, b: &HloInstruction) -> bool {
    a.op == b.op
        && a.shape == b.shape
        && canonical_operands(a) == canonical_operands(b)
        && a.backend_config == b.backend_config
        && a.sharding == b.sharding
        && a.frontend_attributes == b.frontend_attributes
}

/// Merges computations that are identical up to names and metadata: every call
/// of a duplicate then calls the first copy, and the duplicates are removed.
///
/// JAX emits one reducer computation per `reduce` (`region_0.2`, `region_1.3`,
/// ... all `add(x, y)`); merging them lets CSE merge reductions that differ only
/// in which copy they call, and gives a backend fewer computations to compile.
/// Two computations with the same instructions in the same order (same ops,
/// attributes, shapes, operand positions, root) compute the same function, so
/// every call computes what it did. The entry is never merged away, and
/// neither are computations called by `fusion` or `async-start`: in XLA each of
/// those belongs to exactly one caller, which backends may rely on.
#[derive(Clone, Debug, Default)]
pub struct ComputationDeduplication;

impl ComputationDeduplication {
    pub fn new() -> Self {
        ComputationDeduplication
    }
}

impl HloPass for ComputationDeduplication {
    fn name(&self) -> &str {
        "computation-dedup"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let graph = CallGraph::build(module);
        let order = graph.post_order_all(module)?;
        let n = module.computations.len();
        let owned = |c: CompId| {
            graph.call_sites(c).iter().any(|site| {
                matches!(
                    module.computation(site.caller).instr(site.instruction).op,
                    Op::Fusion { .. } | Op::AsyncStart { .. }
                )
            })
        };
        // Callees come first, so by the time a computation is compared, the
        // computations it calls already map to their canonical copies.
        let mut canonical: Vec<CompId> = (0..n as u32).map(CompId).collect();
        let mut table: HashMap<u64, Vec<CompId>, BuildHasherDefault<PreHashed>> =
            HashMap::default();
        let mut merged = false;
        for c in order {
            if c == module.entry || owned(c) {
                continue;
            }
            let comp = module.computation(c);
            let key = computation_hash(comp);
            let bucket = table.entry(key).or_default();
            let same = bucket
                .iter()
                .copied()
                .find(|&other| same_computations(module.computation(other), comp, &canonical));
            match same {
                Some(other) => {
                    canonical[c.index()] = other;
                    merged = true;
                }
                None => bucket.push(c),
            }
        }
        if !merged {
            return Ok(false);
        }
        for comp in &mut module.computations {
            for instr in &mut comp.instructions {
                instr
                    .op
                    .map_called(|c| canonical.get(c.index()).copied().unwrap_or(c));
            }
        }
        remove_unreachable_computations(module)?;
        Ok(true)
    }
}

fn computation_hash(comp: &HloComputation) -> u64 {
    let mut h = FastHasher::default();
    comp.instructions.len().hash(&mut h);
    comp.root.hash(&mut h);
    for instr in &comp.instructions {
        instr.opcode().hash(&mut h);
        instr.operands.hash(&mut h);
        instr.shape.hash(&mut h);
    }
    h.finish()
}

/// Whether two computations are the same function written the same way, with
/// the computations `b` calls taken through `canonical`.
fn same_computations(a: &HloComputation, b: &HloComputation, canonical: &[CompId]) -> bool {
    a.root == b.root
        && a.instructions.len() == b.instructions.len()
        && a.instructions.iter().zip(&b.instructions).all(|(x, y)| {
            let same_op = if x.op.called_computations().is_empty() {
                x.op == y.op
            } else {
                let map = |op: &Op| {
                    let mut op = op.clone();
                    op.map_called(|c| canonical.get(c.index()).copied().unwrap_or(c));
                    op
                };
                map(&x.op) == map(&y.op)
            };
            same_op
                && x.shape == y.shape
                && x.operands == y.operands
                && x.control_predecessors == y.control_predecessors
                && x.backend_config == y.backend_config
                && x.sharding == y.sharding
                && x.frontend_attributes == y.frontend_attributes
                && x.parameter_replication == y.parameter_replication
        })
}
