//! Ops whose value is a function of their array operands alone: no
//! subcomputation, no state, no side effect. The evaluator runs them through
//! [`evaluate_array_op`], and so does compile-time constant folding, so a folded
//! constant holds exactly the bits the reference computes at run time.

use crate::ops;
use hlo_ir::{Error, Literal, Op, Result, Shape};
use hlo_semantics as semantics;

/// Whether [`evaluate_array_op`] evaluates this op: elementwise ops (the shared
/// semantics), `iota`, and data movement that reads its operands' values only
/// (`broadcast`, `reshape`, `transpose`, `slice`, `dynamic-slice`,
/// `concatenate`, `pad`, `reverse`, `get-dimension-size`).
pub fn is_array_op(op: &Op) -> bool {
    matches!(
        op,
        Op::Iota { .. }
            | Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare { .. }
            | Op::Select
            | Op::Clamp
            | Op::Convert
            | Op::BitcastConvert
            | Op::ReducePrecision { .. }
            | Op::Broadcast { .. }
            | Op::Reshape
            | Op::Transpose { .. }
            | Op::Slice { .. }
            | Op::DynamicSlice { .. }
            | Op::Concatenate { .. }
            | Op::Pad { .. }
            | Op::Reverse { .. }
            | Op::GetDimensionSize { .. }
    )
}

/// The value of `op` applied to `operands`, for an instruction of shape `shape`.
/// The result is a row-major literal with the shape's element type and
/// dimensions. An op [`is_array_op`] rejects is an `Unimplemented` error.
pub fn evaluate_array_op(op: &Op, operands: &[&Literal], shape: &Shape) -> Result<Literal> {
    let array_result = || shape.array_or_err();
    let arg = |i: usize| -> Result<&Literal> {
        operands.get(i).copied().ok_or_else(|| {
            Error::invalid_argument(format!("operand {i} is missing ({} given)", operands.len()))
        })
    };
    match op {
        Op::Iota { dimension } => Ok(ops::iota::iota(*dimension, array_result()?)?),

        // ---- elementwise: the shared semantics ----
        Op::Unary(op) => Ok(semantics::unary(*op, arg(0)?, shape)?),
        Op::Binary(op) => Ok(semantics::binary(*op, arg(0)?, arg(1)?, shape)?),
        Op::Compare {
            direction,
            compare_type,
        } => Ok(semantics::compare(
            *direction,
            *compare_type,
            arg(0)?,
            arg(1)?,
        )?),
        Op::Select => Ok(semantics::select(arg(0)?, arg(1)?, arg(2)?)?),
        Op::Clamp => Ok(semantics::clamp(arg(0)?, arg(1)?, arg(2)?)?),
        Op::Convert => Ok(semantics::convert(arg(0)?, array_result()?.element_type)?),
        Op::BitcastConvert => Ok(semantics::bitcast_convert(arg(0)?, shape)?),
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => Ok(semantics::reduce_precision(
            arg(0)?,
            *exponent_bits,
            *mantissa_bits,
        )?),
        // ---- data movement ----
        Op::Broadcast { dimensions } => Ok(ops::broadcast::broadcast(
            arg(0)?,
            dimensions,
            array_result()?,
        )?),
        Op::Reshape => {
            let result = array_result()?;
            let a = arg(0)?;
            let have = a.array_shape()?;
            if have.element_type != result.element_type
                || have.element_count() != result.element_count()
            {
                return Err(Error::invalid_argument(format!(
                    "cannot reshape {have} to {result}"
                )));
            }
            Ok(Literal::from_bytes(
                ops::logical_shape(result.element_type, &result.dims),
                a.bytes()?,
            )?)
        }
        Op::Transpose { dimensions } => Ok(ops::transpose::transpose(
            arg(0)?,
            dimensions,
            array_result()?,
        )?),
        Op::Slice { slice } => Ok(ops::slicing::slice(arg(0)?, slice, array_result()?)?),
        Op::DynamicSlice { sizes } => {
            let starts: Vec<&Literal> = operands[1.min(operands.len())..].to_vec();
            Ok(ops::slicing::dynamic_slice(
                arg(0)?,
                &starts,
                sizes,
                array_result()?,
            )?)
        }
        Op::Concatenate { dimension } => {
            let args: Vec<&Literal> = operands.to_vec();
            Ok(ops::concatenate::concatenate(
                &args,
                *dimension,
                array_result()?,
            )?)
        }
        Op::Pad { config } => Ok(ops::pad::pad(arg(0)?, arg(1)?, config, array_result()?)?),
        Op::Reverse { dimensions } => Ok(ops::reverse::reverse(arg(0)?, dimensions)?),
        Op::GetDimensionSize { dimension } => {
            let dims = arg(0)?.dims();
            let size = dims.get(*dimension).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "dimension {dimension} is out of range for a rank-{} operand",
                    dims.len()
                ))
            })?;
            let size = i32::try_from(*size).map_err(|_| {
                Error::out_of_range(format!("dimension size {size} does not fit s32"))
            })?;
            Ok(Literal::scalar(size))
        }

        other => Err(Error::unimplemented(format!(
            "{} is not evaluated from its operands alone",
            other.opcode()
        ))),
    }
}
