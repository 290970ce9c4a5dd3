//! Block programs: how a `fusion` instruction runs as one pass over blocks.
//!
//! # Interface (what the compiler relies on)
//! * [`plan`] compiles a fusion instruction to a block program once, before
//!   its computation's buffers are assigned, or says why it cannot;
//!   [`FusionPlan::scratch_bytes`] says how much scratch the instruction needs
//!   while it runs.
//! * [`FusionPlan::into_thunk`] makes the thunk, given the fusion's operand
//!   leaf slices, result leaf slices and scratch slice.
//! * [`FusionPlan::in_place_operands`] names the operands each of the
//!   fusion's results may be written over; the compiler hands the plan's
//!   answer to buffer assignment, which reuses a dying operand's buffer for
//!   them.
//!
//! # Strategy
//! A fused computation is compiled into a [`program::BlockProgram`]: the
//! fusion's elements are evaluated in
//! cache-sized blocks, each HLO instruction becoming one slice kernel call per
//! block ([`crate::elementwise_ops`]), so dispatch costs are paid per block and intermediates
//! stay in registers of a few KiB instead of going to memory. Leaves are read
//! through [`view::View`]s (contiguous, splat, repeated rows, strided or
//! general index maps), reductions are folded per row or accumulated per
//! column inside the same pass, and a row reduction may be broadcast back
//! along its row within the fusion (softmax and layernorm run as one pass).
//! See [`program`] for the model and [`exec`] for the runtime. Runs of
//! consecutive simple steps (integer and float arithmetic, bitwise ops,
//! shifts, comparisons and selects) are the one place the Host generates machine code: [`jit`] turns
//! each into a loop that keeps its intermediates in vector registers, and
//! keeps the steps to fall back on.
//!
//! A `dynamic-slice` of a fusion parameter at starts that are scalar
//! parameters or constants is a leaf read in place, at an offset worked out
//! from the clamped starts each time the fusion runs (a scan's slice of its
//! inputs for the step). A fusion the block evaluator does not support (a
//! `dot`, `scatter`, a `dynamic-slice` of a computed value, `pad`, ... inside
//! it: XLA's `kCustom` and some of its `kLoop` fusions) is the compiler's to run otherwise: it compiles the fused
//! computation like any other computation, as a nested thunk sequence whose
//! temporaries live in the fusion's scratch (`compiler::nested`): correct for
//! every fusion, but every intermediate is materialised. This module knows
//! nothing of that fallback, so it never calls back into the compiler.
//!
//! [`chain`] runs the one kind of `kCustom` fusion the compiler forms
//! itself, `dot → fusion → dot` (attention), a block of rows at a time with
//! the middle fusion's block program ([`exec::run_rows`]), so the product
//! between them is never materialised.
//!
//! [`graph`] presents a fusion's instructions to the compiler of block
//! programs; the fusion pass (`compiler::passes::fusion`) uses it to ask
//! whether a candidate group would compile before it forms the group.
//!
//! # In place
//! A block program may write its result over a parameter read only at the
//! result's own positions, with a single output written by the last step of
//! each block ([`program::BlockProgram::in_place_params`]). In a
//! multi-output fusion (a loop body updating several arrays, each from its
//! old value) an output may also overwrite a parameter whose last use in each
//! block comes before the output's first write
//! ([`program::BlockProgram::in_place_outputs`]); that buffer must then be
//! the parameter alone ([`InPlace::elementwise`] is false).

pub mod chain;
pub mod exec;
pub mod graph;
pub mod jit;
pub mod program;
pub mod view;

use crate::lowering::BlockProducer;
use crate::thunk::{BufferSlice, Thunk};
use platform_api::hlo::{CompId, HloComputation, HloInstruction, InstrId, Op};
use platform_api::Shape;
use platform_api::{CompileOptions, Error, HloModule, Result};
use program::BlockProgram;
use std::collections::HashMap;
use std::sync::Arc;

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

/// The debug option that turns generated code for runs of simple steps
/// ([`jit`]) on (the default) or off.
pub const JIT_OPTION: &str = "host_jit";

/// Whether `options` let block programs run generated code.
pub fn jit_enabled(options: &CompileOptions) -> Result<bool> {
    match options.debug_option(JIT_OPTION) {
        None | Some("on") | Some("true") => Ok(true),
        Some("off") | Some("false") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "{JIT_OPTION} must be on (the default) or off, not \"{other}\""
        ))),
    }
}

/// A fusion compiled to a block program, before buffer assignment.
pub struct FusionPlan {
    name: String,
    program: Arc<BlockProgram>,
    /// Operands the results may be written over (see the module docs).
    in_place: Vec<InPlace>,
}

/// Result leaf `result` of a fusion may be written over operand `operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlace {
    pub result: usize,
    pub operand: usize,
    /// Each element is read before it is written and nothing else is read
    /// afterwards, so the operand's buffer may also be another operand.
    pub elementwise: bool,
}

impl FusionPlan {
    /// The operands the fusion's results may be written over: buffer
    /// assignment reuses a dying operand's buffer for the result.
    pub fn in_place_operands(&self) -> &[InPlace] {
        &self.in_place
    }

    /// How many runs of the per-block steps run as generated code
    /// ([`jit`]).
    pub fn generated_runs(&self) -> usize {
        self.program
            .steps
            .iter()
            .filter(|s| matches!(s, program::Step::Run(_)))
            .count()
    }

    /// The groups of its column reductions: 1, or the outer extent `G` of
    /// a reduction of `[G, R, B]` over `R` that reads its input in memory
    /// order (see [`program::BlockProgram::col_groups`]).
    pub fn column_groups(&self) -> usize {
        self.program.col_groups
    }

    /// Scratch the fusion needs for its temporaries.
    pub fn scratch_bytes(&self) -> usize {
        self.program.scratch_bytes
    }

    /// Whether operand `k` may be computed block by block by a
    /// [`BlockProducer`] ([`FusionPlan::into_thunk_with_producer`]): a block
    /// program reads it only at each block's own positions (never in a
    /// uniform, row or column step), and only in the per-block steps.
    pub fn accepts_producer_for(&self, k: usize) -> bool {
        let p = &self.program;
        p.in_place_params.contains(&k)
            && p.finalize.is_empty()
            && p.col_steps.is_empty()
            && p.rows * p.row_len > 1
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
        let p = &self.program;
        let want_params = p.param_bytes.clone();
        let want_results: Vec<usize> = p
            .outputs
            .iter()
            .map(|o| o.count * o.ty.byte_size())
            .collect();
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
        Ok(Box::new(exec::BlockFusion {
            name: self.name,
            program: self.program,
            operands,
            results,
            scratch,
            producer,
        }))
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

/// Compiles fusion instruction `instr` to a block program. An error says why
/// it cannot run as one (the compiler then runs the fused computation as a
/// nested sequence).
pub fn plan(
    module: &HloModule,
    instr: &HloInstruction,
    options: &CompileOptions,
) -> Result<FusionPlan> {
    let Op::Fusion { calls, .. } = &instr.op else {
        return Err(Error::internal(format!("%{} is not a fusion", instr.name)));
    };
    let strategy = Strategy::from_options(options)?;
    let mut program = block_program(module, *calls, instr, strategy)?;
    if jit_enabled(options)? {
        program.form_runs();
    }
    let in_place = program
        .in_place_outputs
        .iter()
        .filter(|p| p.param < instr.operands.len())
        .map(|p| InPlace {
            result: p.output,
            operand: p.param,
            elementwise: p.elementwise,
        })
        .collect();
    Ok(FusionPlan {
        name: instr.name.clone(),
        program: Arc::new(program),
        in_place,
    })
}

/// A fused expression computed over any range of its positions: a value
/// inside a fusion of a computation (element-wise ops, broadcasts, reshapes
/// and the like of the fusion's operands; nothing that calls a computation),
/// compiled on its own to a block program. A kernel that needs such a value
/// per position of its own iteration (the mask and the indices of a
/// [`crate::kernels::gather_scatter::MaskedGather`]) computes it a chunk
/// at a time instead of reading a materialised array. An operand that is an
/// output of another fusion the caller names (directly or through
/// `get-tuple-element` and reshapes) is computed from that fusion's own
/// expression, so that fusion's result need not exist at all.
pub struct PositionProgram {
    program: BlockProgram,
    /// The instructions of the outer computation whose values it reads, in
    /// the order [`PositionProgram::run`] takes their addresses.
    reads: Vec<InstrId>,
}

/// The fusion output that instruction `id` of `comp` is, through reshapes:
/// a `get-tuple-element` of a fusion names that fusion and its output, a
/// fusion itself its output 0.
pub fn fusion_output(comp: &HloComputation, mut id: InstrId) -> Option<(InstrId, usize)> {
    loop {
        let instr = comp.instr(id);
        match instr.op {
            Op::Reshape | Op::Bitcast => id = *instr.operands.first()?,
            Op::GetTupleElement { index } => {
                let f = *instr.operands.first()?;
                return matches!(comp.instr(f).op, Op::Fusion { .. }).then_some((f, index));
            }
            Op::Fusion { .. } => return Some((id, 0)),
            _ => return None,
        }
    }
}

/// Copies fused expressions into one computation (see [`PositionProgram`]).
struct ExpressionCopy<'m> {
    module: &'m HloModule,
    outer: &'m HloComputation,
    inline: &'m dyn Fn(InstrId) -> bool,
    instructions: Vec<HloInstruction>,
    reads: Vec<InstrId>,
    /// Copies made so far: an outer value read, an inlined fusion output.
    read_at: HashMap<InstrId, InstrId>,
    inlined_at: HashMap<(InstrId, usize), InstrId>,
}

impl<'m> ExpressionCopy<'m> {
    fn push(&mut self, instr: HloInstruction) -> InstrId {
        self.instructions.push(instr);
        InstrId(self.instructions.len() as u32 - 1)
    }

    /// Fusion `fusion` (an outer instruction) and the computation it calls.
    fn fused(&self, fusion: InstrId) -> Result<(&'m HloInstruction, &'m HloComputation)> {
        let f = self.outer.instr(fusion);
        let Op::Fusion { calls, .. } = &f.op else {
            return Err(Error::internal(format!("%{} is not a fusion", f.name)));
        };
        let comp =
            self.module.computations.get(calls.index()).ok_or_else(|| {
                Error::internal(format!("%{}: no computation #{}", f.name, calls.0))
            })?;
        Ok((f, comp))
    }

    /// Copies output `output` of fusion `fusion` (an outer instruction).
    fn output(&mut self, fusion: InstrId, output: usize) -> Result<InstrId> {
        if let Some(&at) = self.inlined_at.get(&(fusion, output)) {
            return Ok(at);
        }
        let (f, comp) = self.fused(fusion)?;
        let root = comp.root_instr();
        let value = match root.op {
            Op::Tuple => *root
                .operands
                .get(output)
                .ok_or_else(|| Error::internal(format!("%{}: no output {output}", f.name)))?,
            _ if output == 0 => comp.root,
            _ => return Err(Error::internal(format!("%{}: no output {output}", f.name))),
        };
        let at = self.value(fusion, value)?;
        self.inlined_at.insert((fusion, output), at);
        Ok(at)
    }

    /// Copies `value` of the computation fusion `fusion` calls.
    fn value(&mut self, fusion: InstrId, value: InstrId) -> Result<InstrId> {
        let (f, comp) = self.fused(fusion)?;
        if value.index() >= comp.instructions.len() {
            return Err(Error::internal(format!(
                "{}: no instruction #{}",
                comp.name, value.0
            )));
        }
        let mut needed = vec![false; value.index() + 1];
        needed[value.index()] = true;
        for i in (0..=value.index()).rev() {
            if needed[i] {
                for o in &comp.instructions[i].operands {
                    // Operands come first in a verified computation.
                    *needed
                        .get_mut(o.index())
                        .ok_or_else(|| Error::internal("an operand after its user"))? = true;
                }
            }
        }
        let mut map = vec![InstrId(0); value.index() + 1];
        for (i, instr) in comp.instructions[..=value.index()].iter().enumerate() {
            if !needed[i] {
                continue;
            }
            map[i] = match instr.op {
                Op::Parameter { number } => {
                    let operand = *f.operands.get(number).ok_or_else(|| {
                        Error::internal(format!("%{}: no operand {number}", f.name))
                    })?;
                    self.operand(operand, &instr.shape)?
                }
                _ if !instr.op.called_computations().is_empty() => {
                    return Err(Error::unimplemented(format!(
                        "%{} calls a computation",
                        instr.name
                    )));
                }
                _ => {
                    let operands = instr.operands.iter().map(|o| map[o.index()]).collect();
                    self.push(HloInstruction::new(
                        instr.name.clone(),
                        instr.shape.clone(),
                        instr.op.clone(),
                        operands,
                    ))
                }
            };
        }
        Ok(map[value.index()])
    }

    /// The value of outer instruction `operand`, as a parameter of shape
    /// `shape` reads it: a new parameter, or an inlined fusion's output.
    fn operand(&mut self, operand: InstrId, shape: &Shape) -> Result<InstrId> {
        // Through renames (reshapes keep the row-major order of elements).
        if let Some((source, output)) = fusion_output(self.outer, operand) {
            if (self.inline)(source) {
                let at = self.output(source, output)?;
                if &self.instructions[at.index()].shape == shape {
                    return Ok(at);
                }
                let name = format!(
                    "{}.as.{}",
                    self.instructions[at.index()].name,
                    self.instructions.len()
                );
                return Ok(self.push(HloInstruction::new(
                    name,
                    shape.clone(),
                    Op::Reshape,
                    vec![at],
                )));
            }
        }
        if let Some(&at) = self.read_at.get(&operand) {
            return Ok(at);
        }
        let name = format!("{}.read", self.outer.instr(operand).name);
        let at = self.push(HloInstruction::new(
            name,
            shape.clone(),
            Op::Parameter {
                number: self.reads.len(),
            },
            Vec::new(),
        ));
        self.reads.push(operand);
        self.read_at.insert(operand, at);
        Ok(at)
    }
}

impl PositionProgram {
    /// Compiles `value` of the computation fusion `fusion` of computation
    /// `outer` calls, inlining the fusions `inline` accepts.
    pub fn of_value(
        module: &HloModule,
        outer: &HloComputation,
        fusion: InstrId,
        value: InstrId,
        inline: &dyn Fn(InstrId) -> bool,
        options: &CompileOptions,
    ) -> Result<PositionProgram> {
        Self::build(module, outer, inline, options, |c| c.value(fusion, value))
    }

    /// Compiles output `output` of fusion `fusion` of computation `outer`,
    /// inlining the fusions `inline` accepts.
    pub fn of_output(
        module: &HloModule,
        outer: &HloComputation,
        fusion: InstrId,
        output: usize,
        inline: &dyn Fn(InstrId) -> bool,
        options: &CompileOptions,
    ) -> Result<PositionProgram> {
        Self::build(module, outer, inline, options, |c| c.output(fusion, output))
    }

    fn build(
        module: &HloModule,
        outer: &HloComputation,
        inline: &dyn Fn(InstrId) -> bool,
        options: &CompileOptions,
        root: impl FnOnce(&mut ExpressionCopy<'_>) -> Result<InstrId>,
    ) -> Result<PositionProgram> {
        let mut copy = ExpressionCopy {
            module,
            outer,
            inline,
            instructions: Vec::new(),
            reads: Vec::new(),
            read_at: HashMap::new(),
            inlined_at: HashMap::new(),
        };
        let root = root(&mut copy)?;
        // Parameters first, numbered in order, as a fused computation has them.
        let mut numbered: Vec<(usize, HloInstruction)> =
            copy.instructions.into_iter().enumerate().collect();
        numbered.sort_by_key(|(_, instr)| !matches!(instr.op, Op::Parameter { .. }));
        let mut new_id = vec![InstrId(0); numbered.len()];
        for (to, &(from, _)) in numbered.iter().enumerate() {
            new_id[from] = InstrId(to as u32);
        }
        let instructions = numbered
            .into_iter()
            .map(|(_, mut instr)| {
                for o in &mut instr.operands {
                    *o = new_id[o.index()];
                }
                instr
            })
            .collect();
        let name = format!("{}.positions", outer.name);
        let sub = HloModule {
            name: name.clone(),
            config: Default::default(),
            computations: vec![HloComputation {
                name: name.clone(),
                instructions,
                root: new_id[root.index()],
            }],
            entry: CompId(0),
            stack_frames: Default::default(),
        };
        let graph = graph::FusedGraph::from_computation(&sub, CompId(0), &name)?;
        let mut program = program::compile(&graph)?;
        if !program.runs_by_positions() {
            return Err(Error::unimplemented(format!(
                "%{name} does not run position by position"
            )));
        }
        if jit_enabled(options)? {
            program.form_runs();
        }
        Ok(PositionProgram {
            program,
            reads: copy.reads,
        })
    }

    /// The outer instructions whose values it reads, in the order
    /// [`PositionProgram::run`] takes their addresses.
    pub fn reads(&self) -> &[InstrId] {
        &self.reads
    }

    /// The element type of its value.
    pub fn element_type(&self) -> platform_api::ElementType {
        self.program.outputs[0].ty
    }

    /// Positions of its value.
    pub fn positions(&self) -> usize {
        self.program.outputs[0].count
    }

    /// Writes positions `range` of the value to `out`.
    ///
    /// # Safety
    /// `reads` are the addresses of [`PositionProgram::reads`]' whole values,
    /// in that order; `out` has room for `range.len()` elements; `range` lies
    /// inside the value.
    pub unsafe fn run(&self, reads: &[*const u8], out: *mut u8, range: std::ops::Range<usize>) {
        // SAFETY: forwarded; `build` checked `runs_by_positions`.
        unsafe { exec::run_positions(&self.program, reads, out, range) }
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
