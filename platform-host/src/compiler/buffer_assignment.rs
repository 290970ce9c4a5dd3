//! Buffer assignment: where every value of a computation lives while it runs.
//!
//! # Values and aliases
//! A *value* is one array leaf defined by one instruction. Instructions that only
//! rename data define nothing: `get-tuple-element`, `tuple`, `reshape` (values are
//! row-major, so a reshape is the same bytes), `copy` (after layout
//! normalization), `opt-barrier`, `add-dependency`, `after-all`. Each of their
//! leaves *is* a leaf of an operand.
//!
//! A value is live from the instruction that defines it to the last instruction
//! that reads it directly or through an alias; the computation's results are
//! live to the end.
//!
//! # Buffers
//! Values are grouped into *buffers* (one memory block each). A value joins its
//! operand's buffer, instead of getting its own, when the instruction may write
//! its result over that operand (an elementwise op, `dynamic-update-slice`,
//! `scatter`, `sort`, `while`, an elementwise fusion: see [`in_place_candidates`]), the
//! operand's buffer dies at that instruction, the sizes agree, and the buffer is
//! writable (not a constant, not a caller's read-only parameter).
//!
//! A buffer may be *pinned* to memory the caller supplies: parameter leaf `k`,
//! output leaf `k`, or a constant. Values the computation returns are pinned to
//! their output leaf (so the instruction computing a result writes it in place,
//! and in-place chains leading to it run in the output buffer too); in a `while`
//! body, output leaf `k` is pinned to parameter leaf `k`, the loop state. Where
//! a result cannot be pinned (it is a parameter, a constant, or appears twice),
//! a final copy moves it, or for the entry computation the executable returns
//! the argument buffer or an earlier output instead.
//!
//! An unpinned buffer whose life ends before an output buffer's first value is
//! computed may live inside that output buffer (`lodge_in_outputs`; [`assign`]
//! says when a result is not merged into a temporary to make room); every
//! other unpinned buffer goes into the temp arena, each placed at the lowest
//! aligned offset (64 bytes, or a smaller buffer's size rounded up to a power
//! of two, at least 16: [`alignment`]) that no buffer live at the same time occupies
//! (greedy interval packing), trying several orders and keeping the smallest
//! arena (`pack_arena`).

use crate::thunk::{Allocation, BufferSlice, ConstantBytes};
use platform_api::hlo::{HloComputation, HloInstruction, InstrId, Op};
use platform_api::{ArrayShape, Error, HloModule, Literal, Result, Shape};
use std::sync::Arc;

/// Offsets in the arena are multiples of this, for buffers of at least as
/// many bytes (see [`alignment`]).
pub const SLICE_ALIGNMENT: usize = 64;

/// The alignment of a buffer of `size` bytes in the arena:
/// [`SLICE_ALIGNMENT`], or for a smaller buffer the power of two that holds
/// it, at least 16 (the widest element). No vector access wider than the
/// buffer can use an alignment it lacks, while a scalar given a line of its
/// own made a small loop's state (two counters) cost 128 bytes.
fn alignment(size: usize) -> usize {
    size.checked_next_power_of_two()
        .unwrap_or(SLICE_ALIGNMENT)
        .clamp(16, SLICE_ALIGNMENT)
}

/// How a sequence exchanges data with its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Results go to caller-supplied output leaves.
    Separate {
        /// Whether buffers computed before a result may live in its output
        /// buffer (false when the caller may hand in an output that is also a
        /// parameter: then only the root instruction may write it).
        absorb: bool,
        /// The entry computation: a result that is a parameter leaf, or that
        /// repeats another result, is returned as that buffer instead of copied.
        alias_results: bool,
    },
    /// A `while` body: result leaf `k` becomes parameter leaf `k`.
    IntoParams,
}

/// The calling convention of a sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequenceMode {
    /// Whether the sequence may overwrite its parameter leaves once dead.
    pub params_writable: bool,
    pub outputs: OutputMode,
}

pub use crate::thunk::OutputSource;

/// A copy the sequence performs after its last instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalCopy {
    pub src: BufferSlice,
    pub dst: BufferSlice,
}

/// Where every value of a computation lives.
pub struct BufferAssignment {
    pub allocations: Vec<Allocation>,
    pub temp_bytes: usize,
    /// Per instruction, one slice per array leaf (preorder).
    pub leaf_slices: Vec<Vec<BufferSlice>>,
    /// Per instruction, its scratch slice (when it asked for scratch).
    pub scratch: Vec<Option<BufferSlice>>,
    /// Copies to run after the last instruction, in order.
    pub final_copies: Vec<FinalCopy>,
    /// Per result leaf, how it is produced (all `Written` except in the entry).
    pub output_sources: Vec<OutputSource>,
    pub parameter_leaf_bytes: Vec<usize>,
    pub output_leaf_bytes: Vec<usize>,
}

impl BufferAssignment {
    /// The slices of an instruction's leaves.
    pub fn slices(&self, id: InstrId) -> &[BufferSlice] {
        &self.leaf_slices[id.index()]
    }
}

/// What the nested sequences and fusions compiled before buffer assignment
/// ask of it, per instruction.
pub struct NestedNeeds<'a> {
    /// Scratch bytes the instruction needs while it runs (a nested arena).
    pub scratch_bytes: &'a [usize],
    /// For a fusion, the operands its results may be written over.
    pub fusion_in_place: &'a [Vec<crate::fusion::InPlace>],
    /// Instructions whose values no thunk reads: a later thunk computes
    /// them itself. They get no room (empty if shorter than the
    /// computation).
    pub elided: &'a [bool],
    /// Per instruction, values it reads beyond its operands (those the
    /// elided values were computed from): they live until it runs.
    pub extra_reads: &'a [Vec<InstrId>],
}

/// Array leaf sizes of a shape, in preorder.
pub fn leaf_bytes(shape: &Shape) -> Vec<usize> {
    shape.leaves().iter().map(|(_, a)| a.byte_size()).collect()
}

/// Number of array leaves in a shape.
pub fn leaf_count(shape: &Shape) -> usize {
    shape.leaves().len()
}

/// Whether an instruction defines no values of its own (its leaves are its
/// operands' leaves).
pub fn is_alias(op: &Op) -> bool {
    matches!(
        op,
        Op::GetTupleElement { .. }
            | Op::Tuple
            | Op::Reshape
            | Op::Copy
            | Op::OptimizationBarrier
            | Op::AddDependency
            | Op::AfterAll
            | Op::AllReduceDone
            | Op::AllGatherDone
            | Op::CollectivePermuteDone
    )
}

/// One way an instruction may write result leaf `result_leaf` over leaf
/// `operand_leaf` of operand `operand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlace {
    pub result_leaf: usize,
    pub operand: usize,
    pub operand_leaf: usize,
    /// Elementwise: element `i` of the result is written after element `i` of the
    /// operand is read and no other element of it is read afterwards, so the
    /// operand may appear in other operands too.
    pub elementwise: bool,
}

/// The operands an instruction's kernel can overwrite with its result.
///
/// `fusion_in_place` is, for a fusion, what its plan said it may overwrite
/// ([`crate::fusion::FusionPlan::in_place_operands`]).
pub fn in_place_candidates(
    comp: &HloComputation,
    instr: &HloInstruction,
    fusion_in_place: &[crate::fusion::InPlace],
) -> Vec<InPlace> {
    // Whether operand `operand` is an array the result array `r` fits over.
    let fits = |operand: usize, r: &ArrayShape| -> bool {
        match instr.operands.get(operand).map(|&id| &comp.instr(id).shape) {
            Some(Shape::Array(a)) => {
                a.element_count() == r.element_count() && a.byte_size() == r.byte_size()
            }
            _ => false,
        }
    };
    let same_array =
        |operand: usize| -> bool { matches!(&instr.shape, Shape::Array(r) if fits(operand, r)) };
    let elementwise = |ops: &[usize]| -> Vec<InPlace> {
        ops.iter()
            .copied()
            .filter(|&o| same_array(o))
            .map(|o| InPlace {
                result_leaf: 0,
                operand: o,
                operand_leaf: 0,
                elementwise: true,
            })
            .collect()
    };
    // Result leaf `k` over operand `k` (a whole array), not elementwise.
    let kth_over_kth = |k: usize| InPlace {
        result_leaf: k,
        operand: k,
        operand_leaf: 0,
        elementwise: false,
    };
    let all: Vec<usize> = (0..instr.operands.len()).collect();
    match &instr.op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare { .. }
        | Op::Select
        | Op::Clamp
        | Op::Convert
        | Op::BitcastConvert
        | Op::ReducePrecision { .. } => elementwise(&all),
        Op::DynamicUpdateSlice if same_array(0) => vec![InPlace {
            result_leaf: 0,
            operand: 0,
            operand_leaf: 0,
            elementwise: false,
        }],
        Op::Scatter { .. } => {
            let n = instr.operands.len().saturating_sub(1) / 2;
            (0..n).map(kth_over_kth).collect()
        }
        Op::While { .. } => (0..leaf_count(&instr.shape))
            .map(|k| InPlace {
                result_leaf: k,
                operand: 0,
                operand_leaf: k,
                elementwise: false,
            })
            .collect(),
        // The sort kernel stages a line before permuting it when its result
        // and operand share a buffer (`kernels::sort`).
        Op::Sort { .. } => {
            let results = instr.shape.leaves();
            (0..instr.operands.len())
                .filter(|&k| results.get(k).is_some_and(|(_, r)| fits(k, r)))
                .map(kth_over_kth)
                .collect()
        }
        Op::CustomCall(attrs) if attrs.target == crate::fma::FMA_TARGET => elementwise(&all),
        Op::Fusion { .. } => {
            let results = instr.shape.leaves();
            fusion_in_place
                .iter()
                .filter(|p| {
                    results
                        .get(p.result)
                        .is_some_and(|(_, r)| fits(p.operand, r))
                })
                .map(|p| InPlace {
                    result_leaf: p.result,
                    operand: p.operand,
                    operand_leaf: 0,
                    elementwise: p.elementwise,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pin {
    Param(usize),
    Out(usize),
    Const(usize),
}

struct Value {
    def: usize,
    size: usize,
    last_use: usize,
    pin: Option<Pin>,
    /// The location this value should end up in (results).
    wanted: Option<Pin>,
    buffer: usize,
}

struct Buffer {
    size: usize,
    start: usize,
    end: usize,
    pin: Option<Pin>,
    /// The instruction that last merged a value into this buffer.
    last_merge: Option<usize>,
    /// For an unpinned buffer whose life ends before an output buffer's
    /// begins: that output buffer, which holds it (at `offset`) instead of
    /// the arena.
    host: Option<usize>,
    offset: usize,
}

impl Buffer {
    /// Whether the two are live at some common step.
    fn live_with(&self, other: &Buffer) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// For each state leaf of a `while` whose body is `body`: whether the body's
/// result leaf is its parameter's leaf, unchanged (through aliases only). Such a
/// leaf is never written by the loop: the body keeps it live to its end, so no
/// in-place merge can reuse its buffer.
pub fn while_invariant_leaves(module: &HloModule, body: platform_api::hlo::CompId) -> Vec<bool> {
    let Some(comp) = module.computations.get(body.index()) else {
        return Vec::new();
    };
    // The parameter leaf each instruction leaf is, if any (aliases only).
    let mut origin: Vec<Vec<Option<usize>>> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let operand = |k: usize| -> Option<&Vec<Option<usize>>> {
            instr.operands.get(k).and_then(|o| origin.get(o.index()))
        };
        let count = leaf_count(&instr.shape);
        let mine: Vec<Option<usize>> = match &instr.op {
            Op::Parameter { number: 0 } => (0..count).map(Some).collect(),
            Op::GetTupleElement { index } => {
                let shape = instr.operands.first().map(|o| &comp.instr(*o).shape);
                let start: usize = shape
                    .map(|s| s.tuple_shapes().iter().take(*index).map(leaf_count).sum())
                    .unwrap_or(0);
                operand(0)
                    .and_then(|o| o.get(start..start + count))
                    .map(|s| s.to_vec())
                    .unwrap_or_else(|| vec![None; count])
            }
            Op::Tuple => (0..instr.operands.len())
                .flat_map(|k| operand(k).cloned().unwrap_or_default())
                .collect(),
            Op::Reshape | Op::Copy | Op::OptimizationBarrier => {
                operand(0).cloned().unwrap_or_else(|| vec![None; count])
            }
            _ => vec![None; count],
        };
        origin.push(if mine.len() == count {
            mine
        } else {
            vec![None; count]
        });
    }
    origin
        .get(comp.root.index())
        .map(|leaves| {
            leaves
                .iter()
                .enumerate()
                .map(|(k, o)| *o == Some(k))
                .collect()
        })
        .unwrap_or_default()
}

/// Assigns buffers for `comp` under calling convention `mode`; `nested` says
/// what each instruction's nested sequence or fusion plan needs (scratch bytes,
/// in-place operands). The steps, in order: the values each instruction's
/// leaves are, their liveness, where results want to be, buffers (merging
/// in-place results into dying operands), how results reach the caller,
/// scratch, packing the arena, and the slices of every leaf.
///
/// A temporary merged into an output buffer (a result computed in place over
/// it) makes that buffer busy from the temporary's start, so nothing that
/// dies before can lodge in it (`lodge_in_outputs`). When that happened, the
/// assignment is made a second time without such merges, and the smaller
/// arena is kept. An embedding bag's `maximum(dot(sums, w), 0)`: with the
/// product merged into the result, the sums (read by the product) need arena
/// room; without, they lodge in the result and the product takes the dead
/// gather's bytes.
pub fn assign(
    module: &HloModule,
    comp: &HloComputation,
    mode: SequenceMode,
    nested: &NestedNeeds<'_>,
) -> Result<BufferAssignment> {
    let (first, absorbed) = assign_with(module, comp, mode, nested, true)?;
    if !absorbed {
        return Ok(first);
    }
    let (second, _) = assign_with(module, comp, mode, nested, false)?;
    Ok(if second.temp_bytes < first.temp_bytes {
        second
    } else {
        first
    })
}

/// [`assign`], with temporaries merged into output buffers or not; also
/// says whether one was.
fn assign_with(
    module: &HloModule,
    comp: &HloComputation,
    mode: SequenceMode,
    nested: &NestedNeeds<'_>,
    absorb_temporaries: bool,
) -> Result<(BufferAssignment, bool)> {
    let mut a = Assigner::new(module, comp, mode, absorb_temporaries);
    a.elided = nested.elided;
    a.extra_reads = nested.extra_reads;
    a.define_values()?;
    a.compute_liveness();
    a.want_results_in_place();
    a.form_buffers(nested);
    let routes = a.route_results();
    let scratch = a.add_scratch(nested.scratch_bytes);
    if a.absorb() && matches!(a.mode.outputs, OutputMode::Separate { .. }) {
        lodge_in_outputs(&mut a.buffers);
    }
    let temp_bytes = pack_arena(&mut a.buffers);
    let absorbed = a.absorbed_temporary;
    Ok((a.into_assignment(routes, &scratch, temp_bytes), absorbed))
}

/// The state of one computation's buffer assignment, step by step (see
/// [`assign`]).
struct Assigner<'a> {
    module: &'a HloModule,
    comp: &'a HloComputation,
    mode: SequenceMode,
    values: Vec<Value>,
    buffers: Vec<Buffer>,
    /// Per instruction, the value of each of its array leaves.
    leaves: Vec<Vec<usize>>,
    /// Constant leaves, in the order their values pin them.
    constants: Vec<Arc<ConstantBytes>>,
    /// Per parameter instruction, the number of its first parameter leaf.
    param_leaf_base: Vec<usize>,
    parameter_leaf_bytes: Vec<usize>,
    output_leaf_bytes: Vec<usize>,
    /// Whether a result that wants an output buffer may be computed in place
    /// over an unpinned operand (which then becomes that output buffer).
    absorb_temporaries: bool,
    /// Whether that happened.
    absorbed_temporary: bool,
    /// See [`NestedNeeds::elided`] and [`NestedNeeds::extra_reads`].
    elided: &'a [bool],
    extra_reads: &'a [Vec<InstrId>],
}

/// How results that did not land where they belong reach the caller.
struct ResultRoutes {
    output_sources: Vec<OutputSource>,
    /// (source buffer, destination) copies after the last instruction.
    copies: Vec<(usize, Pin)>,
    /// (parameter buffer, staging buffer): copies run before `copies`, so the
    /// copies into a `while` body's parameter buffers cannot clobber a source.
    staged: Vec<(usize, usize)>,
}

impl<'a> Assigner<'a> {
    fn new(
        module: &'a HloModule,
        comp: &'a HloComputation,
        mode: SequenceMode,
        absorb_temporaries: bool,
    ) -> Self {
        let n = comp.instructions.len();
        let mut param_leaf_base = vec![0usize; n];
        let mut parameter_leaf_bytes = Vec::new();
        for p in comp.parameters() {
            param_leaf_base[p.index()] = parameter_leaf_bytes.len();
            parameter_leaf_bytes.extend(leaf_bytes(&comp.instr(p).shape));
        }
        Assigner {
            module,
            comp,
            mode,
            values: Vec::new(),
            buffers: Vec::new(),
            leaves: Vec::with_capacity(n),
            constants: Vec::new(),
            param_leaf_base,
            parameter_leaf_bytes,
            output_leaf_bytes: leaf_bytes(&comp.root_instr().shape),
            absorb_temporaries,
            absorbed_temporary: false,
            elided: &[],
            extra_reads: &[],
        }
    }

    /// The position of "after the last instruction".
    fn end(&self) -> usize {
        self.comp.instructions.len()
    }

    fn new_value(&mut self, def: usize, size: usize, pin: Option<Pin>) -> usize {
        self.values.push(Value {
            def,
            size,
            last_use: def,
            pin,
            wanted: None,
            buffer: usize::MAX,
        });
        self.values.len() - 1
    }

    /// Step 1: the values each instruction's leaves are.
    fn define_values(&mut self) -> Result<()> {
        let comp = self.comp;
        for (i, instr) in comp.instructions.iter().enumerate() {
            let mine = self.leaf_values(i, instr)?;
            let sizes = leaf_bytes(&instr.shape);
            if mine.len() != sizes.len() {
                return Err(Error::invalid_argument(format!(
                    "%{} of shape {} has {} array leaves but its operands provide {}",
                    instr.name,
                    instr.shape,
                    sizes.len(),
                    mine.len()
                )));
            }
            if is_alias(&instr.op) {
                for (&v, &want) in mine.iter().zip(&sizes) {
                    let elided = self.elided.get(self.values[v].def) == Some(&true);
                    if self.values[v].size != want && !elided {
                        return Err(Error::invalid_argument(format!(
                            "%{} ({}) changes the byte size of its operand: {} to {}",
                            instr.name,
                            instr.opcode(),
                            self.values[v].size,
                            want
                        )));
                    }
                }
            }
            self.leaves.push(mine);
        }
        Ok(())
    }

    /// The values of instruction `i`'s leaves: new ones for what it computes,
    /// its operands' for what it only renames.
    fn leaf_values(&mut self, i: usize, instr: &HloInstruction) -> Result<Vec<usize>> {
        let operand_leaves = |leaves: &[Vec<usize>], k: usize| -> Result<Vec<usize>> {
            let id = instr.operand(k)?;
            leaves.get(id.index()).cloned().ok_or_else(|| {
                Error::invalid_argument(format!("%{} uses an operand defined after it", instr.name))
            })
        };
        Ok(match &instr.op {
            Op::Parameter { .. } => {
                let base = self.param_leaf_base[i];
                leaf_bytes(&instr.shape)
                    .into_iter()
                    .enumerate()
                    .map(|(k, size)| self.new_value(i, size, Some(Pin::Param(base + k))))
                    .collect()
            }
            Op::Constant { literal } => {
                let mut ids = Vec::new();
                for leaf in literal.clone().flatten_leaves() {
                    let bytes = leaf.bytes()?;
                    self.constants.push(Arc::new(ConstantBytes::new(bytes)));
                    let c = self.constants.len() - 1;
                    ids.push(self.new_value(i, bytes.len(), Some(Pin::Const(c))));
                }
                ids
            }
            // The done of an asynchronous collective is its start's element
            // 1, the result the start's thunk wrote.
            op @ (Op::GetTupleElement { .. } | Op::AllGatherDone | Op::CollectivePermuteDone) => {
                let index = match op {
                    Op::GetTupleElement { index } => *index,
                    _ => 1,
                };
                let operand_shape = &self.comp.instr(instr.operand(0)?).shape;
                let elements = operand_shape.tuple_shapes();
                let start: usize = elements.iter().take(index).map(leaf_count).sum();
                let count = elements.get(index).map(leaf_count).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "%{}: tuple index {index} out of range for {operand_shape}",
                        instr.name
                    ))
                })?;
                operand_leaves(&self.leaves, 0)?
                    .get(start..start + count)
                    .ok_or_else(|| Error::internal(format!("%{}: leaf range", instr.name)))?
                    .to_vec()
            }
            Op::Tuple => {
                let mut all = Vec::new();
                for k in 0..instr.operands.len() {
                    all.extend(operand_leaves(&self.leaves, k)?);
                }
                all
            }
            Op::Reshape
            | Op::Copy
            | Op::OptimizationBarrier
            | Op::AddDependency
            | Op::AllReduceDone => operand_leaves(&self.leaves, 0)?,
            Op::AfterAll => Vec::new(),
            Op::While { body, .. } => {
                // Loop-invariant state (the body returns its parameter's leaf
                // unchanged, so never writes it) is the initial value itself:
                // no copy, even when that value is read-only.
                let invariant = while_invariant_leaves(self.module, *body);
                let init = operand_leaves(&self.leaves, 0)?;
                leaf_bytes(&instr.shape)
                    .into_iter()
                    .enumerate()
                    .map(|(k, size)| match (invariant.get(k), init.get(k)) {
                        (Some(true), Some(&v)) => v,
                        _ => self.new_value(i, size, None),
                    })
                    .collect()
            }
            _ => {
                let elided = self.elided.get(i).copied().unwrap_or(false);
                leaf_bytes(&instr.shape)
                    .into_iter()
                    .map(|size| self.new_value(i, if elided { 0 } else { size }, None))
                    .collect()
            }
        })
    }

    /// Step 2: each value lives to its last direct or aliased reader; results
    /// to the end.
    fn compute_liveness(&mut self) {
        for (i, instr) in self.comp.instructions.iter().enumerate() {
            if is_alias(&instr.op) {
                continue;
            }
            for o in instr.operands.iter() {
                for &v in &self.leaves[o.index()] {
                    self.values[v].last_use = self.values[v].last_use.max(i);
                }
            }
        }
        for (i, reads) in self.extra_reads.iter().enumerate() {
            for id in reads {
                for &v in self.leaves.get(id.index()).map_or(&[][..], Vec::as_slice) {
                    self.values[v].last_use = self.values[v].last_use.max(i);
                }
            }
        }
        let end = self.end();
        for &v in &self.leaves[self.comp.root.index()] {
            self.values[v].last_use = end;
        }
    }

    /// Step 3: where results want to be (their output leaf, or in a `while`
    /// body the loop state's parameter leaf).
    fn want_results_in_place(&mut self) {
        let root_leaves = self.leaves[self.comp.root.index()].clone();
        for (k, &v) in root_leaves.iter().enumerate() {
            let value = &mut self.values[v];
            if value.pin.is_some() || value.wanted.is_some() {
                continue;
            }
            value.wanted = Some(match self.mode.outputs {
                OutputMode::Separate { .. } => Pin::Out(k),
                OutputMode::IntoParams => Pin::Param(k),
            });
        }
    }

    /// Whether buffers computed before a result may live in its output buffer.
    fn absorb(&self) -> bool {
        match self.mode.outputs {
            OutputMode::Separate { absorb, .. } => absorb,
            OutputMode::IntoParams => true,
        }
    }

    /// Whether a buffer with this pin may be written by the computation.
    fn writable(&self, pin: Option<Pin>) -> bool {
        match pin {
            None => true,
            Some(Pin::Param(_)) => self.mode.params_writable,
            Some(Pin::Out(_)) => self.absorb(),
            Some(Pin::Const(_)) => false,
        }
    }

    fn new_buffer(&mut self, v: usize, pin: Option<Pin>) -> usize {
        let value = &self.values[v];
        self.buffers.push(Buffer {
            size: value.size,
            start: value.def,
            end: value.last_use,
            pin,
            last_merge: None,
            host: None,
            offset: 0,
        });
        self.buffers.len() - 1
    }

    /// Step 4: buffers, merging in-place results into their operands' buffers.
    fn form_buffers(&mut self, nested: &NestedNeeds<'_>) {
        let comp = self.comp;
        let n = comp.instructions.len();
        let mut defined_at: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (vi, v) in self.values.iter().enumerate() {
            defined_at[v.def].push(vi);
        }
        for (i, instr) in comp.instructions.iter().enumerate() {
            if is_alias(&instr.op) {
                continue;
            }
            // Parameters and constants get their pinned buffers.
            if matches!(instr.op, Op::Parameter { .. } | Op::Constant { .. }) {
                for &v in &defined_at[i] {
                    let b = self.new_buffer(v, self.values[v].pin);
                    self.values[v].buffer = b;
                }
                continue;
            }
            let fusion_in_place = nested.fusion_in_place.get(i).map_or(&[][..], Vec::as_slice);
            let candidates = in_place_candidates(comp, instr, fusion_in_place);
            for leaf in 0..self.leaves[i].len() {
                let v = self.leaves[i][leaf];
                if self.values[v].def != i || self.values[v].buffer != usize::MAX {
                    continue;
                }
                let merged = candidates
                    .iter()
                    .filter(|c| c.result_leaf == leaf)
                    .any(|c| self.merge_into_operand(i, instr, v, c));
                if !merged {
                    let pin = match self.values[v].wanted {
                        Some(Pin::Out(k)) => Some(Pin::Out(k)),
                        _ => None,
                    };
                    let b = self.new_buffer(v, pin);
                    self.buffers[b].last_merge = Some(i);
                    self.values[v].buffer = b;
                }
            }
        }
    }

    /// Puts value `v` (a result leaf of instruction `i`) in the buffer of the
    /// operand leaf `c` names, if that buffer dies here, fits, is writable for
    /// what `v` wants to be, and no other operand of `i` reads it (unless the
    /// instruction is elementwise, reading each element before writing it).
    fn merge_into_operand(
        &mut self,
        i: usize,
        instr: &HloInstruction,
        v: usize,
        c: &InPlace,
    ) -> bool {
        let Some(operand) = instr.operands.get(c.operand) else {
            return false;
        };
        let Some(&x) = self.leaves[operand.index()].get(c.operand_leaf) else {
            return false;
        };
        let b = self.values[x].buffer;
        if b == usize::MAX {
            return false;
        }
        let wanted = self.values[v].wanted;
        let buf = &self.buffers[b];
        let pins_agree = match (buf.pin, wanted) {
            (None, None) => true,
            (None, Some(Pin::Out(_))) => self.absorb() && self.absorb_temporaries,
            (None, Some(_)) => false,
            (Some(p), None) => self.writable(Some(p)),
            (Some(p), Some(q)) => p == q && self.writable(Some(p)),
        };
        let used_elsewhere = !c.elementwise
            && instr.operands.iter().enumerate().any(|(j, o)| {
                self.leaves[o.index()].iter().enumerate().any(|(l, &y)| {
                    (j != c.operand || l != c.operand_leaf) && self.values[y].buffer == b
                })
            });
        if buf.end != i
            || buf.size != self.values[v].size
            || buf.last_merge == Some(i)
            || !pins_agree
            || used_elsewhere
        {
            return false;
        }
        let last_use = self.values[v].last_use;
        let buf = &mut self.buffers[b];
        buf.end = buf.end.max(last_use);
        buf.last_merge = Some(i);
        if buf.pin.is_none() {
            buf.pin = wanted;
            self.absorbed_temporary |= matches!(wanted, Some(Pin::Out(_)));
        }
        self.values[v].buffer = b;
        true
    }

    /// Step 5: results that did not land where they belong are returned as
    /// another buffer (the entry computation), moved, or copied at the end.
    fn route_results(&mut self) -> ResultRoutes {
        let root_leaves = self.leaves[self.comp.root.index()].clone();
        let mut routes = ResultRoutes {
            output_sources: vec![OutputSource::Written; root_leaves.len()],
            copies: Vec::new(),
            staged: Vec::new(),
        };
        for (k, &v) in root_leaves.iter().enumerate() {
            let b = self.values[v].buffer;
            match self.mode.outputs {
                OutputMode::Separate { alias_results, .. } => {
                    self.route_separate(k, b, alias_results, &mut routes)
                }
                OutputMode::IntoParams => self.route_into_params(k, b, &mut routes),
            }
        }
        routes
    }

    fn route_separate(&self, k: usize, b: usize, alias_results: bool, routes: &mut ResultRoutes) {
        let pin = self.buffers[b].pin;
        if pin == Some(Pin::Out(k)) {
            return;
        }
        if alias_results {
            match pin {
                Some(Pin::Param(j)) => {
                    routes.output_sources[k] = OutputSource::Parameter(j);
                    return;
                }
                Some(Pin::Out(m)) => {
                    routes.output_sources[k] = OutputSource::SameAs(m);
                    return;
                }
                _ => {}
            }
        }
        routes.copies.push((b, Pin::Out(k)));
    }

    fn route_into_params(&mut self, k: usize, b: usize, routes: &mut ResultRoutes) {
        match self.buffers[b].pin {
            Some(Pin::Param(j)) if j == k => {}
            Some(Pin::Param(_)) => {
                // Another parameter's buffer: stage it in a temp first, so the
                // copies into parameter buffers cannot clobber it.
                let end = self.end();
                let stage = self.buffers.len();
                self.buffers.push(Buffer {
                    size: self.buffers[b].size,
                    start: end,
                    end: end + 1,
                    pin: None,
                    last_merge: None,
                    host: None,
                    offset: 0,
                });
                routes.staged.push((b, stage));
                routes.copies.push((stage, Pin::Param(k)));
            }
            None => {
                // Move the whole buffer into the loop state if the state's own
                // buffer is dead before this one starts, and no earlier result
                // leaf copies from it (a value returned in two slots: moving it
                // would leave that copy reading an emptied buffer).
                let already_a_source = routes.copies.iter().any(|&(src, _)| src == b);
                let target = self
                    .buffers
                    .iter()
                    .position(|t| t.pin == Some(Pin::Param(k)));
                match target {
                    Some(t)
                        if !already_a_source
                            && self.buffers[t].end < self.buffers[b].start
                            && self.buffers[t].size == self.buffers[b].size =>
                    {
                        let end_b = self.buffers[b].end;
                        self.buffers[t].end = self.buffers[t].end.max(end_b);
                        for val in self.values.iter_mut() {
                            if val.buffer == b {
                                val.buffer = t;
                            }
                        }
                        // `b` is now empty; give it no space.
                        self.buffers[b].size = 0;
                        self.buffers[b].pin = Some(Pin::Param(k));
                    }
                    _ => routes.copies.push((b, Pin::Param(k))),
                }
            }
            Some(_) => routes.copies.push((b, Pin::Param(k))),
        }
    }

    /// Step 6: a buffer for each instruction's scratch, live while it runs.
    fn add_scratch(&mut self, scratch_bytes: &[usize]) -> Vec<Option<usize>> {
        let n = self.comp.instructions.len();
        let mut scratch_buffer = vec![None; n];
        for (i, &bytes) in scratch_bytes.iter().enumerate().take(n) {
            if bytes > 0 {
                self.buffers.push(Buffer {
                    size: bytes,
                    start: i,
                    end: i,
                    pin: None,
                    last_merge: None,
                    host: None,
                    offset: 0,
                });
                scratch_buffer[i] = Some(self.buffers.len() - 1);
            }
        }
        scratch_buffer
    }

    /// Step 8: the allocation table and every leaf's slice.
    fn into_assignment(
        self,
        routes: ResultRoutes,
        scratch_buffer: &[Option<usize>],
        temp_bytes: usize,
    ) -> BufferAssignment {
        let mut allocations = vec![Allocation::Temp];
        let param_alloc = allocations.len();
        for leaf in 0..self.parameter_leaf_bytes.len() {
            allocations.push(Allocation::Parameter { leaf });
        }
        let out_alloc = allocations.len();
        for leaf in 0..self.output_leaf_bytes.len() {
            allocations.push(Allocation::Output { leaf });
        }
        let const_alloc = allocations.len();
        for bytes in &self.constants {
            allocations.push(Allocation::Constant(bytes.clone()));
        }
        let slice_of_pin = |pin: Pin, size: usize| -> BufferSlice {
            let allocation = match pin {
                Pin::Param(k) => param_alloc + k,
                Pin::Out(k) => out_alloc + k,
                Pin::Const(c) => const_alloc + c,
            };
            BufferSlice {
                allocation: allocation as u32,
                offset: 0,
                size,
            }
        };
        let buffers = &self.buffers;
        let buffer_slice = |b: usize, size: usize| -> BufferSlice {
            let lodged = buffers[b].host.and_then(|h| buffers[h].pin);
            match (buffers[b].pin, lodged) {
                (Some(pin), _) => slice_of_pin(pin, size),
                (None, Some(pin)) => BufferSlice {
                    offset: buffers[b].offset,
                    ..slice_of_pin(pin, size)
                },
                (None, None) => BufferSlice {
                    allocation: 0,
                    offset: buffers[b].offset,
                    size,
                },
            }
        };
        let values = &self.values;
        let leaf_slices: Vec<Vec<BufferSlice>> = self
            .leaves
            .iter()
            .map(|ls| {
                ls.iter()
                    .map(|&v| buffer_slice(values[v].buffer, values[v].size))
                    .collect()
            })
            .collect();
        let scratch = scratch_buffer
            .iter()
            .map(|b| b.map(|b| buffer_slice(b, buffers[b].size)))
            .collect();
        let mut final_copies = Vec::new();
        for (from, stage) in routes.staged {
            let size = buffers[from].size;
            final_copies.push(FinalCopy {
                src: buffer_slice(from, size),
                dst: buffer_slice(stage, size),
            });
        }
        for (from, to) in routes.copies {
            let size = buffers[from].size;
            final_copies.push(FinalCopy {
                src: buffer_slice(from, size),
                dst: slice_of_pin(to, size),
            });
        }
        BufferAssignment {
            allocations,
            temp_bytes,
            leaf_slices,
            scratch,
            final_copies,
            output_sources: routes.output_sources,
            parameter_leaf_bytes: self.parameter_leaf_bytes,
            output_leaf_bytes: self.output_leaf_bytes,
        }
    }
}

/// Step 6b: an output buffer holds nothing until its first value is
/// computed, so temporaries that die before then may live in it instead of
/// the arena (XLA does the same: a training step's forward activations sit in
/// the buffer its weight update is written to at the end). Output buffers are
/// filled largest first, each with the largest such temporaries first, at the
/// lowest offset no temporary it already holds, live at the same time,
/// occupies. Only where outputs are the computation's own (not a `while`
/// body's parameters, and no caller-supplied output that is also an input).
fn lodge_in_outputs(buffers: &mut [Buffer]) {
    let mut hosts: Vec<usize> = (0..buffers.len())
        .filter(|&h| matches!(buffers[h].pin, Some(Pin::Out(_))) && buffers[h].size > 0)
        .collect();
    hosts.sort_by(|&a, &b| buffers[b].size.cmp(&buffers[a].size).then(a.cmp(&b)));
    let mut guests: Vec<usize> = (0..buffers.len())
        .filter(|&b| buffers[b].pin.is_none() && buffers[b].size > 0)
        .collect();
    guests.sort_by(|&a, &b| {
        buffers[b]
            .size
            .cmp(&buffers[a].size)
            .then(buffers[a].start.cmp(&buffers[b].start))
    });
    for h in hosts {
        let (room, opens) = (buffers[h].size, buffers[h].start);
        let mut lodged: Vec<usize> = Vec::new();
        for &g in &guests {
            let (stop, size) = (buffers[g].end, buffers[g].size);
            if buffers[g].host.is_some() || stop >= opens || size > room {
                continue;
            }
            let busy = lodged
                .iter()
                .filter(|&&p| buffers[p].live_with(&buffers[g]))
                .map(|&p| (buffers[p].offset, buffers[p].offset + buffers[p].size));
            let offset = lowest_free_offset(busy.collect(), size);
            if offset + size <= room {
                buffers[g].host = Some(h);
                buffers[g].offset = offset;
                lodged.push(g);
            }
        }
    }
}

/// Most shuffled orders [`pack_arena`] tries.
const MAX_SHUFFLES: usize = 64;
/// Placement work (orders × buffers²) the shuffled orders may cost.
const SHUFFLE_BUDGET: usize = 1 << 22;

/// Step 7: packs every unpinned buffer into the temp arena; returns the
/// arena's size.
///
/// Each buffer in turn goes to the lowest aligned offset that no buffer live
/// at the same time occupies. The order decides how well that packs, and no
/// single order wins everywhere: largest first leaves a long-lived buffer
/// stranded above a short-lived large one (a training step's activations kept
/// for the backward pass), longest-lived first fragments around large
/// temporaries. So the packing is done for a few rule-based orders, then for
/// shuffled ones while a fixed work budget lasts, and the smallest arena is
/// kept (XLA's heap simulator also packs several ways and keeps the best);
/// ties keep the earlier order, and the shuffles' seed is fixed, so plans are
/// deterministic.
fn pack_arena(buffers: &mut [Buffer]) -> usize {
    let candidates: Vec<usize> = (0..buffers.len())
        .filter(|&b| buffers[b].pin.is_none() && buffers[b].host.is_none() && buffers[b].size > 0)
        .collect();
    type Key = fn(&Buffer, &Buffer) -> std::cmp::Ordering;
    let orders: [Key; 4] = [
        // Largest first.
        |a, b| b.size.cmp(&a.size).then(a.start.cmp(&b.start)),
        // Longest-lived first.
        |a, b| {
            (b.end - b.start)
                .cmp(&(a.end - a.start))
                .then(b.size.cmp(&a.size))
                .then(a.start.cmp(&b.start))
        },
        // Largest area (bytes × steps) first.
        |a, b| {
            let area = |x: &Buffer| x.size as u128 * (x.end - x.start + 1) as u128;
            area(b).cmp(&area(a)).then(a.start.cmp(&b.start))
        },
        // In definition order.
        |a, b| a.start.cmp(&b.start).then(b.size.cmp(&a.size)),
    ];
    let mut best: Option<(usize, Vec<usize>)> = None;
    let mut keep_best = |order: &[usize]| {
        let (bytes, offsets) = first_fit(buffers, order);
        if best.as_ref().is_none_or(|(b, _)| bytes < *b) {
            best = Some((bytes, offsets));
        }
    };
    for key in orders {
        let mut order = candidates.clone();
        order.sort_by(|&a, &b| key(&buffers[a], &buffers[b]));
        keep_best(&order);
    }
    // Then shuffled orders, as many as a fixed budget of placement work
    // allows (none for large computations): where the rules above leave a
    // gap, one of these often closes it. The seed is fixed, so a plan is
    // the same on every compile.
    let n = candidates.len().max(1);
    let tries = (SHUFFLE_BUDGET / (n * n)).min(MAX_SHUFFLES);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut order = candidates.clone();
    for _ in 0..tries {
        for i in (1..order.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        keep_best(&order);
    }
    let Some((temp_bytes, offsets)) = best else {
        return 0;
    };
    for (&b, offset) in candidates.iter().zip(offsets) {
        buffers[b].offset = offset;
    }
    temp_bytes
}

/// Places the buffers of `order` one by one at the lowest aligned offset no
/// buffer placed before and live at the same time occupies. Returns the arena
/// size and each candidate's offset (in the order of `order`'s indices
/// sorted, i.e. of the candidates as [`pack_arena`] lists them).
fn first_fit(buffers: &[Buffer], order: &[usize]) -> (usize, Vec<usize>) {
    let mut offset_of = vec![0usize; buffers.len()];
    let mut placed: Vec<usize> = Vec::with_capacity(order.len());
    let mut temp_bytes = 0usize;
    for &b in order {
        let size = buffers[b].size;
        let busy = placed
            .iter()
            .filter(|&&p| buffers[p].live_with(&buffers[b]))
            .map(|&p| (offset_of[p], offset_of[p] + buffers[p].size));
        let offset = lowest_free_offset(busy.collect(), size);
        offset_of[b] = offset;
        temp_bytes = temp_bytes.max(offset + size);
        placed.push(b);
    }
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    (temp_bytes, sorted.iter().map(|&b| offset_of[b]).collect())
}

/// The lowest aligned offset where `size` bytes fit between the `busy`
/// ranges (`[start, end)` byte ranges, in any order).
fn lowest_free_offset(mut busy: Vec<(usize, usize)>, size: usize) -> usize {
    busy.sort_unstable();
    let mut offset = 0usize;
    for (lo, hi) in busy {
        if offset + size <= lo {
            break;
        }
        offset = offset.max(hi.next_multiple_of(alignment(size)));
    }
    offset
}

/// The array leaves of a constant, for callers that need them as literals.
pub fn constant_leaves(literal: &Literal) -> Vec<Literal> {
    literal.clone().flatten_leaves()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(size: usize, start: usize, end: usize) -> Buffer {
        Buffer {
            size,
            start,
            end,
            pin: None,
            last_merge: None,
            host: None,
            offset: 0,
        }
    }

    /// No two buffers live at the same step share a byte, every offset is
    /// aligned, and all fit in the arena.
    fn check_packing(buffers: &[Buffer], arena: usize) {
        for (i, a) in buffers.iter().enumerate() {
            assert_eq!(a.offset % alignment(a.size), 0);
            assert!(a.offset + a.size <= arena, "buffer {i} past the arena");
            for (j, b) in buffers.iter().enumerate().skip(i + 1) {
                let in_time = a.start <= b.end && b.start <= a.end;
                let in_space = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
                assert!(!(in_time && in_space), "buffers {i} and {j} overlap");
            }
        }
    }

    /// The most bytes live at any one step: no packing does better.
    fn live_bound(buffers: &[Buffer]) -> usize {
        let steps = buffers.iter().map(|b| b.end).max().unwrap_or(0);
        (0..=steps)
            .map(|t| {
                buffers
                    .iter()
                    .filter(|b| b.start <= t && t <= b.end)
                    .map(|b| b.size)
                    .sum()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn small_buffers_are_aligned_to_their_size_not_a_line() {
        // Two scalars, a 20-byte value and a line-sized one, all live at
        // once: the line at 0, the 20 bytes at 64 (32-byte aligned), the
        // scalars at 96 and 112 (each at a line of its own: 196 bytes).
        let mut buffers = vec![
            buffer(4, 0, 3),
            buffer(4, 0, 3),
            buffer(20, 1, 3),
            buffer(64, 2, 4),
        ];
        let arena = pack_arena(&mut buffers);
        check_packing(&buffers, arena);
        assert_eq!(
            arena,
            116,
            "{:?}",
            buffers.iter().map(|b| b.offset).collect::<Vec<_>>()
        );
        for (size, want) in [(1, 16), (16, 16), (17, 32), (33, 64), (64, 64), (4096, 64)] {
            assert_eq!(alignment(size), want, "{size} bytes");
        }
    }

    #[test]
    fn a_long_lived_activation_is_not_stranded_above_a_large_gradient() {
        // A training step's shape: an activation kept from the forward pass
        // to the end, pre-activations and gradients of its size live a few
        // steps each, and one larger weight gradient late. Largest first puts
        // the weight gradient at 0 and pushes the activation above it.
        const MB: usize = 1 << 20;
        let mut buffers = vec![
            buffer(MB, 2, 6),          // pre-activation, read by the mask
            buffer(MB, 2, 10),         // activation, read at the end
            buffer(MB, 5, 6),          // gradient
            buffer(MB, 6, 7),          // masked gradient
            buffer(MB + MB / 2, 7, 8), // weight gradient
        ];
        let arena = pack_arena(&mut buffers);
        check_packing(&buffers, arena);
        assert_eq!(arena, live_bound(&buffers));
    }

    #[test]
    fn temporaries_dead_before_an_output_is_written_live_in_it() {
        const MB: usize = 1 << 20;
        let mut output = buffer(2 * MB, 10, 13);
        output.pin = Some(Pin::Out(0));
        let mut buffers = vec![
            output,
            buffer(MB, 0, 5),     // dies early: lodged
            buffer(MB, 3, 8),     // overlaps the first in time: lodged beside it
            buffer(MB, 9, 12),    // still live when the output is written
            buffer(3 * MB, 0, 2), // larger than the output
            buffer(MB, 6, 9),     // dies early: lodged where the first was
        ];
        lodge_in_outputs(&mut buffers);
        let hosts: Vec<Option<usize>> = buffers.iter().map(|b| b.host).collect();
        assert_eq!(hosts, [None, Some(0), Some(0), None, None, Some(0)]);
        let lodged: Vec<Buffer> = buffers
            .iter()
            .filter(|b| b.host.is_some())
            .map(|b| buffer(b.size, b.start, b.end))
            .zip(buffers.iter().filter(|b| b.host.is_some()))
            .map(|(mut copy, b)| {
                copy.offset = b.offset;
                copy
            })
            .collect();
        check_packing(&lodged, 2 * MB);
        // The arena holds only what was not lodged.
        let arena = pack_arena(&mut buffers);
        assert_eq!(arena, 3 * MB);
    }

    #[test]
    fn packings_of_random_lifetimes_are_valid_and_no_worse_than_largest_first() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..200 {
            let n = 1 + next(24);
            let mut buffers: Vec<Buffer> = (0..n)
                .map(|_| {
                    let start = next(30);
                    buffer(1 + next(5000), start, start + next(10))
                })
                .collect();
            let all: Vec<usize> = (0..n).collect();
            let mut largest_first = all.clone();
            largest_first.sort_by(|&a, &b| {
                buffers[b]
                    .size
                    .cmp(&buffers[a].size)
                    .then(buffers[a].start.cmp(&buffers[b].start))
            });
            let (plain, _) = first_fit(&buffers, &largest_first);
            let arena = pack_arena(&mut buffers);
            check_packing(&buffers, arena);
            assert!(arena <= plain);
            assert!(arena >= live_bound(&buffers));
        }
    }
}
