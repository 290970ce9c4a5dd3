//! Elementwise operations: unary and binary arithmetic, compare, select, clamp,
//! conversions and reduce-precision.
//!
//! HLO has no implicit broadcasting: the operands of an elementwise operation have
//! the same dimensions (except `select`'s predicate and `clamp`'s bounds, which may
//! be scalars) and, with mixed precision disallowed, the same element type.

use super::{plain, retype, Cx};
use crate::attrs::ComparisonType;
use crate::error::Result;
use crate::opcode::{BinaryOp, UnaryOp};
use crate::shape::{ArrayShape, ElementType, Shape};

/// Element types a unary operation accepts, as words for the error message.
fn unary_accepts(op: UnaryOp, t: ElementType) -> std::result::Result<(), &'static str> {
    use UnaryOp::*;
    let ok = match op {
        Floor | Ceil | RoundNearestAfz | RoundNearestEven | Erf => t.is_float(),
        Cos | Sin | Tan | Exp | Expm1 | Log | Log1p | Logistic | Rsqrt | Sqrt | Cbrt | Tanh => {
            t.is_floating_or_complex()
        }
        Real | Imag => t.is_floating_or_complex(),
        Abs => t.is_signed_int() || t.is_float() || t.is_complex(),
        Sign => t.is_signed_int() || t.is_float() || t.is_complex(),
        Negate => t.is_integer() || t.is_floating_or_complex(),
        Clz | PopCount => t.is_integer(),
        Not => t.is_integer() || t.is_pred(),
        IsFinite => t.is_float(),
    };
    if ok {
        return Ok(());
    }
    Err(match op {
        Floor | Ceil | RoundNearestAfz | RoundNearestEven | Erf | IsFinite => "floating point",
        Abs | Sign => "signed integer, floating point or complex",
        Negate => "integer, floating point or complex",
        Clz | PopCount => "integer",
        Not => "pred or integer",
        _ => "floating point or complex",
    })
}

pub(super) fn unary(cx: &Cx, op: UnaryOp) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    if let Err(wanted) = unary_accepts(op, a.element_type) {
        return Err(cx.err(format!("the operand must be {wanted}, got {}", plain(a))));
    }
    Ok(match op {
        UnaryOp::IsFinite => retype(a, ElementType::Pred),
        UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => {
            retype(a, a.element_type.complex_component())
        }
        _ => plain(a),
    })
}

/// The two operands of a binary elementwise operation, checked to have the same
/// dimensions and element type.
fn same_shaped_pair<'a>(cx: &'a Cx) -> Result<(&'a ArrayShape, &'a ArrayShape)> {
    cx.count(2)?;
    let lhs = cx.array(0, "lhs")?;
    let rhs = cx.array(1, "rhs")?;
    if lhs.dims != rhs.dims {
        return Err(cx.err(format!(
            "operand shapes {} and {} differ",
            plain(lhs),
            plain(rhs)
        )));
    }
    if lhs.element_type != rhs.element_type {
        return Err(cx.err(format!(
            "operand element types differ: {} and {}",
            plain(lhs),
            plain(rhs)
        )));
    }
    Ok((lhs, rhs))
}

pub(super) fn binary(cx: &Cx, op: BinaryOp) -> Result<Shape> {
    use BinaryOp::*;
    let (lhs, _) = same_shaped_pair(cx)?;
    let t = lhs.element_type;
    let wrong = |wanted: &str| cx.err(format!("operands must be {wanted}, got {}", plain(lhs)));
    match op {
        Add | Maximum | Minimum | Multiply => {}
        Subtract | Atan2 | Power | Divide | Remainder => {
            if t.is_pred() {
                return Err(wrong("arithmetic (not pred)"));
            }
        }
        ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => {
            if !t.is_integer() {
                return Err(wrong("integers"));
            }
        }
        And | Or | Xor => {
            if !(t.is_pred() || t.is_integer()) {
                return Err(wrong("pred or integers"));
            }
        }
        Complex => {
            return match t {
                ElementType::F32 => Ok(retype(lhs, ElementType::C64)),
                ElementType::F64 => Ok(retype(lhs, ElementType::C128)),
                _ => Err(wrong("f32 or f64")),
            };
        }
    }
    Ok(plain(lhs))
}

pub(super) fn compare(cx: &Cx, compare_type: Option<ComparisonType>) -> Result<Shape> {
    let (lhs, _) = same_shaped_pair(cx)?;
    let t = lhs.element_type;
    if let Some(ct) = compare_type {
        let fits = match ct {
            ComparisonType::Float | ComparisonType::TotalOrder => t.is_floating_or_complex(),
            ComparisonType::Signed => t.is_signed_int(),
            ComparisonType::Unsigned => t.is_unsigned_int() || t.is_pred(),
        };
        if !fits {
            return Err(cx.err(format!(
                "comparison type {ct} does not apply to operands of type {t}"
            )));
        }
    }
    Ok(retype(lhs, ElementType::Pred))
}

/// `select(pred, on_true, on_false)`: `pred` has the operands' dimensions or is a
/// scalar.
pub(super) fn select(cx: &Cx) -> Result<Shape> {
    cx.count(3)?;
    let pred = cx.array(0, "the predicate")?;
    let on_true = cx.array(1, "on_true")?;
    let on_false = cx.array(2, "on_false")?;
    if !on_true.compatible(on_false) {
        return Err(cx.err(format!(
            "on_true and on_false shapes {} and {} differ",
            plain(on_true),
            plain(on_false)
        )));
    }
    if pred.element_type != ElementType::Pred {
        return Err(cx.err(format!(
            "the predicate must have element type pred, got {}",
            plain(pred)
        )));
    }
    if !pred.dims.is_empty() && pred.dims != on_true.dims {
        return Err(cx.err(format!(
            "predicate shape {} does not match operand shape {} (it must be the same or a scalar)",
            plain(pred),
            plain(on_true)
        )));
    }
    Ok(plain(on_true))
}

/// `clamp(min, operand, max)`: the bounds have the operand's shape or are scalars
/// of its type.
pub(super) fn clamp(cx: &Cx) -> Result<Shape> {
    cx.count(3)?;
    let min = cx.array(0, "min")?;
    let operand = cx.array(1, "the operand")?;
    let max = cx.array(2, "max")?;
    for (role, bound) in [("min", min), ("max", max)] {
        let dims_ok = bound.dims.is_empty() || bound.dims == operand.dims;
        if !dims_ok || bound.element_type != operand.element_type {
            return Err(cx.err(format!(
                "{role} shape {} does not fit operand shape {} (it must be the same shape or a scalar of the same type)",
                plain(bound),
                plain(operand)
            )));
        }
    }
    Ok(plain(operand))
}

pub(super) fn convert(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let to = cx.declared_array()?.element_type;
    Ok(retype(a, to))
}

/// `bitcast-convert`: same bits, another type. A narrower target adds a minor
/// dimension of size `from_width / to_width`; a wider one removes a minor dimension
/// of size `to_width / from_width`.
pub(super) fn bitcast_convert(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let to = cx.declared_array()?.element_type;
    let from = a.element_type;
    let shape = plain(a);
    if from.is_complex() != to.is_complex() {
        return Err(cx.err(format!(
            "cannot reinterpret between complex and real types: {shape} to {to}"
        )));
    }
    let (wf, wt) = (from.bit_width(), to.bit_width());
    let mut dims = a.dims.clone();
    if wf > wt {
        dims.push(wf / wt);
    } else if wf < wt {
        let ratio = wt / wf;
        if dims.last() != Some(&ratio) {
            return Err(cx.err(format!(
                "converting {shape} to the wider type {to} needs a last dimension of size {ratio}"
            )));
        }
        dims.pop();
    }
    Ok(Shape::array(to, dims))
}

/// `stochastic-convert(operand, random)`: a float operand rounded to the declared
/// type using unsigned random bits of the same width and shape.
pub(super) fn stochastic_convert(cx: &Cx) -> Result<Shape> {
    cx.count(2)?;
    let a = cx.array(0, "the operand")?;
    let random = cx.array(1, "the random operand")?;
    let to = cx.declared_array()?.element_type;
    let (sa, sr) = (plain(a), plain(random));
    if !a.element_type.is_float() {
        return Err(cx.err(format!("the operand must be floating point, got {sa}")));
    }
    if !random.element_type.is_unsigned_int()
        || random.element_type.bit_width() != a.element_type.bit_width()
        || random.dims != a.dims
    {
        return Err(cx.err(format!(
            "the random operand {sr} must be unsigned integers of the operand's width and shape ({sa})"
        )));
    }
    Ok(retype(a, to))
}

pub(super) fn reduce_precision(cx: &Cx, exponent_bits: u32, _mantissa_bits: u32) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    if !a.element_type.is_float() {
        return Err(cx.err(format!(
            "the operand must be floating point, got {}",
            plain(a)
        )));
    }
    if exponent_bits < 1 {
        return Err(cx.err("exponent_bits must be at least 1"));
    }
    Ok(plain(a))
}
