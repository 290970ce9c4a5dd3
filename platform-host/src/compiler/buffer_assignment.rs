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
use platform_api::{Error, HloModule, Literal, Result, Shape};
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
    /// For a fusion, the operands its result may be written over.
    pub fusion_in_place: &'a [Vec<usize>],
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
    fusion_in_place: &[usize],
) -> Vec<InPlace> {
    let same_array = |operand: usize| -> bool {
        let Some(&id) = instr.operands.get(operand) else {
            return false;
        };
        match (&comp.instr(id).shape, &instr.shape) {
            (Shape::Array(a), Shape::Array(r)) => {
                a.element_count() == r.element_count() && a.byte_size() == r.byte_size()
            }
            _ => false,
        }
    };
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
        Op::CustomCall(attrs) if attrs.target == crate::compiler::contraction::FMA_TARGET => {
            elementwise(&all)
        }
        Op::Fusion { .. } => fusion_in_place
            .iter()
            .copied()
            .filter(|&o| same_array(o))
            .map(|o| InPlace {
                result_leaf: 0,
                operand: o,
                operand_leaf: 0,
                elementwise: true,
            })
            .collect(),
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

/// Assigns buffers for `comp`. `scratch_bytes[i]` is the scratch instruction `i`
/// needs while it runs (0 for none).
pub fn assign(
    module: &HloModule,
    comp: &HloComputation,
    mode: SequenceMode,
    nested: &NestedNeeds<'_>,
) -> Result<BufferAssignment> {
    let scratch_bytes = nested.scratch_bytes;
    let n = comp.instructions.len();
    let end = n; // the position of "after the last instruction"
    let mut values: Vec<Value> = Vec::new();
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut leaves: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut constants: Vec<(usize, Arc<ConstantBytes>)> = Vec::new();

    // Parameter leaves, numbered in parameter order.
    let params = comp.parameters();
    let mut param_leaf_base = vec![0usize; n];
    let mut parameter_leaf_bytes = Vec::new();
    for &p in &params {
        param_leaf_base[p.index()] = parameter_leaf_bytes.len();
        parameter_leaf_bytes.extend(leaf_bytes(&comp.instr(p).shape));
    }
    let root = comp.root_instr();
    let output_leaf_bytes = leaf_bytes(&root.shape);

    let new_value = |values: &mut Vec<Value>, def: usize, size: usize, pin: Option<Pin>| {
        values.push(Value {
            def,
            size,
            last_use: def,
            pin,
            wanted: None,
            buffer: usize::MAX,
        });
        values.len() - 1
    };

    // 1. The values each instruction's leaves are.
    for (i, instr) in comp.instructions.iter().enumerate() {
        let operand_leaves = |k: usize| -> Result<&Vec<usize>> {
            let id = instr.operand(k)?;
            leaves.get(id.index()).ok_or_else(|| {
                Error::invalid_argument(format!("%{} uses an operand defined after it", instr.name))
            })
        };
        let mine: Vec<usize> = match &instr.op {
            Op::Parameter { .. } => leaf_bytes(&instr.shape)
                .into_iter()
                .enumerate()
                .map(|(k, size)| {
                    new_value(
                        &mut values,
                        i,
                        size,
                        Some(Pin::Param(param_leaf_base[i] + k)),
                    )
                })
                .collect(),
            Op::Constant { literal } => {
                let leaves_of = literal.clone().flatten_leaves();
                let mut ids = Vec::new();
                for leaf in leaves_of {
                    let bytes = leaf.bytes()?;
                    constants.push((i, Arc::new(ConstantBytes::new(bytes))));
                    let c = constants.len() - 1;
                    ids.push(new_value(&mut values, i, bytes.len(), Some(Pin::Const(c))));
                }
                ids
            }
            Op::GetTupleElement { index } => {
                let operand_shape = &comp.instr(instr.operand(0)?).shape;
                let elements = operand_shape.tuple_shapes();
                let start: usize = elements.iter().take(*index).map(leaf_count).sum();
                let count = elements.get(*index).map(leaf_count).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "%{}: tuple index {index} out of range for {operand_shape}",
                        instr.name
                    ))
                })?;
                operand_leaves(0)?
                    .get(start..start + count)
                    .ok_or_else(|| Error::internal(format!("%{}: leaf range", instr.name)))?
                    .to_vec()
            }
            Op::Tuple => {
                let mut all = Vec::new();
                for k in 0..instr.operands.len() {
                    all.extend(operand_leaves(k)?.iter().copied());
                }
                all
            }
            Op::Reshape
            | Op::Copy
            | Op::OptimizationBarrier
            | Op::AddDependency
            | Op::AllReduceDone => operand_leaves(0)?.clone(),
            Op::AfterAll => Vec::new(),
            Op::While { body, .. } => {
                // Loop-invariant state (the body returns its parameter's leaf
                // unchanged, so never writes it) is the initial value itself:
                // no copy, even when that value is read-only.
                let invariant = while_invariant_leaves(module, *body);
                let init = operand_leaves(0)?.clone();
                leaf_bytes(&instr.shape)
                    .into_iter()
                    .enumerate()
                    .map(|(k, size)| match (invariant.get(k), init.get(k)) {
                        (Some(true), Some(&v)) => v,
                        _ => new_value(&mut values, i, size, None),
                    })
                    .collect()
            }
            _ => leaf_bytes(&instr.shape)
                .into_iter()
                .map(|size| new_value(&mut values, i, size, None))
                .collect(),
        };
        if mine.len() != leaf_count(&instr.shape) {
            return Err(Error::invalid_argument(format!(
                "%{} of shape {} has {} array leaves but its operands provide {}",
                instr.name,
                instr.shape,
                leaf_count(&instr.shape),
                mine.len()
            )));
        }
        if is_alias(&instr.op) {
            for (k, &v) in mine.iter().enumerate() {
                let want = leaf_bytes(&instr.shape)[k];
                if values[v].size != want {
                    return Err(Error::invalid_argument(format!(
                        "%{} ({}) changes the byte size of its operand: {} to {}",
                        instr.name,
                        instr.opcode(),
                        values[v].size,
                        want
                    )));
                }
            }
        }
        leaves.push(mine);
    }

    // 2. Liveness.
    for (i, instr) in comp.instructions.iter().enumerate() {
        if is_alias(&instr.op) {
            continue;
        }
        for o in instr.operands.iter() {
            for &v in &leaves[o.index()] {
                values[v].last_use = values[v].last_use.max(i);
            }
        }
    }
    let root_leaves = leaves[comp.root.index()].clone();
    for &v in &root_leaves {
        values[v].last_use = end;
    }

    // 3. Where results want to be.
    for (k, &v) in root_leaves.iter().enumerate() {
        if values[v].pin.is_some() || values[v].wanted.is_some() {
            continue;
        }
        values[v].wanted = Some(match mode.outputs {
            OutputMode::Separate { .. } => Pin::Out(k),
            OutputMode::IntoParams => Pin::Param(k),
        });
    }
    let absorb = match mode.outputs {
        OutputMode::Separate { absorb, .. } => absorb,
        OutputMode::IntoParams => true,
    };

    // 4. Buffers, merging in-place results into their operands' buffers.
    let writable = |pin: Option<Pin>| match pin {
        None => true,
        Some(Pin::Param(_)) => mode.params_writable,
        Some(Pin::Out(_)) => absorb,
        Some(Pin::Const(_)) => false,
    };
    let new_buffer = |buffers: &mut Vec<Buffer>, v: &Value, pin: Option<Pin>| {
        buffers.push(Buffer {
            size: v.size,
            start: v.def,
            end: v.last_use,
            pin,
            last_merge: None,
            offset: 0,
        });
        buffers.len() - 1
    };
    let mut defined_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (vi, v) in values.iter().enumerate() {
        defined_at[v.def].push(vi);
    }
    for (i, instr) in comp.instructions.iter().enumerate() {
        if is_alias(&instr.op) {
            continue;
        }
        let mine = &defined_at[i];
        // Parameters and constants get their pinned buffers.
        if matches!(instr.op, Op::Parameter { .. } | Op::Constant { .. }) {
            for &v in mine {
                let pin = values[v].pin;
                let b = new_buffer(&mut buffers, &values[v], pin);
                values[v].buffer = b;
            }
            continue;
        }
        let candidates = in_place_candidates(comp, instr, &nested.fusion_in_place[i]);
        for (leaf, &v) in leaves[i].iter().enumerate() {
            if values[v].def != i || values[v].buffer != usize::MAX {
                continue;
            }
            let wanted = values[v].wanted;
            let mut merged = false;
            for c in candidates.iter().filter(|c| c.result_leaf == leaf) {
                let Some(operand) = instr.operands.get(c.operand) else {
                    continue;
                };
                let Some(&x) = leaves[operand.index()].get(c.operand_leaf) else {
                    continue;
                };
                let b = values[x].buffer;
                if b == usize::MAX {
                    continue;
                }
                let buf = &buffers[b];
                let pins_agree = match (buf.pin, wanted) {
                    (None, None) => true,
                    (None, Some(Pin::Out(_))) => absorb,
                    (None, Some(_)) => false,
                    (Some(p), None) => writable(Some(p)),
                    (Some(p), Some(q)) => p == q && writable(Some(p)),
                };
                let used_elsewhere = !c.elementwise
                    && instr.operands.iter().enumerate().any(|(j, o)| {
                        leaves[o.index()].iter().enumerate().any(|(l, &y)| {
                            (j != c.operand || l != c.operand_leaf) && values[y].buffer == b
                        })
                    });
                if buf.end == i
                    && buf.size == values[v].size
                    && buf.last_merge != Some(i)
                    && pins_agree
                    && !used_elsewhere
                {
                    let buf = &mut buffers[b];
                    buf.end = buf.end.max(values[v].last_use);
                    buf.last_merge = Some(i);
                    if buf.pin.is_none() {
                        buf.pin = wanted;
                    }
                    values[v].buffer = b;
                    merged = true;
                    break;
                }
            }
            if !merged {
                let pin = match wanted {
                    Some(Pin::Out(k)) => Some(Pin::Out(k)),
                    _ => None,
                };
                let b = new_buffer(&mut buffers, &values[v], pin);
                buffers[b].last_merge = Some(i);
                values[v].buffer = b;
            }
        }
    }

    // 5. Results that did not land where they belong.
    let mut output_sources = vec![OutputSource::Written; root_leaves.len()];
    let mut pending_copies: Vec<(usize, Pin)> = Vec::new(); // (source buffer, destination)
    let mut staged: Vec<(usize, usize)> = Vec::new(); // (param buffer, staging buffer) for phase A
    for (k, &v) in root_leaves.iter().enumerate() {
        let b = values[v].buffer;
        match mode.outputs {
            OutputMode::Separate { alias_results, .. } => {
                if buffers[b].pin == Some(Pin::Out(k)) {
                    continue;
                }
                if alias_results {
                    match buffers[b].pin {
                        Some(Pin::Param(j)) => {
                            output_sources[k] = OutputSource::Parameter(j);
                            continue;
                        }
                        Some(Pin::Out(m)) => {
                            output_sources[k] = OutputSource::SameAs(m);
                            continue;
                        }
                        _ => {}
                    }
                }
                pending_copies.push((b, Pin::Out(k)));
            }
            OutputMode::IntoParams => {
                if buffers[b].pin == Some(Pin::Param(k)) {
                    continue;
                }
                match buffers[b].pin {
                    Some(Pin::Param(_)) => {
                        // Another parameter's buffer: stage it in a temp first, so
                        // the copies into parameter buffers cannot clobber it.
                        let stage = buffers.len();
                        buffers.push(Buffer {
                            size: buffers[b].size,
                            start: end,
                            end: end + 1,
                            pin: None,
                            last_merge: None,
                            offset: 0,
                        });
                        staged.push((b, stage));
                        pending_copies.push((stage, Pin::Param(k)));
                    }
                    None => {
                        // Move the whole buffer into the loop state if the state's
                        // own buffer is dead before this one starts.
                        let target = buffers.iter().position(|t| t.pin == Some(Pin::Param(k)));
                        match target {
                            Some(t)
                                if buffers[t].end < buffers[b].start
                                    && buffers[t].size == buffers[b].size =>
                            {
                                let end_b = buffers[b].end;
                                buffers[t].end = buffers[t].end.max(end_b);
                                for val in values.iter_mut() {
                                    if val.buffer == b {
                                        val.buffer = t;
                                    }
                                }
                                // `b` is now empty; give it no space.
                                buffers[b].size = 0;
                                buffers[b].pin = Some(Pin::Param(k));
                            }
                            _ => pending_copies.push((b, Pin::Param(k))),
                        }
                    }
                    Some(_) => pending_copies.push((b, Pin::Param(k))),
                }
            }
        }
    }

    // 6. Scratch space.
    let mut scratch_buffer = vec![None; n];
    for (i, &bytes) in scratch_bytes.iter().enumerate().take(n) {
        if bytes > 0 {
            buffers.push(Buffer {
                size: bytes,
                start: i,
                end: i,
                pin: None,
                last_merge: None,
                offset: 0,
            });
            scratch_buffer[i] = Some(buffers.len() - 1);
        }
    }

    // 7. Pack the temp arena.
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

    // 8. Allocations and slices.
    let mut allocations = vec![Allocation::Temp];
    let param_alloc = allocations.len();
    for leaf in 0..parameter_leaf_bytes.len() {
        allocations.push(Allocation::Parameter { leaf });
    }
    let out_alloc = allocations.len();
    for leaf in 0..output_leaf_bytes.len() {
        allocations.push(Allocation::Output { leaf });
    }
    let const_alloc = allocations.len();
    for (_, bytes) in &constants {
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
    let leaf_slices: Vec<Vec<BufferSlice>> = leaves
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
    for (from, stage) in staged {
        let size = buffers[from].size;
        final_copies.push(FinalCopy {
            src: buffer_slice(from, size),
            dst: buffer_slice(stage, size),
        });
    }
    for (from, to) in pending_copies {
        let size = buffers[from].size;
        final_copies.push(FinalCopy {
            src: buffer_slice(from, size),
            dst: slice_of_pin(to, size),
        });
    }
    Ok(BufferAssignment {
        allocations,
        temp_bytes,
        leaf_slices,
        scratch,
        final_copies,
        output_sources,
        parameter_leaf_bytes,
        output_leaf_bytes,
    })
}

/// The array leaves of a constant, for callers that need them as literals.
pub fn constant_leaves(literal: &Literal) -> Vec<Literal> {
    literal.clone().flatten_leaves()
}
