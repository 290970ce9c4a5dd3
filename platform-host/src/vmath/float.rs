//! Floating-point slice kernels, shared by [`super::f32`] and [`super::f64`].
//!
//! [`VFloat`] gives each element type its element functions (from
//! [`super::math32`] / [`super::math64`], or the shared scalar semantics where the
//! result must be bit-exact and the semantics' code already vectorises). The
//! kernels below match the op once, dispatch on the level once, and run one
//! monomorphised loop.

use super::isa::{dispatch, Isa};
use super::kernels::{self, map1, map1_fixup, map1_fixup_inplace, map1_inplace, map2, map2_to, map3};
use super::{math32, math64, FloatBinary, FloatUnary, Level, Operand};
use platform_api::hlo::ComparisonDirection as Compare;
use platform_api::semantics::float as sem;
use platform_api::Result;

/// A float element type the kernels support (`f32`, `f64`).
pub trait VFloat: sem::FloatSemantics + Default + Send + Sync {
    #[doc(hidden)]
    fn unary_elem<I: Isa>(op: FloatUnary, x: Self) -> Self;
    #[doc(hidden)]
    fn binary_elem<I: Isa>(op: FloatBinary, a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn trig_needs_slow(x: Self) -> bool;
    #[doc(hidden)]
    fn trig_slow(op: FloatUnary, x: Self) -> Self;
    #[doc(hidden)]
    fn rem_needs_slow(a: Self, b: Self) -> bool;
    #[doc(hidden)]
    fn rem_slow(a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn is_finite_elem(x: Self) -> bool;
}

/// Element function for `op`, inlined into the caller's loop. `op` is a constant
/// there (the kernels match on it outside the loop), so this folds to one arm.
macro_rules! float_unary_elem {
    ($m:ident, $op:expr, $x:expr) => {{
        let x = $x;
        match $op {
            FloatUnary::Neg => sem::negate(x),
            FloatUnary::Abs => sem::abs(x),
            FloatUnary::Sign => sem::sign(x),
            FloatUnary::Sqrt => x.sqrt(),
            FloatUnary::Rsqrt => $m::rsqrt(x),
            FloatUnary::Cbrt => cbrt_elem::<I, Self>(x),
            FloatUnary::Exp => $m::exp::<I>(x),
            FloatUnary::Expm1 => $m::expm1::<I>(x),
            FloatUnary::Log => $m::log::<I>(x),
            FloatUnary::Log1p => $m::log1p::<I>(x),
            FloatUnary::Logistic => $m::logistic::<I>(x),
            FloatUnary::Tanh => $m::tanh::<I>(x),
            FloatUnary::Erf => erf_elem::<I, Self>(x),
            FloatUnary::Sin => $m::sin::<I>(x),
            FloatUnary::Cos => $m::cos::<I>(x),
            FloatUnary::Tan => $m::tan::<I>(x),
            FloatUnary::Floor => $m::floor::<I>(x),
            FloatUnary::Ceil => $m::ceil::<I>(x),
            FloatUnary::RoundNearestEven => $m::round_even::<I>(x),
            FloatUnary::RoundNearestAfz => $m::round_away::<I>(x),
        }
    }};
}

/// Per-type hooks for the few functions whose implementation differs in kind
/// (vectorised for `f32`, the C library for `f64`).
trait Specific: Sized {
    fn cbrt_v<I: Isa>(x: Self) -> Self;
    fn erf_v<I: Isa>(x: Self) -> Self;
}
impl Specific for f32 {
    #[inline(always)]
    fn cbrt_v<I: Isa>(x: f32) -> f32 {
        math32::cbrt::<I>(x)
    }
    #[inline(always)]
    fn erf_v<I: Isa>(x: f32) -> f32 {
        math32::erf::<I>(x)
    }
}
impl Specific for f64 {
    #[inline(always)]
    fn cbrt_v<I: Isa>(x: f64) -> f64 {
        sem::cbrt(x)
    }
    #[inline(always)]
    fn erf_v<I: Isa>(x: f64) -> f64 {
        sem::erf(x)
    }
}
#[inline(always)]
fn cbrt_elem<I: Isa, T: Specific>(x: T) -> T {
    T::cbrt_v::<I>(x)
}
#[inline(always)]
fn erf_elem<I: Isa, T: Specific>(x: T) -> T {
    T::erf_v::<I>(x)
}

impl VFloat for f32 {
    #[inline(always)]
    fn unary_elem<I: Isa>(op: FloatUnary, x: f32) -> f32 {
        float_unary_elem!(math32, op, x)
    }
    #[inline(always)]
    fn binary_elem<I: Isa>(op: FloatBinary, a: f32, b: f32) -> f32 {
        match op {
            FloatBinary::Add => a + b,
            FloatBinary::Sub => a - b,
            FloatBinary::Mul => a * b,
            FloatBinary::Div => a / b,
            FloatBinary::Max => sem::maximum(a, b),
            FloatBinary::Min => sem::minimum(a, b),
            FloatBinary::Pow => math32::pow::<I>(a, b),
            FloatBinary::Atan2 => math32::atan2::<I>(a, b),
            FloatBinary::Rem => math32::rem::<I>(a, b),
        }
    }
    #[inline(always)]
    fn trig_needs_slow(x: f32) -> bool {
        math32::trig_needs_slow(x)
    }
    fn trig_slow(op: FloatUnary, x: f32) -> f32 {
        match op {
            FloatUnary::Cos => math32::cos_slow(x),
            FloatUnary::Tan => math32::tan_slow(x),
            _ => math32::sin_slow(x),
        }
    }
    #[inline(always)]
    fn rem_needs_slow(a: f32, b: f32) -> bool {
        math32::rem_needs_slow(a, b)
    }
    fn rem_slow(a: f32, b: f32) -> f32 {
        math32::rem_slow(a, b)
    }
    #[inline(always)]
    fn is_finite_elem(x: f32) -> bool {
        x.to_bits() & 0x7fff_ffff < 0x7f80_0000
    }
}

impl VFloat for f64 {
    #[inline(always)]
    fn unary_elem<I: Isa>(op: FloatUnary, x: f64) -> f64 {
        float_unary_elem!(math64, op, x)
    }
    #[inline(always)]
    fn binary_elem<I: Isa>(op: FloatBinary, a: f64, b: f64) -> f64 {
        match op {
            FloatBinary::Add => a + b,
            FloatBinary::Sub => a - b,
            FloatBinary::Mul => a * b,
            FloatBinary::Div => a / b,
            FloatBinary::Max => sem::maximum(a, b),
            FloatBinary::Min => sem::minimum(a, b),
            FloatBinary::Pow => sem::power(a, b),
            FloatBinary::Atan2 => sem::atan2(a, b),
            FloatBinary::Rem => sem::remainder(a, b),
        }
    }
    #[inline(always)]
    fn trig_needs_slow(x: f64) -> bool {
        math64::trig_needs_slow(x)
    }
    fn trig_slow(op: FloatUnary, x: f64) -> f64 {
        match op {
            FloatUnary::Cos => math64::cos_slow(x),
            FloatUnary::Tan => math64::tan_slow(x),
            _ => math64::sin_slow(x),
        }
    }
    #[inline(always)]
    fn rem_needs_slow(_: f64, _: f64) -> bool {
        false
    }
    fn rem_slow(a: f64, b: f64) -> f64 {
        sem::remainder(a, b)
    }
    #[inline(always)]
    fn is_finite_elem(x: f64) -> bool {
        x.to_bits() & !(1 << 63) < 0x7ff0_0000_0000_0000
    }
}

fn is_trig(op: FloatUnary) -> bool {
    matches!(op, FloatUnary::Sin | FloatUnary::Cos | FloatUnary::Tan)
}

/// Runs `$body` with `$op` bound to each [`FloatUnary`] variant as a constant,
/// so that the element function folds to one arm per loop.
macro_rules! each_unary {
    ($op:expr, $c:ident => $body:expr) => {
        match $op {
            FloatUnary::Neg => { const $c: FloatUnary = FloatUnary::Neg; $body }
            FloatUnary::Abs => { const $c: FloatUnary = FloatUnary::Abs; $body }
            FloatUnary::Sign => { const $c: FloatUnary = FloatUnary::Sign; $body }
            FloatUnary::Sqrt => { const $c: FloatUnary = FloatUnary::Sqrt; $body }
            FloatUnary::Rsqrt => { const $c: FloatUnary = FloatUnary::Rsqrt; $body }
            FloatUnary::Cbrt => { const $c: FloatUnary = FloatUnary::Cbrt; $body }
            FloatUnary::Exp => { const $c: FloatUnary = FloatUnary::Exp; $body }
            FloatUnary::Expm1 => { const $c: FloatUnary = FloatUnary::Expm1; $body }
            FloatUnary::Log => { const $c: FloatUnary = FloatUnary::Log; $body }
            FloatUnary::Log1p => { const $c: FloatUnary = FloatUnary::Log1p; $body }
            FloatUnary::Logistic => { const $c: FloatUnary = FloatUnary::Logistic; $body }
            FloatUnary::Tanh => { const $c: FloatUnary = FloatUnary::Tanh; $body }
            FloatUnary::Erf => { const $c: FloatUnary = FloatUnary::Erf; $body }
            FloatUnary::Sin => { const $c: FloatUnary = FloatUnary::Sin; $body }
            FloatUnary::Cos => { const $c: FloatUnary = FloatUnary::Cos; $body }
            FloatUnary::Tan => { const $c: FloatUnary = FloatUnary::Tan; $body }
            FloatUnary::Floor => { const $c: FloatUnary = FloatUnary::Floor; $body }
            FloatUnary::Ceil => { const $c: FloatUnary = FloatUnary::Ceil; $body }
            FloatUnary::RoundNearestEven => { const $c: FloatUnary = FloatUnary::RoundNearestEven; $body }
            FloatUnary::RoundNearestAfz => { const $c: FloatUnary = FloatUnary::RoundNearestAfz; $body }
        }
    };
}

macro_rules! each_binary {
    ($op:expr, $c:ident => $body:expr) => {
        match $op {
            FloatBinary::Add => { const $c: FloatBinary = FloatBinary::Add; $body }
            FloatBinary::Sub => { const $c: FloatBinary = FloatBinary::Sub; $body }
            FloatBinary::Mul => { const $c: FloatBinary = FloatBinary::Mul; $body }
            FloatBinary::Div => { const $c: FloatBinary = FloatBinary::Div; $body }
            FloatBinary::Max => { const $c: FloatBinary = FloatBinary::Max; $body }
            FloatBinary::Min => { const $c: FloatBinary = FloatBinary::Min; $body }
            FloatBinary::Pow => { const $c: FloatBinary = FloatBinary::Pow; $body }
            FloatBinary::Atan2 => { const $c: FloatBinary = FloatBinary::Atan2; $body }
            FloatBinary::Rem => { const $c: FloatBinary = FloatBinary::Rem; $body }
        }
    };
}

/// `dst = op(src)`.
pub fn unary<T: VFloat>(level: Level, op: FloatUnary, src: &[T], dst: &mut [T]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(kernels::length_error(op.name(), src.len(), dst.len()));
    }
    dispatch!(level, I => each_unary!(op, OP => {
        if is_trig(OP) {
            map1_fixup(src, dst, |x| T::unary_elem::<I>(OP, x), T::trig_needs_slow, |x| T::trig_slow(OP, x))
        } else {
            map1(src, dst, |x| T::unary_elem::<I>(OP, x))
        }
    }));
    Ok(())
}

/// `buf = op(buf)`.
pub fn unary_inplace<T: VFloat>(level: Level, op: FloatUnary, buf: &mut [T]) {
    dispatch!(level, I => each_unary!(op, OP => {
        if is_trig(OP) {
            map1_fixup_inplace(buf, |x| T::unary_elem::<I>(OP, x), T::trig_needs_slow, |x| T::trig_slow(OP, x))
        } else {
            map1_inplace(buf, |x| T::unary_elem::<I>(OP, x))
        }
    }))
}

/// `dst = op(a, b)`.
pub fn binary<T: VFloat>(
    level: Level,
    op: FloatBinary,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths(op.name(), &[&a, &b], dst.len())?;
    if op == FloatBinary::Rem {
        return rem(level, a, b, dst);
    }
    dispatch!(level, I => each_binary!(op, OP => map2(a, b, dst, |x, y| T::binary_elem::<I>(OP, x, y))));
    Ok(())
}

/// `remainder`, whose fast formula needs a scalar fix-up for huge quotients.
fn rem<T: VFloat>(level: Level, a: Operand<'_, T>, b: Operand<'_, T>, dst: &mut [T]) -> Result<()> {
    const CHUNK: usize = 256;
    let n = dst.len();
    let mut start = 0;
    // The destination may be an operand: keep each chunk's original values.
    let mut saved_a = [T::default(); CHUNK];
    let mut saved_b = [T::default(); CHUNK];
    while start < n {
        let end = (start + CHUNK).min(n);
        let len = end - start;
        for (op, saved) in [(&a, &mut saved_a), (&b, &mut saved_b)] {
            match op {
                Operand::Slice(s) => saved[..len].copy_from_slice(&s[start..end]),
                Operand::Scalar(c) => saved[..len].fill(*c),
                Operand::Dst => saved[..len].copy_from_slice(&dst[start..end]),
            }
        }
        let (sa, sb) = (&saved_a[..len], &saved_b[..len]);
        let out = &mut dst[start..end];
        dispatch!(level, I => map2(Operand::Slice(sa), Operand::Slice(sb), out, |x, y| T::binary_elem::<I>(FloatBinary::Rem, x, y)));
        for i in 0..len {
            if T::rem_needs_slow(sa[i], sb[i]) {
                out[i] = T::rem_slow(sa[i], sb[i]);
            }
        }
        start = end;
    }
    Ok(())
}

/// `dst = clamp(lo, x, hi)` (XLA's `minimum(hi, maximum(lo, x))`).
pub fn clamp<T: VFloat>(
    level: Level,
    lo: Operand<'_, T>,
    x: Operand<'_, T>,
    hi: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths("clamp", &[&lo, &x, &hi], dst.len())?;
    dispatch!(level, I => map3(lo, x, hi, dst, sem::clamp));
    Ok(())
}

/// `dst[i] = a[i] <dir> b[i]` as 0/1 bytes; `total_order` selects XLA's
/// `TOTALORDER` comparison type instead of IEEE comparison.
pub fn compare<T: VFloat>(
    level: Level,
    dir: Compare,
    total_order: bool,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [u8],
) -> Result<()> {
    kernels::no_dst("compare", &[&a, &b])?;
    kernels::check_lengths("compare", &[&a, &b], dst.len())?;
    macro_rules! cmp {
        ($f:expr) => {
            dispatch!(level, I => map2_to(a, b, dst, |x, y| $f(x, y) as u8))
        };
    }
    if total_order {
        let key = sem::total_order_key::<T>;
        match dir {
            Compare::Eq => cmp!(|x, y| key(x) == key(y)),
            Compare::Ne => cmp!(|x, y| key(x) != key(y)),
            Compare::Lt => cmp!(|x, y| key(x) < key(y)),
            Compare::Le => cmp!(|x, y| key(x) <= key(y)),
            Compare::Gt => cmp!(|x, y| key(x) > key(y)),
            Compare::Ge => cmp!(|x, y| key(x) >= key(y)),
        }
    } else {
        match dir {
            Compare::Eq => cmp!(sem::eq::<T>),
            Compare::Ne => cmp!(sem::ne::<T>),
            Compare::Lt => cmp!(sem::lt::<T>),
            Compare::Le => cmp!(sem::le::<T>),
            Compare::Gt => cmp!(sem::gt::<T>),
            Compare::Ge => cmp!(sem::ge::<T>),
        }
    }
    Ok(())
}

/// `dst[i] = is_finite(src[i])` as 0/1 bytes.
pub fn is_finite<T: VFloat>(level: Level, src: &[T], dst: &mut [u8]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(kernels::length_error("is-finite", src.len(), dst.len()));
    }
    dispatch!(level, I => map1(src, dst, |x| T::is_finite_elem(x) as u8));
    Ok(())
}
