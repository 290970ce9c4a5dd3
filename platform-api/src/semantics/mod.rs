//! Scalar and elementwise semantics shared by every backend.
//!
//! (Contract fixed; implementation being written on the `semantics` branch.)
//! These functions define what each elementwise HLO op computes, exactly as XLA's
//! operation semantics say, so the interpreter and the host compiler agree on
//! every bit that XLA pins down (integer division rules, shifts past the width,
//! NaN handling in max/min, float→int saturation, rounding, f16/bf16 through f32).

use crate::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use crate::native::Scalar;
use crate::shape::{ElementType, Shape};
use crate::{Error, Literal, Result};

fn pending(what: &str) -> Error {
    Error::unimplemented(format!("semantics::{what} is not implemented yet"))
}

/// `op(x)` elementwise; `result` is the instruction's shape (its element type can
/// differ from the operand's: `abs`/`real`/`imag` of complex, `is-finite`).
pub fn unary(op: UnaryOp, x: &Literal, result: &Shape) -> Result<Literal> {
    let _ = (op, x, result);
    Err(pending("unary"))
}

/// `op(a, b)` elementwise on same-shaped operands.
pub fn binary(op: BinaryOp, a: &Literal, b: &Literal, result: &Shape) -> Result<Literal> {
    let _ = (op, a, b, result);
    Err(pending("binary"))
}

/// `compare` elementwise; a pred array.
pub fn compare(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    a: &Literal,
    b: &Literal,
) -> Result<Literal> {
    let _ = (direction, compare_type, a, b);
    Err(pending("compare"))
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar.
pub fn select(pred: &Literal, on_true: &Literal, on_false: &Literal) -> Result<Literal> {
    let _ = (pred, on_true, on_false);
    Err(pending("select"))
}

/// `clamp(min, x, max)`; `min` and `max` may be scalars.
pub fn clamp(min: &Literal, x: &Literal, max: &Literal) -> Result<Literal> {
    let _ = (min, x, max);
    Err(pending("clamp"))
}

/// `convert` to another element type.
pub fn convert(x: &Literal, to: ElementType) -> Result<Literal> {
    let _ = (x, to);
    Err(pending("convert"))
}

/// `bitcast-convert` to `result` (same total bits per element, or a dimension added
/// or removed when the widths differ, as XLA allows).
pub fn bitcast_convert(x: &Literal, result: &Shape) -> Result<Literal> {
    let _ = (x, result);
    Err(pending("bitcast_convert"))
}

/// `reduce-precision` to the given exponent and mantissa widths.
pub fn reduce_precision(x: &Literal, exponent_bits: u32, mantissa_bits: u32) -> Result<Literal> {
    let _ = (x, exponent_bits, mantissa_bits);
    Err(pending("reduce_precision"))
}

/// `op(x)` on one element; `result` is the result element type.
pub fn unary_scalar(op: UnaryOp, x: Scalar, result: ElementType) -> Result<Scalar> {
    let _ = (op, x, result);
    Err(pending("unary_scalar"))
}

/// `op(a, b)` on one element.
pub fn binary_scalar(op: BinaryOp, a: Scalar, b: Scalar) -> Result<Scalar> {
    let _ = (op, a, b);
    Err(pending("binary_scalar"))
}

/// `compare` on one element.
pub fn compare_scalar(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    a: Scalar,
    b: Scalar,
) -> Result<bool> {
    let _ = (direction, compare_type, a, b);
    Err(pending("compare_scalar"))
}

/// `convert` of one element.
pub fn convert_scalar(x: Scalar, to: ElementType) -> Scalar {
    let _ = to;
    x
}
