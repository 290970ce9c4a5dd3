//! Fusion execution: the one place that decides how a `fusion` instruction runs.
//!
//! # Interface (what the compiler relies on)
//! * [`plan`] compiles a fusion instruction once, before its computation's
//!   buffers are assigned; [`FusionPlan::scratch_bytes`] says how much scratch
//!   the instruction needs while it runs.
//! * [`FusionPlan::into_thunk`] makes the thunk, given the fusion's operand
//!   leaf slices, result leaf slices and scratch slice.
//! * [`FusionPlan::in_place_operands`] names the operands the fusion's result
//!   may be written over; the compiler hands the plan's answer to buffer
//!   assignment, which reuses a dying operand's buffer for them.
//!
//! # Strategy
//! The Host does not generate machine code. A fused computation is compiled
//! into a [`program::BlockProgram`]: the fusion's elements are evaluated in
//! cache-sized blocks, each HLO instruction becoming one slice kernel call per
//! block ([`crate::elementwise_ops`]), so dispatch costs are paid per block and intermediates
//! stay in registers of a few KiB instead of going to memory. Leaves are read
//! through [`view::View`]s (contiguous, splat, repeated rows, strided or
//! general index maps), reductions are folded per row or accumulated per
//! column inside the same pass, and a row reduction may be broadcast back
//! along its row within the fusion (softmax and layernorm run as one pass).
//! See [`program`] for the model and [`exec`] for the runtime.
//!
//! A fusion the block evaluator does not support (a `dot`, `scatter`,
//! `dynamic-slice`, `pad`, ... inside it: XLA's `kCustom` and some of its
//! `kLoop` fusions) falls back to running the fused computation like any
//! other computation, as a nested thunk sequence whose temporaries live in the
//! fusion's scratch: correct for every fusion, but every intermediate is
//! materialised.
//!
//! [`graph`] presents a fusion's instructions to the compiler of block
//! programs; the fusion pass (`compiler::passes::fusion`) uses it to ask
//! whether a candidate group would compile before it forms the group.
//!
//! # In place
//! A block program may write its result over a parameter read only at the
//! result's own positions, with a single output written by the last step of
//! each block ([`program::BlockProgram::in_place_params`]). The fallback
//! offers in-place writing only for operands that reach the root through
//! same-shaped elementwise instructions alone (and a root that is
//! elementwise): element `i` of the result then depends on element `i` of the
//! operand and nothing else.

pub mod exec;
pub mod graph;
pub mod program;
pub mod view;

use crate::compiler::buffer_assignment::{OutputMode, SequenceMode};
use crate::compiler::lower::compile_computation;
use crate::lowering::BlockProducer;
use crate::thunk::{BufferSlice, Thunk, ThunkSequence};
use platform_api::hlo::{CompId, HloInstruction, Op};
use platform_api::{CompileOptions, Error, HloModule, Result};
use program::BlockProgram;
use std::sync::Arc;

/// The calling convention of a fused computation: read-only parameters; the
/// result may be the same memory as an operand (in-place fusion), so only the
/// root instruction writes it.
const FUSED_MODE: SequenceMode = SequenceMode {
    params_writable: false,
    outputs: OutputMode::Separate {
        absorb: false,
        alias_results: false,
    },
};

/// How fusions run: a compile option (`host_fusion`), so it is part of what
/// a compilation cache keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The fusion pass forms groups, and fusions run as block programs where
    /// supported, nested sequences otherwise (`host_fusion=block`, the
    /// default).
    Block,
    /// No fusion decisions, and fusions already in the module run as nested
    /// sequences: every instruction runs on its own (`host_fusion=off`; the
    /// reference the block evaluator is tested against, and the "before" of
    /// benchmarks).
    Unfused,
}

impl Strategy {
    /// The debug option that selects the strategy.
    pub const OPTION: &'static str = "host_fusion";

    /// The strategy `options` ask for.
    pub fn from_options(options: &CompileOptions) -> Result<Strategy> {
        match options.debug_option(Self::OPTION) {
            None | Some("block") | Some("on") | Some("true") => Ok(Strategy::Block),
            Some("off") | Some("false") | Some("unfused") => Ok(Strategy::Unfused),
            Some(other) => Err(Error::invalid_argument(format!(
                "{} must be block (the default) or off, not \"{other}\"",
                Self::OPTION
            ))),
        }
    }

    /// Compile options that ask for this strategy (and nothing else).
    pub fn options(self) -> CompileOptions {
        let value = match self {
            Strategy::Block => "block",
            Strategy::Unfused => "off",
        };
        CompileOptions {
            debug_options: vec![(Self::OPTION.to_string(), value.to_string())],
            ..CompileOptions::default()
        }
    }
}

enum PlanKind {
    Block(Arc<BlockProgram>),
    Sequence(ThunkSequence),
}

/// A fusion compiled before buffer assignment.
pub struct FusionPlan {
    name: String,
    kind: PlanKind,
    /// Operands the result may be written over (see the module docs).
    in_place: Vec<usize>,
}

impl FusionPlan {
    /// The operands the fusion's result may be written over: buffer
    /// assignment reuses a dying operand's buffer for the result.
    pub fn in_place_operands(&self) -> &[usize] {
        &self.in_place
    }

    /// Scratch the fusion needs for its temporaries.
    pub fn scratch_bytes(&self) -> usize {
        match &self.kind {
            PlanKind::Block(p) => p.scratch_bytes,
            PlanKind::Sequence(s) => s.temp_bytes,
        }
    }

    /// Whether the fusion runs as a block program (for tests and tools).
    pub fn is_block_program(&self) -> bool {
        matches!(self.kind, PlanKind::Block(_))
    }

    /// Whether operand `k` may be computed block by block by a
    /// [`BlockProducer`] ([`FusionPlan::into_thunk_with_producer`]): a block
    /// program reads it only at each block's own positions (never in a
    /// uniform, row or column step), and only in the per-block steps.
    pub fn accepts_producer_for(&self, k: usize) -> bool {
        match &self.kind {
            PlanKind::Block(p) => {
                p.in_place_params.contains(&k)
                    && p.finalize.is_empty()
                    && p.col_steps.is_empty()
                    && p.rows * p.row_len > 1
            }
            PlanKind::Sequence(_) => false,
        }
    }

    /// The thunk that runs the fusion with these buffers, computing operand
    /// `k` (whose slice is the producer's result) with `producer`, block by
    /// block. Fails unless [`FusionPlan::accepts_producer_for`] holds.
    pub fn into_thunk_with_producer(
        self,
        operands: Vec<BufferSlice>,
        results: Vec<BufferSlice>,
        scratch: Option<BufferSlice>,
        k: usize,
        producer: Box<dyn BlockProducer>,
    ) -> Result<Box<dyn Thunk>> {
        if !self.accepts_producer_for(k) || producer.slices().first() != operands.get(k) {
            return Err(Error::internal(format!(
                "%{}: operand {k} cannot be produced block by block",
                self.name
            )));
        }
        self.make_thunk(operands, results, scratch, Some(producer))
    }

    /// The thunk that runs the fusion with these buffers.
    pub fn into_thunk(
        self,
        operands: Vec<BufferSlice>,
        results: Vec<BufferSlice>,
        scratch: Option<BufferSlice>,
    ) -> Result<Box<dyn Thunk>> {
        self.make_thunk(operands, results, scratch, None)
    }

    fn make_thunk(
        self,
        operands: Vec<BufferSlice>,
        results: Vec<BufferSlice>,
        scratch: Option<BufferSlice>,
        producer: Option<Box<dyn BlockProducer>>,
    ) -> Result<Box<dyn Thunk>> {
        let (want_params, want_results) = match &self.kind {
            PlanKind::Block(p) => (
                p.param_bytes.clone(),
                p.outputs
                    .iter()
                    .map(|o| o.count * o.ty.byte_size())
                    .collect::<Vec<_>>(),
            ),
            PlanKind::Sequence(s) => (s.parameter_leaf_bytes.clone(), s.output_leaf_bytes.clone()),
        };
        let fits = |got: &[BufferSlice], want: &[usize]| {
            got.len() == want.len() && got.iter().zip(want).all(|(g, &w)| g.size >= w)
        };
        if !fits(&operands, &want_params) || !fits(&results, &want_results) {
            return Err(Error::internal(format!(
                "%{}: fusion called with operand leaves of {:?} and result leaves of {:?} bytes; it needs {:?} and {:?}",
                self.name,
                operands.iter().map(|s| s.size).collect::<Vec<_>>(),
                results.iter().map(|s| s.size).collect::<Vec<_>>(),
                want_params,
                want_results
            )));
        }
        let need_scratch = self.scratch_bytes();
        if need_scratch > 0 && scratch.is_none_or(|s| s.size < need_scratch) {
            return Err(Error::internal(format!(
                "%{}: fusion needs {need_scratch} bytes of scratch",
                self.name
            )));
        }
        Ok(match self.kind {
            PlanKind::Block(program) => Box::new(exec::BlockFusion {
                name: self.name,
                program,
                operands,
                results,
                scratch,
                producer,
            }),
            PlanKind::Sequence(sequence) => Box::new(SequenceFusion {
                name: self.name,
                sequence,
                operands,
                results,
                scratch,
            }),
        })
    }
}

/// The block program of fusion `instr` (calling `fused`), if the block
/// evaluator supports it and its signature matches the instruction's.
fn block_program(
    module: &HloModule,
    fused: CompId,
    instr: &HloInstruction,
    strategy: Strategy,
) -> Result<BlockProgram> {
    if strategy == Strategy::Unfused {
        return Err(Error::unimplemented(format!(
            "block evaluation is off ({}=off)",
            Strategy::OPTION
        )));
    }
    let graph = graph::FusedGraph::from_computation(module, fused, &instr.name)?;
    if graph.params.iter().any(|p| !p.is_array()) || graph.params.len() != instr.operands.len() {
        return Err(Error::unimplemented(format!(
            "%{}: tuple parameters",
            instr.name
        )));
    }
    let program = program::compile(&graph)?;
    let leaves = instr.shape.leaves();
    let matches = leaves.len() == program.outputs.len()
        && leaves
            .iter()
            .zip(&program.outputs)
            .all(|((_, a), o)| a.element_count() == o.count && a.element_type == o.ty);
    if !matches {
        return Err(Error::invalid_argument(format!(
            "%{}: the fused computation's results do not match {}",
            instr.name, instr.shape
        )));
    }
    Ok(program)
}

/// Compiles fusion instruction `instr`.
pub fn plan(
    module: &HloModule,
    instr: &HloInstruction,
    options: &CompileOptions,
) -> Result<FusionPlan> {
    let Op::Fusion { calls, .. } = &instr.op else {
        return Err(Error::internal(format!("%{} is not a fusion", instr.name)));
    };
    let strategy = Strategy::from_options(options)?;
    let (kind, in_place) = match block_program(module, *calls, instr, strategy) {
        Ok(program) => {
            let in_place = program
                .in_place_params
                .iter()
                .copied()
                .filter(|&k| k < instr.operands.len())
                .collect();
            (PlanKind::Block(Arc::new(program)), in_place)
        }
        Err(e) => {
            tracing::debug!("%{}: fused computation runs unfused: {e}", instr.name);
            let sequence = compile_computation(module, *calls, FUSED_MODE, options, false)?;
            (
                PlanKind::Sequence(sequence),
                sequence_in_place_operands(module, *calls, instr),
            )
        }
    };
    Ok(FusionPlan {
        name: instr.name.clone(),
        kind,
        in_place,
    })
}

/// The fallback's in-place operands (see the module doc).
fn sequence_in_place_operands(
    module: &HloModule,
    fused: CompId,
    instr: &HloInstruction,
) -> Vec<usize> {
    let Some(comp) = module.computations.get(fused.index()) else {
        return Vec::new();
    };
    let root = comp.root_instr();
    if !root.op.is_elementwise() || matches!(root.op, Op::Copy) || !root.shape.is_array() {
        return Vec::new();
    }
    // For each instruction: does every path from it to the root go through
    // same-shaped elementwise instructions only? Computed from the root down.
    let n = comp.instructions.len();
    let users = comp.users();
    let mut elementwise_to_root = vec![false; n];
    for i in (0..n).rev() {
        let id = platform_api::hlo::InstrId(i as u32);
        if id == comp.root {
            elementwise_to_root[i] = true;
            continue;
        }
        let me = comp.instr(id);
        let uses = &users[i];
        elementwise_to_root[i] = !uses.is_empty()
            && uses.iter().all(|&u| {
                let user = comp.instr(u);
                elementwise_to_root[u.index()]
                    && user.op.is_elementwise()
                    && !matches!(user.op, Op::Copy)
                    && user.shape.dims() == me.shape.dims()
            });
    }
    comp.parameters()
        .into_iter()
        .filter_map(|p| match comp.instr(p).op {
            Op::Parameter { number } if elementwise_to_root[p.index()] => Some(number),
            _ => None,
        })
        .filter(|&number| number < instr.operands.len())
        .collect()
}

/// A fusion run as a nested thunk sequence.
struct SequenceFusion {
    name: String,
    sequence: ThunkSequence,
    operands: Vec<BufferSlice>,
    results: Vec<BufferSlice>,
    scratch: Option<BufferSlice>,
}

impl Thunk for SequenceFusion {
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        "fusion"
    }
    fn execute(&self, ctx: &crate::thunk::ExecuteContext<'_>) -> Result<()> {
        let params: Vec<*mut u8> = self.operands.iter().map(|s| ctx.ptr(*s)).collect();
        let outputs: Vec<*mut u8> = self.results.iter().map(|s| ctx.ptr(*s)).collect();
        let temp = self
            .scratch
            .map(|s| ctx.ptr(s))
            .unwrap_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast());
        // SAFETY: the slices come from the enclosing sequence's buffer
        // assignment, sized for this fusion's operands, results and arena; the
        // nested sequence only writes its results and its arena.
        unsafe { self.sequence.run(ctx.run, &params, &outputs, temp) }
    }
}

/// Why fusion `instr` would not run as a block program (`Ok` when it would).
pub fn block_support(module: &HloModule, instr: &HloInstruction) -> Result<()> {
    let Op::Fusion { calls, .. } = &instr.op else {
        return Err(Error::invalid_argument(format!(
            "%{} is not a fusion",
            instr.name
        )));
    };
    block_program(module, *calls, instr, Strategy::Block).map(|_| ())
}
