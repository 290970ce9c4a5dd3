//! The compute-heavy operations of the interpreter, as plain functions on
//! [`Literal`]s.
//!
//! Every kernel has the same signature, [`Kernel`]: the instruction (for its
//! attributes and result shape), its operands' values, and a [`CallComputation`]
//! through which it may evaluate a subcomputation (a reducer, a comparator, a
//! scatter combiner). Kernels know nothing else of the evaluator, which keeps
//! them testable one by one and lets the evaluator stay a plain dispatcher.
//!
//! Kernels are written for clarity and exact XLA semantics first. Where the
//! obvious loop would be quadratic or call a subcomputation per element when a
//! plain binary op would do, they take the faster route, because the interpreter
//! must finish the benchmark programs too.

use platform_api::hlo::{CompId, HloComputation, HloInstruction, Opcode};
use platform_api::{Literal, Result};

/// Evaluates subcomputations of the module being interpreted.
pub trait CallComputation {
    /// The computation with this id (kernels inspect simple reducers, e.g. a
    /// computation whose root is `add(p0, p1)`, to skip per-element calls).
    fn computation(&self, id: CompId) -> &HloComputation;

    /// Evaluates computation `id` on `args` (one literal per parameter).
    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal>;
}

/// The signature every kernel has.
pub type Kernel = fn(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal>;

/// The kernel for an opcode, if it is one of the kernels here. The evaluator calls
/// this for every opcode it does not handle itself.
pub fn kernel_for(opcode: Opcode) -> Option<Kernel> {
    let _ = opcode;
    None
}
