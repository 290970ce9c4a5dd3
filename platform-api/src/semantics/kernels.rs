//! Slice kernels: one elementwise op over typed slices, in a tight loop.
//!
//! Each kernel matches the op once, then runs a loop whose body is one of the
//! `#[inline]` element functions of [`super::int`], [`super::float`],
//! [`super::complex`] or [`super::convert`], monomorphised for the element type, so
//! the compiler sees straight-line code it can vectorise. The array layer
//! ([`super::unary`], [`super::binary`], ...) is these kernels applied to a
//! [`crate::Literal`]'s typed data; a compiled backend can call them directly on its
//! own buffers.
//!
//! Kernels check that the slices have equal lengths and return
//! `Unimplemented` for an op XLA does not define on the element type.

use super::complex::{self, ComplexSemantics};
use super::float::{self, FloatSemantics};
use super::int::{self, IntSemantics};
use crate::hlo::{BinaryOp, ComparisonDirection, UnaryOp};
use crate::shape::ElementType;
use crate::{Error, Result};

/// The error for an op XLA does not define on a type.
pub(crate) fn undefined(op: &str, ty: ElementType) -> Error {
    Error::unimplemented(format!(
        "{op} is not defined for {ty} operands (XLA does not accept this combination)"
    ))
}

#[inline]
fn check_lengths(what: &str, lengths: &[usize]) -> Result<()> {
    if lengths.windows(2).any(|w| w[0] != w[1]) {
        return Err(Error::invalid_argument(format!(
            "{what}: slices of different lengths {lengths:?}"
        )));
    }
    Ok(())
}

#[inline]
fn map1<T: Copy, U>(x: &[T], out: &mut [U], f: impl Fn(T) -> U) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

#[inline]
fn map2<T: Copy, U>(a: &[T], b: &[T], out: &mut [U], f: impl Fn(T, T) -> U) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline]
fn map2_pred<T: Copy>(a: &[T], b: &[T], out: &mut [u8], f: impl Fn(T, T) -> bool) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y) as u8;
    }
}

/// A unary op on a signed or unsigned integer slice (`abs`, `negate`, `not`,
/// `popcnt`, `count-leading-zeros`, and `sign` for signed types).
pub fn int_unary<T: IntSemantics>(op: UnaryOp, x: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    match op {
        UnaryOp::Abs => map1(x, out, int::abs),
        UnaryOp::Negate => map1(x, out, int::negate),
        UnaryOp::Not => map1(x, out, int::not),
        UnaryOp::PopCount => map1(x, out, int::popcnt),
        UnaryOp::Clz => map1(x, out, int::count_leading_zeros),
        UnaryOp::Sign if T::SIGNED => map1(x, out, int::sign),
        _ => return Err(undefined(op.name(), T::TYPE)),
    }
    Ok(())
}

/// A binary op on integer slices.
pub fn int_binary<T: IntSemantics>(op: BinaryOp, a: &[T], b: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    match op {
        BinaryOp::Add => map2(a, b, out, int::add),
        BinaryOp::Subtract => map2(a, b, out, int::subtract),
        BinaryOp::Multiply => map2(a, b, out, int::multiply),
        BinaryOp::Divide => map2(a, b, out, int::divide),
        BinaryOp::Remainder => map2(a, b, out, int::remainder),
        BinaryOp::Maximum => map2(a, b, out, int::maximum),
        BinaryOp::Minimum => map2(a, b, out, int::minimum),
        BinaryOp::And => map2(a, b, out, int::and),
        BinaryOp::Or => map2(a, b, out, int::or),
        BinaryOp::Xor => map2(a, b, out, int::xor),
        BinaryOp::ShiftLeft => map2(a, b, out, int::shift_left),
        BinaryOp::ShiftRightLogical => map2(a, b, out, int::shift_right_logical),
        BinaryOp::ShiftRightArithmetic => map2(a, b, out, int::shift_right_arithmetic),
        BinaryOp::Power => map2(a, b, out, int::power),
        BinaryOp::Atan2 | BinaryOp::Complex => return Err(undefined(op.name(), T::TYPE)),
    }
    Ok(())
}

/// A unary op on a `pred` slice (bytes holding 0 or 1): only `not`.
pub fn pred_unary(op: UnaryOp, x: &[u8], out: &mut [u8]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    match op {
        UnaryOp::Not => map1(x, out, |v| (v == 0) as u8),
        _ => return Err(undefined(op.name(), ElementType::Pred)),
    }
    Ok(())
}

/// A binary op on `pred` slices. As in XLA, `add` and `maximum` are `or`,
/// `multiply` and `minimum` are `and`.
pub fn pred_binary(op: BinaryOp, a: &[u8], b: &[u8], out: &mut [u8]) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    match op {
        BinaryOp::And | BinaryOp::Multiply | BinaryOp::Minimum => map2(a, b, out, |x, y| x & y),
        BinaryOp::Or | BinaryOp::Add | BinaryOp::Maximum => map2(a, b, out, |x, y| x | y),
        BinaryOp::Xor => map2(a, b, out, |x, y| x ^ y),
        _ => return Err(undefined(op.name(), ElementType::Pred)),
    }
    Ok(())
}

/// A unary op on a float slice whose result has the operand's type (every float
/// unary op except `is-finite`; `real` is the identity and `imag` gives zeros, as
/// XLA defines them for real operands).
pub fn float_unary<T: FloatSemantics>(op: UnaryOp, x: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    match op {
        UnaryOp::Abs => map1(x, out, float::abs),
        UnaryOp::Cbrt => map1(x, out, float::cbrt),
        UnaryOp::Ceil => map1(x, out, float::ceil),
        UnaryOp::Cos => map1(x, out, float::cos),
        UnaryOp::Erf => map1(x, out, float::erf),
        UnaryOp::Exp => map1(x, out, float::exp),
        UnaryOp::Expm1 => map1(x, out, float::exponential_minus_one),
        UnaryOp::Floor => map1(x, out, float::floor),
        UnaryOp::Imag => map1(x, out, |_| T::from_bits_u64(0)),
        UnaryOp::Log => map1(x, out, float::log),
        UnaryOp::Log1p => map1(x, out, float::log_plus_one),
        UnaryOp::Logistic => map1(x, out, float::logistic),
        UnaryOp::Negate => map1(x, out, float::negate),
        UnaryOp::Real => out.copy_from_slice(x),
        UnaryOp::RoundNearestAfz => map1(x, out, float::round_nearest_afz),
        UnaryOp::RoundNearestEven => map1(x, out, float::round_nearest_even),
        UnaryOp::Rsqrt => map1(x, out, float::rsqrt),
        UnaryOp::Sign => map1(x, out, float::sign),
        UnaryOp::Sin => map1(x, out, float::sin),
        UnaryOp::Sqrt => map1(x, out, float::sqrt),
        UnaryOp::Tan => map1(x, out, float::tan),
        UnaryOp::Tanh => map1(x, out, float::tanh),
        UnaryOp::IsFinite | UnaryOp::Not | UnaryOp::PopCount | UnaryOp::Clz => {
            return Err(undefined(op.name(), T::TYPE))
        }
    }
    Ok(())
}

/// `is-finite` on a float slice, into `pred` bytes.
pub fn float_is_finite<T: FloatSemantics>(x: &[T], out: &mut [u8]) -> Result<()> {
    check_lengths("is-finite", &[x.len(), out.len()])?;
    map1(x, out, |v| float::is_finite(v) as u8);
    Ok(())
}

/// A binary op on float slices with a result of the same type (everything but
/// `complex`, see [`make_complex`]).
pub fn float_binary<T: FloatSemantics>(
    op: BinaryOp,
    a: &[T],
    b: &[T],
    out: &mut [T],
) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    match op {
        BinaryOp::Add => map2(a, b, out, float::add),
        BinaryOp::Subtract => map2(a, b, out, float::subtract),
        BinaryOp::Multiply => map2(a, b, out, float::multiply),
        BinaryOp::Divide => map2(a, b, out, float::divide),
        BinaryOp::Remainder => map2(a, b, out, float::remainder),
        BinaryOp::Maximum => map2(a, b, out, float::maximum),
        BinaryOp::Minimum => map2(a, b, out, float::minimum),
        BinaryOp::Power => map2(a, b, out, float::power),
        BinaryOp::Atan2 => map2(a, b, out, float::atan2),
        BinaryOp::And
        | BinaryOp::Or
        | BinaryOp::Xor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightArithmetic
        | BinaryOp::ShiftRightLogical
        | BinaryOp::Complex => return Err(undefined(op.name(), T::TYPE)),
    }
    Ok(())
}

/// `complex(re, im)`.
pub fn make_complex<C: ComplexSemantics>(
    re: &[C::Part],
    im: &[C::Part],
    out: &mut [C],
) -> Result<()> {
    check_lengths("complex", &[re.len(), im.len(), out.len()])?;
    for ((o, &r), &i) in out.iter_mut().zip(re).zip(im) {
        *o = C::new(r, i);
    }
    Ok(())
}

/// A unary op on a complex slice whose result is complex.
pub fn complex_unary<C: ComplexSemantics>(op: UnaryOp, x: &[C], out: &mut [C]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    match op {
        UnaryOp::Cos => map1(x, out, complex::cos),
        UnaryOp::Exp => map1(x, out, complex::exp),
        UnaryOp::Expm1 => map1(x, out, complex::exponential_minus_one),
        UnaryOp::Log => map1(x, out, complex::log),
        UnaryOp::Log1p => map1(x, out, complex::log_plus_one),
        UnaryOp::Logistic => map1(x, out, complex::logistic),
        UnaryOp::Negate => map1(x, out, complex::negate),
        UnaryOp::Rsqrt => map1(x, out, complex::rsqrt),
        UnaryOp::Sign => map1(x, out, complex::sign),
        UnaryOp::Sin => map1(x, out, complex::sin),
        UnaryOp::Sqrt => map1(x, out, complex::sqrt),
        UnaryOp::Tan => map1(x, out, complex::tan),
        UnaryOp::Tanh => map1(x, out, complex::tanh),
        _ => return Err(undefined(op.name(), C::TYPE)),
    }
    Ok(())
}

/// `abs`, `real` or `imag` of a complex slice, into its component type.
pub fn complex_to_part<C: ComplexSemantics>(
    op: UnaryOp,
    x: &[C],
    out: &mut [C::Part],
) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    match op {
        UnaryOp::Abs => map1(x, out, complex::abs),
        UnaryOp::Real => map1(x, out, |z| z.re()),
        UnaryOp::Imag => map1(x, out, |z| z.im()),
        _ => return Err(undefined(op.name(), C::TYPE)),
    }
    Ok(())
}

/// A binary op on complex slices.
pub fn complex_binary<C: ComplexSemantics>(
    op: BinaryOp,
    a: &[C],
    b: &[C],
    out: &mut [C],
) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    match op {
        BinaryOp::Add => map2(a, b, out, complex::add),
        BinaryOp::Subtract => map2(a, b, out, complex::subtract),
        BinaryOp::Multiply => map2(a, b, out, complex::multiply),
        BinaryOp::Divide => map2(a, b, out, complex::divide),
        BinaryOp::Power => map2(a, b, out, complex::power),
        BinaryOp::Atan2 => map2(a, b, out, complex::atan2),
        _ => return Err(undefined(op.name(), C::TYPE)),
    }
    Ok(())
}

/// `compare` of integer slices (or `pred` bytes, which compare as unsigned), in the
/// type's own signed or unsigned order, into `pred` bytes.
pub fn compare_int<T: IntSemantics>(
    direction: ComparisonDirection,
    a: &[T],
    b: &[T],
    out: &mut [u8],
) -> Result<()> {
    check_lengths("compare", &[a.len(), b.len(), out.len()])?;
    match direction {
        ComparisonDirection::Eq => map2_pred(a, b, out, |x, y| x == y),
        ComparisonDirection::Ne => map2_pred(a, b, out, |x, y| x != y),
        ComparisonDirection::Lt => map2_pred(a, b, out, |x, y| x < y),
        ComparisonDirection::Le => map2_pred(a, b, out, |x, y| x <= y),
        ComparisonDirection::Gt => map2_pred(a, b, out, |x, y| x > y),
        ComparisonDirection::Ge => map2_pred(a, b, out, |x, y| x >= y),
    }
    Ok(())
}

/// `compare` of float slices: IEEE (`total_order = false`; only `NE` is true with
/// NaN) or XLA's `TOTALORDER`.
pub fn compare_float<T: FloatSemantics>(
    direction: ComparisonDirection,
    total_order: bool,
    a: &[T],
    b: &[T],
    out: &mut [u8],
) -> Result<()> {
    check_lengths("compare", &[a.len(), b.len(), out.len()])?;
    if total_order {
        let key = float::total_order_key::<T>;
        match direction {
            ComparisonDirection::Eq => map2_pred(a, b, out, |x, y| key(x) == key(y)),
            ComparisonDirection::Ne => map2_pred(a, b, out, |x, y| key(x) != key(y)),
            ComparisonDirection::Lt => map2_pred(a, b, out, |x, y| key(x) < key(y)),
            ComparisonDirection::Le => map2_pred(a, b, out, |x, y| key(x) <= key(y)),
            ComparisonDirection::Gt => map2_pred(a, b, out, |x, y| key(x) > key(y)),
            ComparisonDirection::Ge => map2_pred(a, b, out, |x, y| key(x) >= key(y)),
        }
    } else {
        match direction {
            ComparisonDirection::Eq => map2_pred(a, b, out, float::eq),
            ComparisonDirection::Ne => map2_pred(a, b, out, float::ne),
            ComparisonDirection::Lt => map2_pred(a, b, out, float::lt),
            ComparisonDirection::Le => map2_pred(a, b, out, float::le),
            ComparisonDirection::Gt => map2_pred(a, b, out, float::gt),
            ComparisonDirection::Ge => map2_pred(a, b, out, float::ge),
        }
    }
    Ok(())
}

/// `compare` of complex slices: only `EQ` and `NE` exist. Under `TOTALORDER` both
/// parts are compared by their total-order keys (bitwise equality).
pub fn compare_complex<C: ComplexSemantics>(
    direction: ComparisonDirection,
    total_order: bool,
    a: &[C],
    b: &[C],
    out: &mut [u8],
) -> Result<()>
where
    C::Part: FloatSemantics,
{
    check_lengths("compare", &[a.len(), b.len(), out.len()])?;
    let same = |x: C, y: C| {
        float::total_order_key(x.re()) == float::total_order_key(y.re())
            && float::total_order_key(x.im()) == float::total_order_key(y.im())
    };
    match (direction, total_order) {
        (ComparisonDirection::Eq, false) => map2_pred(a, b, out, complex::eq),
        (ComparisonDirection::Ne, false) => map2_pred(a, b, out, complex::ne),
        (ComparisonDirection::Eq, true) => map2_pred(a, b, out, same),
        (ComparisonDirection::Ne, true) => map2_pred(a, b, out, |x, y| !same(x, y)),
        _ => {
            return Err(Error::unimplemented(format!(
                "compare direction {direction} is not defined for {} operands (complex \
                 numbers compare only with EQ and NE)",
                C::TYPE
            )))
        }
    }
    Ok(())
}

/// `clamp(lo, x, hi)` on integer slices; `lo`/`hi` of length 1 broadcast.
pub fn clamp_int<T: IntSemantics>(lo: &[T], x: &[T], hi: &[T], out: &mut [T]) -> Result<()> {
    clamp_with(lo, x, hi, out, |l, v, h| {
        int::minimum(h, int::maximum(l, v))
    })
}

/// `clamp(lo, x, hi)` on float slices (`minimum(hi, maximum(lo, x))`, NaN
/// propagating); `lo`/`hi` of length 1 broadcast.
pub fn clamp_float<T: FloatSemantics>(lo: &[T], x: &[T], hi: &[T], out: &mut [T]) -> Result<()> {
    clamp_with(lo, x, hi, out, float::clamp)
}

#[inline]
fn clamp_with<T: Copy>(
    lo: &[T],
    x: &[T],
    hi: &[T],
    out: &mut [T],
    f: impl Fn(T, T, T) -> T,
) -> Result<()> {
    check_lengths("clamp", &[x.len(), out.len()])?;
    let bound_ok = |b: &[T]| b.len() == 1 || b.len() == x.len();
    if !bound_ok(lo) || !bound_ok(hi) {
        return Err(Error::invalid_argument(format!(
            "clamp: bounds of {} and {} elements for an operand of {}",
            lo.len(),
            hi.len(),
            x.len()
        )));
    }
    match (lo, hi) {
        ([l], [h]) => map1(x, out, |v| f(*l, v, *h)),
        ([l], _) => {
            for ((o, &v), &h) in out.iter_mut().zip(x).zip(hi) {
                *o = f(*l, v, h);
            }
        }
        (_, [h]) => {
            for ((o, &v), &l) in out.iter_mut().zip(x).zip(lo) {
                *o = f(l, v, *h);
            }
        }
        _ => {
            for (((o, &v), &l), &h) in out.iter_mut().zip(x).zip(lo).zip(hi) {
                *o = f(l, v, h);
            }
        }
    }
    Ok(())
}

/// `select(pred, on_true, on_false)` on any element type; `pred` of length 1
/// broadcasts.
pub fn select<T: Copy>(pred: &[u8], on_true: &[T], on_false: &[T], out: &mut [T]) -> Result<()> {
    check_lengths("select", &[on_true.len(), on_false.len(), out.len()])?;
    match pred {
        [p] => out.copy_from_slice(if *p != 0 { on_true } else { on_false }),
        _ => {
            check_lengths("select", &[pred.len(), out.len()])?;
            for (((o, &p), &t), &f) in out.iter_mut().zip(pred).zip(on_true).zip(on_false) {
                *o = if p != 0 { t } else { f };
            }
        }
    }
    Ok(())
}

/// `reduce-precision` over a float slice.
pub fn reduce_precision<T: FloatSemantics>(
    x: &[T],
    exponent_bits: u32,
    mantissa_bits: u32,
    out: &mut [T],
) -> Result<()> {
    check_lengths("reduce-precision", &[x.len(), out.len()])?;
    map1(x, out, |v| {
        float::reduce_precision(v, exponent_bits, mantissa_bits)
    });
    Ok(())
}
