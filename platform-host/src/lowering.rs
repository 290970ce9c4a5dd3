//! The bottom of lowering: what an op's lowering is given, shared by the
//! standalone kernels ([`crate::kernels`]), the block programs of fusions
//! ([`crate::fusion`]) and the compiler's driver ([`crate::compiler::lower`]).
//!
//! The compiler assigns buffers, then lowers each instruction with a
//! [`LowerCtx`]: the instruction's computation and the slices buffer
//! assignment gave every value. Kernels and fusion depend on this module and on
//! [`crate::thunk`], never on the compiler, so a kernel can be read, changed
//! and tested without the passes and the buffer assignment above it.

use crate::thunk::BufferSlice;
use platform_api::hlo::{HloComputation, HloInstruction, InstrId};
use platform_api::{ArrayShape, CompileOptions, Error, HloModule, Result};

/// What a kernel's lowering sees: the instruction's computation, its buffer
/// assignment and the compile options.
pub struct LowerCtx<'a> {
    pub module: &'a HloModule,
    pub comp: &'a HloComputation,
    /// Per instruction, one slice per array leaf of its value (preorder), as
    /// buffer assignment placed them.
    pub leaf_slices: &'a [Vec<BufferSlice>],
    /// Per instruction, its scratch slice, when it asked for scratch.
    pub scratch: &'a [Option<BufferSlice>],
    pub options: &'a CompileOptions,
}

impl<'a> LowerCtx<'a> {
    pub fn instr(&self, id: InstrId) -> &'a HloInstruction {
        self.comp.instr(id)
    }

    /// Operand `k` of `instr`.
    pub fn operand(&self, instr: &HloInstruction, k: usize) -> Result<&'a HloInstruction> {
        Ok(self.comp.instr(instr.operand(k)?))
    }

    /// The array shape of operand `k`, or an error naming the instruction.
    pub fn operand_array(&self, instr: &HloInstruction, k: usize) -> Result<&'a ArrayShape> {
        let op = self.operand(instr, k)?;
        op.shape.as_array().ok_or_else(|| {
            Error::invalid_argument(format!(
                "%{}: operand {k} (%{}) must be an array, not {}",
                instr.name, op.name, op.shape
            ))
        })
    }

    /// The array shape of `instr`'s result.
    pub fn result_array(&self, instr: &'a HloInstruction) -> Result<&'a ArrayShape> {
        instr.shape.as_array().ok_or_else(|| {
            Error::invalid_argument(format!(
                "%{} ({}) must produce an array, not {}",
                instr.name,
                instr.opcode(),
                instr.shape
            ))
        })
    }

    /// The slices of operand `k`'s array leaves.
    pub fn operand_leaves(&self, instr: &HloInstruction, k: usize) -> Result<&'a [BufferSlice]> {
        Ok(self.result_leaves(instr.operand(k)?))
    }

    /// The slice of operand `k`, which must be a single array.
    pub fn operand_slice(&self, instr: &HloInstruction, k: usize) -> Result<BufferSlice> {
        match self.operand_leaves(instr, k)? {
            [one] if self.operand(instr, k)?.shape.is_array() => Ok(*one),
            _ => Err(Error::invalid_argument(format!(
                "%{}: operand {k} must be a single array",
                instr.name
            ))),
        }
    }

    /// The slices of an instruction's result leaves.
    pub fn result_leaves(&self, id: InstrId) -> &'a [BufferSlice] {
        &self.leaf_slices[id.index()]
    }

    /// The slice of an instruction's result, which must be a single array.
    pub fn result_slice(&self, id: InstrId) -> Result<BufferSlice> {
        let instr = self.instr(id);
        match self.result_leaves(id) {
            [one] if instr.shape.is_array() => Ok(*one),
            _ => Err(Error::invalid_argument(format!(
                "%{} must produce a single array, not {}",
                instr.name, instr.shape
            ))),
        }
    }

    /// The instruction's scratch slice, if it asked for scratch.
    pub fn scratch(&self, id: InstrId) -> Option<BufferSlice> {
        self.scratch[id.index()]
    }
}

/// An instruction fused into a block program's prologue: instead of
/// materialising its whole result before the fusion runs, the fusion asks it
/// for each block's positions just before reading them, while they are in
/// cache (a row gather feeding a masking `select`: XLA fuses the gather into
/// the loop; this gets the same memory traffic without a gather leaf).
///
/// # Threading
/// `produce` is called concurrently from the fusion's tasks, on disjoint
/// position ranges.
pub trait BlockProducer: Send + Sync {
    /// The buffers it reads and writes (its result's first); `produce` gets
    /// their addresses in this order.
    fn slices(&self) -> Vec<BufferSlice>;

    /// Writes positions `pos..pos + n` of its (row-major) result.
    ///
    /// # Safety
    /// `addrs` are this run's addresses of [`BlockProducer::slices`]; the
    /// positions lie inside the result and no other thread touches them.
    unsafe fn produce(&self, addrs: &[*mut u8], pos: usize, n: usize);
}
