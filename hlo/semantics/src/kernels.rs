//! Slice kernels: one elementwise op over typed slices, in a tight loop.
//!
//! Each kernel matches the op once, then runs a loop whose body is one of the
//! `#[inline]` element functions of [`super::int`], [`super::float`],
//! [`super::complex`], [`super::pred`] or [`mod@super::convert`], monomorphised for the element type, so
//! the compiler sees straight-line code it can vectorise. The array layer
//! ([`super::unary`], [`super::binary`], ...) is these kernels applied to a
//! [`crate::Literal`]'s typed data; a compiled backend can call them directly on its
//! own buffers.
//!
//! Kernels check that the slices have equal lengths and return
//! `Unimplemented` for an op XLA does not define on the element type.
//!
//! The `*_fn` getters return the element function of an op as a plain function
//! pointer, for code that composes elementwise ops itself (a fused loop evaluating
//! several ops per element): look the op up once, call the pointer per element.

use super::complex::{self, ComplexSemantics};
use super::float::{self, FloatSemantics};
use super::int::{self, IntSemantics};
use super::pred;
use hlo_ir::shape::ElementType;
use hlo_ir::{BinaryOp, ComparisonDirection, UnaryOp};
use hlo_ir::{Error, Result};

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

// Each op table is written once, as a macro that binds `$f` to the element
// function for `op` and evaluates `$then` with it: the slice kernels pass `$f` to a
// generic loop (so it is inlined and the loop vectorises), the `*_fn` getters
// return it as a function pointer.

macro_rules! int_unary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            UnaryOp::Abs => {
                let $f = int::abs::<$T>;
                $then
            }
            UnaryOp::Negate => {
                let $f = int::negate::<$T>;
                $then
            }
            UnaryOp::Not => {
                let $f = int::not::<$T>;
                $then
            }
            UnaryOp::PopCount => {
                let $f = int::popcnt::<$T>;
                $then
            }
            UnaryOp::Clz => {
                let $f = int::count_leading_zeros::<$T>;
                $then
            }
            UnaryOp::Sign if <$T as IntSemantics>::SIGNED => {
                let $f = int::sign::<$T>;
                $then
            }
            _ => $undefined,
        }
    };
}

macro_rules! int_binary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            BinaryOp::Add => {
                let $f = int::add::<$T>;
                $then
            }
            BinaryOp::Subtract => {
                let $f = int::subtract::<$T>;
                $then
            }
            BinaryOp::Multiply => {
                let $f = int::multiply::<$T>;
                $then
            }
            BinaryOp::Divide => {
                let $f = int::divide::<$T>;
                $then
            }
            BinaryOp::Remainder => {
                let $f = int::remainder::<$T>;
                $then
            }
            BinaryOp::Maximum => {
                let $f = int::maximum::<$T>;
                $then
            }
            BinaryOp::Minimum => {
                let $f = int::minimum::<$T>;
                $then
            }
            BinaryOp::And => {
                let $f = int::and::<$T>;
                $then
            }
            BinaryOp::Or => {
                let $f = int::or::<$T>;
                $then
            }
            BinaryOp::Xor => {
                let $f = int::xor::<$T>;
                $then
            }
            BinaryOp::ShiftLeft => {
                let $f = int::shift_left::<$T>;
                $then
            }
            BinaryOp::ShiftRightLogical => {
                let $f = int::shift_right_logical::<$T>;
                $then
            }
            BinaryOp::ShiftRightArithmetic => {
                let $f = int::shift_right_arithmetic::<$T>;
                $then
            }
            BinaryOp::Power => {
                let $f = int::power::<$T>;
                $then
            }
            BinaryOp::Atan2 | BinaryOp::Complex => $undefined,
        }
    };
}

macro_rules! pred_unary_table {
    ($op:expr, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            UnaryOp::Not => {
                let $f = pred::not;
                $then
            }
            _ => $undefined,
        }
    };
}

macro_rules! pred_binary_table {
    ($op:expr, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            BinaryOp::And | BinaryOp::Multiply | BinaryOp::Minimum => {
                let $f = pred::and;
                $then
            }
            BinaryOp::Or | BinaryOp::Add | BinaryOp::Maximum => {
                let $f = pred::or;
                $then
            }
            BinaryOp::Xor => {
                let $f = pred::xor;
                $then
            }
            _ => $undefined,
        }
    };
}

macro_rules! float_unary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            UnaryOp::Abs => {
                let $f = float::abs::<$T>;
                $then
            }
            UnaryOp::Cbrt => {
                let $f = float::cbrt::<$T>;
                $then
            }
            UnaryOp::Ceil => {
                let $f = float::ceil::<$T>;
                $then
            }
            UnaryOp::Cos => {
                let $f = float::cos::<$T>;
                $then
            }
            UnaryOp::Erf => {
                let $f = float::erf::<$T>;
                $then
            }
            UnaryOp::Exp => {
                let $f = float::exp::<$T>;
                $then
            }
            UnaryOp::Expm1 => {
                let $f = float::exponential_minus_one::<$T>;
                $then
            }
            UnaryOp::Floor => {
                let $f = float::floor::<$T>;
                $then
            }
            UnaryOp::Imag => {
                let $f = float::imag::<$T>;
                $then
            }
            UnaryOp::Log => {
                let $f = float::log::<$T>;
                $then
            }
            UnaryOp::Log1p => {
                let $f = float::log_plus_one::<$T>;
                $then
            }
            UnaryOp::Logistic => {
                let $f = float::logistic::<$T>;
                $then
            }
            UnaryOp::Negate => {
                let $f = float::negate::<$T>;
                $then
            }
            UnaryOp::Real => {
                let $f = float::real::<$T>;
                $then
            }
            UnaryOp::RoundNearestAfz => {
                let $f = float::round_nearest_afz::<$T>;
                $then
            }
            UnaryOp::RoundNearestEven => {
                let $f = float::round_nearest_even::<$T>;
                $then
            }
            UnaryOp::Rsqrt => {
                let $f = float::rsqrt::<$T>;
                $then
            }
            UnaryOp::Sign => {
                let $f = float::sign::<$T>;
                $then
            }
            UnaryOp::Sin => {
                let $f = float::sin::<$T>;
                $then
            }
            UnaryOp::Sqrt => {
                let $f = float::sqrt::<$T>;
                $then
            }
            UnaryOp::Tan => {
                let $f = float::tan::<$T>;
                $then
            }
            UnaryOp::Tanh => {
                let $f = float::tanh::<$T>;
                $then
            }
            UnaryOp::IsFinite | UnaryOp::Not | UnaryOp::PopCount | UnaryOp::Clz => $undefined,
        }
    };
}

macro_rules! float_binary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            BinaryOp::Add => {
                let $f = float::add::<$T>;
                $then
            }
            BinaryOp::Subtract => {
                let $f = float::subtract::<$T>;
                $then
            }
            BinaryOp::Multiply => {
                let $f = float::multiply::<$T>;
                $then
            }
            BinaryOp::Divide => {
                let $f = float::divide::<$T>;
                $then
            }
            BinaryOp::Remainder => {
                let $f = float::remainder::<$T>;
                $then
            }
            BinaryOp::Maximum => {
                let $f = float::maximum::<$T>;
                $then
            }
            BinaryOp::Minimum => {
                let $f = float::minimum::<$T>;
                $then
            }
            BinaryOp::Power => {
                let $f = float::power::<$T>;
                $then
            }
            BinaryOp::Atan2 => {
                let $f = float::atan2::<$T>;
                $then
            }
            BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor
            | BinaryOp::ShiftLeft
            | BinaryOp::ShiftRightArithmetic
            | BinaryOp::ShiftRightLogical
            | BinaryOp::Complex => $undefined,
        }
    };
}

macro_rules! complex_unary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            UnaryOp::Cos => {
                let $f = complex::cos::<$T>;
                $then
            }
            UnaryOp::Exp => {
                let $f = complex::exp::<$T>;
                $then
            }
            UnaryOp::Expm1 => {
                let $f = complex::exponential_minus_one::<$T>;
                $then
            }
            UnaryOp::Log => {
                let $f = complex::log::<$T>;
                $then
            }
            UnaryOp::Log1p => {
                let $f = complex::log_plus_one::<$T>;
                $then
            }
            UnaryOp::Logistic => {
                let $f = complex::logistic::<$T>;
                $then
            }
            UnaryOp::Negate => {
                let $f = complex::negate::<$T>;
                $then
            }
            UnaryOp::Rsqrt => {
                let $f = complex::rsqrt::<$T>;
                $then
            }
            UnaryOp::Sign => {
                let $f = complex::sign::<$T>;
                $then
            }
            UnaryOp::Sin => {
                let $f = complex::sin::<$T>;
                $then
            }
            UnaryOp::Sqrt => {
                let $f = complex::sqrt::<$T>;
                $then
            }
            UnaryOp::Tan => {
                let $f = complex::tan::<$T>;
                $then
            }
            UnaryOp::Tanh => {
                let $f = complex::tanh::<$T>;
                $then
            }
            _ => $undefined,
        }
    };
}

macro_rules! complex_binary_table {
    ($op:expr, $T:ty, $f:ident => $then:expr, else $undefined:expr) => {
        match $op {
            BinaryOp::Add => {
                let $f = complex::add::<$T>;
                $then
            }
            BinaryOp::Subtract => {
                let $f = complex::subtract::<$T>;
                $then
            }
            BinaryOp::Multiply => {
                let $f = complex::multiply::<$T>;
                $then
            }
            BinaryOp::Divide => {
                let $f = complex::divide::<$T>;
                $then
            }
            BinaryOp::Power => {
                let $f = complex::power::<$T>;
                $then
            }
            BinaryOp::Atan2 => {
                let $f = complex::atan2::<$T>;
                $then
            }
            _ => $undefined,
        }
    };
}

/// A unary op on a signed or unsigned integer slice (`abs`, `negate`, `not`,
/// `popcnt`, `count-leading-zeros`, and `sign` for signed types).
pub fn int_unary<T: IntSemantics>(op: UnaryOp, x: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    int_unary_table!(op, T, f => map1(x, out, f), else return Err(undefined(op.name(), T::TYPE)));
    Ok(())
}

/// The element function of a unary integer op.
pub fn int_unary_fn<T: IntSemantics>(op: UnaryOp) -> Result<fn(T) -> T> {
    int_unary_table!(op, T, f => Ok(f), else Err(undefined(op.name(), T::TYPE)))
}

/// A binary op on integer slices.
pub fn int_binary<T: IntSemantics>(op: BinaryOp, a: &[T], b: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    int_binary_table!(op, T, f => map2(a, b, out, f), else return Err(undefined(op.name(), T::TYPE)));
    Ok(())
}

/// The element function of a binary integer op.
pub fn int_binary_fn<T: IntSemantics>(op: BinaryOp) -> Result<fn(T, T) -> T> {
    int_binary_table!(op, T, f => Ok(f), else Err(undefined(op.name(), T::TYPE)))
}

/// A unary op on a `pred` slice (bytes holding 0 or 1): only `not`.
pub fn pred_unary(op: UnaryOp, x: &[u8], out: &mut [u8]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    pred_unary_table!(op, f => map1(x, out, f), else return Err(undefined(op.name(), ElementType::Pred)));
    Ok(())
}

/// The element function of a unary `pred` op.
pub fn pred_unary_fn(op: UnaryOp) -> Result<fn(u8) -> u8> {
    pred_unary_table!(op, f => Ok(f), else Err(undefined(op.name(), ElementType::Pred)))
}

/// A binary op on `pred` slices. As in XLA, `add` and `maximum` are `or`,
/// `multiply` and `minimum` are `and`.
pub fn pred_binary(op: BinaryOp, a: &[u8], b: &[u8], out: &mut [u8]) -> Result<()> {
    check_lengths(op.name(), &[a.len(), b.len(), out.len()])?;
    pred_binary_table!(op, f => map2(a, b, out, f), else return Err(undefined(op.name(), ElementType::Pred)));
    Ok(())
}

/// The element function of a binary `pred` op.
pub fn pred_binary_fn(op: BinaryOp) -> Result<fn(u8, u8) -> u8> {
    pred_binary_table!(op, f => Ok(f), else Err(undefined(op.name(), ElementType::Pred)))
}

/// A unary op on a float slice whose result has the operand's type (every float
/// unary op except `is-finite`; `real` is the identity and `imag` gives zeros, as
/// XLA defines them for real operands).
pub fn float_unary<T: FloatSemantics>(op: UnaryOp, x: &[T], out: &mut [T]) -> Result<()> {
    check_lengths(op.name(), &[x.len(), out.len()])?;
    float_unary_table!(op, T, f => map1(x, out, f), else return Err(undefined(op.name(), T::TYPE)));
    Ok(())
}

/// The element function of a unary float op with a result of the operand's type.
pub fn float_unary_fn<T: FloatSemantics>(op: UnaryOp) -> Result<fn(T) -> T> {
    float_unary_table!(op, T, f => Ok(f), else Err(undefined(op.name(), T::TYPE)))
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
    float_binary_table!(op, T, f => map2(a, b, out, f), else return Err(undefined(op.name(), T::TYPE)));
    Ok(())
}

/// The element function of a binary float op (not `complex`).
pub fn float_binary_fn<T: FloatSemantics>(op: BinaryOp) -> Result<fn(T, T) -> T> {
    float_binary_table!(op, T, f => Ok(f), else Err(undefined(op.name(), T::TYPE)))
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
    complex_unary_table!(op, C, f => map1(x, out, f), else return Err(undefined(op.name(), C::TYPE)));
    Ok(())
}

/// The element function of a unary complex op with a complex result.
pub fn complex_unary_fn<C: ComplexSemantics>(op: UnaryOp) -> Result<fn(C) -> C> {
    complex_unary_table!(op, C, f => Ok(f), else Err(undefined(op.name(), C::TYPE)))
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
    complex_binary_table!(op, C, f => map2(a, b, out, f), else return Err(undefined(op.name(), C::TYPE)));
    Ok(())
}

/// The element function of a binary complex op.
pub fn complex_binary_fn<C: ComplexSemantics>(op: BinaryOp) -> Result<fn(C, C) -> C> {
    complex_binary_table!(op, C, f => Ok(f), else Err(undefined(op.name(), C::TYPE)))
}

/// The element function of `compare` on integers (or `pred` bytes) in the type's
/// own order.
pub fn compare_int_fn<T: IntSemantics>(direction: ComparisonDirection) -> fn(T, T) -> bool {
    match direction {
        ComparisonDirection::Eq => |x, y| x == y,
        ComparisonDirection::Ne => |x, y| x != y,
        ComparisonDirection::Lt => |x, y| x < y,
        ComparisonDirection::Le => |x, y| x <= y,
        ComparisonDirection::Gt => |x, y| x > y,
        ComparisonDirection::Ge => |x, y| x >= y,
    }
}

/// The element function of `compare` on floats: IEEE, or XLA's `TOTALORDER`.
pub fn compare_float_fn<T: FloatSemantics>(
    direction: ComparisonDirection,
    total_order: bool,
) -> fn(T, T) -> bool {
    use float::total_order_key as key;
    match (direction, total_order) {
        (ComparisonDirection::Eq, false) => float::eq,
        (ComparisonDirection::Ne, false) => float::ne,
        (ComparisonDirection::Lt, false) => float::lt,
        (ComparisonDirection::Le, false) => float::le,
        (ComparisonDirection::Gt, false) => float::gt,
        (ComparisonDirection::Ge, false) => float::ge,
        (ComparisonDirection::Eq, true) => |x, y| key(x) == key(y),
        (ComparisonDirection::Ne, true) => |x, y| key(x) != key(y),
        (ComparisonDirection::Lt, true) => |x, y| key(x) < key(y),
        (ComparisonDirection::Le, true) => |x, y| key(x) <= key(y),
        (ComparisonDirection::Gt, true) => |x, y| key(x) > key(y),
        (ComparisonDirection::Ge, true) => |x, y| key(x) >= key(y),
    }
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
