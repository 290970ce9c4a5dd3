//! Constant folding with the Host's own kernels.
//!
//! The shared pipeline folds small constant expressions at compile time. The
//! Host computes some ops with `vmath`'s vectorised functions, which may differ
//! from the reference semantics in the last bit (`exp`, `log`, `tanh`,
//! `logistic`); folding those with the reference would make a program's
//! numbers depend on whether an operand happened to be constant. So the Host
//! folds elementwise ops with the op table itself ([`crate::elementwise_ops`],
//! through [`table_kernel`]): a folded constant holds the bits the same op
//! gives at run time, fused or alone.

use crate::elementwise_ops::Arg;
use crate::kernels::elementwise::table_kernel;
use platform_api::hlo::Op;
use platform_api::passes::ElementwiseEvaluator;
use platform_api::{Error, Literal, Result, Shape};

/// [`ElementwiseEvaluator`] over the Host's op table.
#[derive(Debug, Default)]
pub struct HostFolding;

impl ElementwiseEvaluator for HostFolding {
    fn evaluate(&self, op: &Op, operands: &[&Literal], shape: &Shape) -> Option<Result<Literal>> {
        if matches!(op, Op::BitcastConvert) {
            // Exact: the reference gives the same bytes.
            return None;
        }
        let result = shape.as_array()?;
        let types = operands
            .iter()
            .map(|l| l.array_shape().ok().map(|a| a.element_type))
            .collect::<Option<Vec<_>>>()?;
        let (kernel, want) = table_kernel(op, &types, result.element_type)?;
        Some(run(kernel, &want, operands, shape))
    }
}

/// Runs a table kernel over whole literals.
fn run(
    kernel: Result<crate::elementwise_ops::Kernel>,
    want: &[Option<platform_api::ElementType>],
    operands: &[&Literal],
    shape: &Shape,
) -> Result<Literal> {
    let kernel = kernel?;
    let result = shape.array_or_err()?;
    let n = result.element_count();
    if kernel.arity() != operands.len() || want.len() != operands.len() {
        return Err(Error::invalid_argument(format!(
            "{} operands for a kernel of {}",
            operands.len(),
            kernel.arity()
        )));
    }
    let mut args = Vec::with_capacity(operands.len());
    for (operand, want) in operands.iter().zip(want) {
        let a = operand.array_shape()?;
        if want.is_some_and(|t| t != a.element_type) {
            return Err(Error::invalid_argument(format!(
                "operand {a} has the wrong element type"
            )));
        }
        let bytes = operand.bytes()?;
        args.push(if a.element_count() == n {
            Arg::Ptr(bytes.as_ptr())
        } else if a.element_count() == 1 {
            Arg::Scalar(bytes.as_ptr())
        } else {
            return Err(Error::invalid_argument(format!(
                "operand {a} does not fit a result of {n} elements"
            )));
        });
    }
    let mut out = Literal::zeros(&Shape::array(result.element_type, result.dims.clone()));
    let dst = out.bytes_mut()?;
    // SAFETY: every operand is a literal of `n` elements (or one, passed as a
    // scalar) of the type the kernel was chosen for, 8-byte aligned; `dst` is
    // a fresh literal of `n` result elements, disjoint from them.
    unsafe { kernel.call(&args, dst.as_mut_ptr(), n) };
    Ok(out)
}
