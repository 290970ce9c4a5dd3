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
//! must finish the benchmark programs too. Every fast route computes the same
//! bits as the plain definition (tests compare them with naive references):
//!
//! * [`scalar`] compiles reducers, comparators and combiners into straight-line
//!   programs over scalars, evaluated with the shared semantics, and recognises
//!   `op(p0, p1)` reducers, which run as typed loops;
//! * `reduce-window` turns cumulative windows into a running scan;
//! * `sort` pulls a key out of comparators of the form `compare(f(a), f(b))`;
//! * `dot` and `convolution` accumulate each output in XLA's order while their
//!   inner loops run over contiguous memory.
//!
//! | kernel | module |
//! | --- | --- |
//! | `dot` | `dot` |
//! | `convolution` | `convolution` |
//! | `reduce` | `reduce` |
//! | `reduce-window` | `reduce_window` (geometry in `window`) |
//! | `select-and-scatter` | `select_and_scatter` |
//! | `gather`, `scatter` | `gather` |
//! | `sort`, `topk` | `sort` |
//! | `fft` | `fft` |
//! | `cholesky`, `triangular-solve` | `linalg` |
//!
//! Errors: a malformed instruction (shapes that do not fit its attributes, a
//! subcomputation of the wrong signature) is an `InvalidArgument` naming the
//! instruction; kernels check what they index with before looping, so bad
//! input never panics.

mod convolution;
mod dot;
mod fft;
mod gather;
mod linalg;
mod reduce;
mod reduce_window;
pub mod scalar;
mod select_and_scatter;
mod sort;
mod util;
mod window;

pub use convolution::convolution;
pub use dot::dot;
pub use fft::fft;
pub use gather::{gather, scatter};
pub use linalg::{cholesky, triangular_solve};
pub use reduce::reduce;
pub use reduce_window::reduce_window;
pub use select_and_scatter::select_and_scatter;
pub use sort::{sort, topk};

use hlo_ir::{CompId, HloComputation, HloInstruction, Opcode};
use hlo_ir::{Literal, Result};

/// Evaluates subcomputations of the module being interpreted.
pub trait CallComputation {
    /// The computation with this id (kernels inspect simple reducers, e.g. a
    /// computation whose root is `add(p0, p1)`, to skip per-element calls).
    fn computation(&self, id: CompId) -> &HloComputation;

    /// Evaluates computation `id` on `args` (one literal per parameter).
    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal>;
}

/// The value of an instruction that computes from its operands alone —
/// everything but parameters, constants, tuples, control flow, calls,
/// collectives and custom calls — on row-major literals: the array ops
/// ([`crate::array_ops`]), `dynamic-update-slice`, and the kernels here. What a
/// literal-level backend (the platform kit's `OpKernels`) reaches for when it
/// has no kernel of its own; anything else is `Unimplemented`, naming the op.
pub fn evaluate_op(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    match &instr.op {
        hlo_ir::Op::DynamicUpdateSlice => match operands {
            [operand, update, starts @ ..] => {
                crate::ops::slicing::dynamic_update_slice((*operand).clone(), update, starts)
            }
            _ => Err(hlo_ir::Error::invalid_argument(format!(
                "dynamic-update-slice %{} needs an operand and an update",
                instr.name
            ))),
        },
        op if crate::array_ops::is_array_op(op) => {
            crate::array_ops::evaluate_array_op(op, operands, &instr.shape)
        }
        op => match kernel_for(op.opcode()) {
            Some(kernel) => kernel(instr, operands, calls),
            None => Err(hlo_ir::Error::unimplemented(format!(
                "{} (%{}) has no literal-level evaluation",
                op.opcode(),
                instr.name
            ))),
        },
    }
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
    Some(match opcode {
        Opcode::Dot => dot,
        Opcode::Convolution => convolution,
        Opcode::Reduce => reduce,
        Opcode::ReduceWindow => reduce_window,
        Opcode::SelectAndScatter => select_and_scatter,
        Opcode::Gather => gather,
        Opcode::Scatter => scatter,
        Opcode::Sort => sort,
        Opcode::TopK => topk,
        Opcode::Fft => fft,
        Opcode::Cholesky => cholesky,
        Opcode::TriangularSolve => triangular_solve,
        _ => return None,
    })
}
