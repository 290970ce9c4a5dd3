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
//! `scatter`, `while`, an elementwise fusion: see [`in_place_candidates`]), the
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
//! Every unpinned buffer goes into the temp arena: buffers sorted by size, each
//! placed at the lowest 64-byte-aligned offset that no buffer live at the same
//! time occupies (greedy interval packing).

use crate::thunk::{Allocation, BufferSlice, ConstantBytes};
use platform_api::hlo::{HloComputation, HloInstruction, InstrId, Op};
use platform_api::{ArrayShape, Error, HloModule, Literal, Result, Shape};
use std::sync::Arc;

/// Offsets in the arena are multiples of this.
pub const SLICE_ALIGNMENT: usize = 64;

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
            (0..n)
                .map(|k| InPlace {
                    result_leaf: k,
                    operand: k,
                    operand_leaf: 0,
                    elementwise: false,
                })
                .collect()
        }
        Op::While { .. } => (0..leaf_count(&instr.shape))
            .map(|k| InPlace {
                result_leaf: k,
                operand: 0,
                operand_leaf: k,
                elementwise: false,
            })
            .collect(),
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
    offset: usize,
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
pub fn assign(
    module: &HloModule,
    comp: &HloComputation,
    mode: SequenceMode,
    nested: &NestedNeeds<'_>,
) -> Result<BufferAssignment> {
    let mut a = Assigner::new(module, comp, mode);
    a.define_values()?;
    a.compute_liveness();
    a.want_results_in_place();
    a.form_buffers(nested);
    let routes = a.route_results();
    let scratch = a.add_scratch(nested.scratch_bytes);
    let temp_bytes = pack_arena(&mut a.buffers);
    Ok(a.into_assignment(routes, &scratch, temp_bytes))
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
    fn new(module: &'a HloModule, comp: &'a HloComputation, mode: SequenceMode) -> Self {
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
                    if self.values[v].size != want {
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
            Op::GetTupleElement { index } => {
                let operand_shape = &self.comp.instr(instr.operand(0)?).shape;
                let elements = operand_shape.tuple_shapes();
                let start: usize = elements.iter().take(*index).map(leaf_count).sum();
                let count = elements.get(*index).map(leaf_count).ok_or_else(|| {
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
            _ => leaf_bytes(&instr.shape)
                .into_iter()
                .map(|size| self.new_value(i, size, None))
                .collect(),
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
            (None, Some(Pin::Out(_))) => self.absorb(),
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
            match buffers[b].pin {
                Some(pin) => slice_of_pin(pin, size),
                None => BufferSlice {
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

/// Step 7: packs every unpinned buffer into the temp arena (largest first, each
/// at the lowest aligned offset no buffer live at the same time occupies);
/// returns the arena's size.
fn pack_arena(buffers: &mut [Buffer]) -> usize {
    let mut order: Vec<usize> = (0..buffers.len())
        .filter(|&b| buffers[b].pin.is_none() && buffers[b].size > 0)
        .collect();
    order.sort_by(|&a, &b| {
        buffers[b]
            .size
            .cmp(&buffers[a].size)
            .then(buffers[a].start.cmp(&buffers[b].start))
    });
    let mut placed: Vec<usize> = Vec::new();
    let mut temp_bytes = 0usize;
    for b in order {
        let (start, stop, size) = (buffers[b].start, buffers[b].end, buffers[b].size);
        let mut busy: Vec<(usize, usize)> = placed
            .iter()
            .filter(|&&p| buffers[p].start <= stop && start <= buffers[p].end)
            .map(|&p| (buffers[p].offset, buffers[p].offset + buffers[p].size))
            .collect();
        busy.sort_unstable();
        let mut offset = 0usize;
        for (lo, hi) in busy {
            if offset + size <= lo {
                break;
            }
            offset = offset.max(hi.next_multiple_of(SLICE_ALIGNMENT));
        }
        buffers[b].offset = offset;
        temp_bytes = temp_bytes.max(offset + size);
        placed.push(b);
    }
    temp_bytes
}

/// The array leaves of a constant, for callers that need them as literals.
pub fn constant_leaves(literal: &Literal) -> Vec<Literal> {
    literal.clone().flatten_leaves()
}
