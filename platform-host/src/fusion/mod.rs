//! Fusion execution: the one place that decides how a `fusion` instruction runs.
//!
//! # Interface (what the compiler relies on)
//! * [`plan`] compiles a fusion instruction once, before its computation's
//!   buffers are assigned; [`FusionPlan::scratch_bytes`] says how much scratch
//!   the instruction needs while it runs.
//! * [`FusionPlan::into_thunk`] makes the thunk, given the fusion's operand
//!   leaf slices, result leaf slices and scratch slice.
//! * [`in_place_operands`] names the operands the fusion's result may be
//!   written over (buffer assignment reuses a dying operand's buffer for them).
//!
//! # Current strategy
//! The fused computation is compiled like any other computation into a nested
//! thunk sequence whose temporaries live in the fusion's scratch slice: correct
//! for every fusion kind XLA emits (`kLoop`, `kInput`, `kOutput`, `kCustom`),
//! but it materialises every intermediate. Replacing this with loops that
//! evaluate the fused computation element by element, in cache-sized blocks, only
//! needs this module to change: keep the three functions above.
//!
//! In-place writing is offered only for operands that reach the root through
//! same-shaped elementwise instructions alone (and a root that is elementwise):
//! then element `i` of the result depends on element `i` of the operand and
//! nothing else, which stays true under any element-by-element strategy.

use crate::compiler::buffer_assignment::{OutputMode, SequenceMode};
use crate::compiler::lower::compile_computation;
use crate::thunk::{BufferSlice, Thunk, ThunkSequence};
use platform_api::hlo::{CompId, HloInstruction, Op};
use platform_api::{CompileOptions, Error, HloModule, Result};

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

/// A fusion compiled before buffer assignment.
pub struct FusionPlan {
    name: String,
    sequence: ThunkSequence,
}

impl FusionPlan {
    /// Scratch the fusion needs for its temporaries.
    pub fn scratch_bytes(&self) -> usize {
        self.sequence.temp_bytes
    }

    /// The thunk that runs the fusion with these buffers.
    pub fn into_thunk(
        self,
        operands: Vec<BufferSlice>,
        results: Vec<BufferSlice>,
        scratch: Option<BufferSlice>,
    ) -> Result<Box<dyn Thunk>> {
        if operands.len() != self.sequence.parameter_leaf_bytes.len()
            || results.len() != self.sequence.output_leaf_bytes.len()
        {
            return Err(Error::internal(format!(
                "%{}: fusion called with {} operand and {} result leaves; its computation has {} and {}",
                self.name,
                operands.len(),
                results.len(),
                self.sequence.parameter_leaf_bytes.len(),
                self.sequence.output_leaf_bytes.len()
            )));
        }
        Ok(Box::new(SequenceFusion {
            name: self.name,
            sequence: self.sequence,
            operands,
            results,
            scratch,
        }))
    }
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
    let sequence = compile_computation(module, *calls, FUSED_MODE, options, false)?;
    Ok(FusionPlan {
        name: instr.name.clone(),
        sequence,
    })
}

/// Operands of fusion `instr` (calling `fused`) that its result may overwrite.
pub fn in_place_operands(module: &HloModule, fused: CompId, instr: &HloInstruction) -> Vec<usize> {
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
