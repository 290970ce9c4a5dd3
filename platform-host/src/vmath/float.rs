//! Floating-point slice kernels, shared by [`super::f32`] and [`super::f64`].
//!
//! [`VFloat`] gives each element type its element functions (from
//! [`super::math32`] / [`super::math64`], or the shared scalar semantics where the
//! result must be bit-exact and the semantics' code already vectorises). The
//! kernels below match the op once, dispatch on the level once, and run one
//! monomorphised loop.

use super::isa::{dispatch, Isa};
use super::kernels::{
    self, map1, map1_fixup, map1_fixup_inplace, map1_inplace, map1_paired, map1_paired_inplace,
    map2, map2_to, map3,
};
use super::{math32, math64, FloatBinary, FloatUnary, Level, Operand};
use platform_api::hlo::ComparisonDirection as Compare;
pub use platform_api::semantics::contraction::Contraction;
use platform_api::semantics::float as sem;
use platform_api::Result;
use std::marker::PhantomData;

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
    #[doc(hidden)]
    fn mul_add(a: Self, b: Self, c: Self) -> Self;
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
        math32::cbrt(x)
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
    fn mul_add(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
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
    fn mul_add(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
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

/// Ops whose element function is a few instructions: their loops are left to
/// LLVM's own unrolling; every other op runs through
/// [`kernels::map1_paired`].
const fn is_cheap(op: u8) -> bool {
    op == FloatUnary::Neg as u8
        || op == FloatUnary::Abs as u8
        || op == FloatUnary::Sign as u8
        || op == FloatUnary::Sqrt as u8
        || op == FloatUnary::Floor as u8
        || op == FloatUnary::Ceil as u8
        || op == FloatUnary::RoundNearestEven as u8
        || op == FloatUnary::RoundNearestAfz as u8
}

const fn is_trig(op: u8) -> bool {
    op == FloatUnary::Sin as u8 || op == FloatUnary::Cos as u8 || op == FloatUnary::Tan as u8
}

// Element functions as fn items (not closures): each is its own zero-sized
// type whose call is `#[inline(always)]`, so it is inlined into every loop
// form even when the body is large (a closure called from several loop forms
// may be left out of line, and then compiled without the level's features).

/// `op(x)` for the op with index `OP` (see [`kernels::Fn1`] for why a type).
struct UnaryK<T, I, const OP: u8>(PhantomData<(T, I)>);
impl<T, I, const OP: u8> Clone for UnaryK<T, I, OP> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, I, const OP: u8> Copy for UnaryK<T, I, OP> {}
impl<T: VFloat, I: Isa, const OP: u8> kernels::Fn1<T, T> for UnaryK<T, I, OP> {
    #[inline(always)]
    fn call(self, x: T) -> T {
        T::unary_elem::<I>(FloatUnary::ALL[OP as usize], x)
    }
}

fn trig_slow_fn<T: VFloat, const OP: u8>(x: T) -> T {
    T::trig_slow(FloatUnary::ALL[OP as usize], x)
}

/// `op(a, b)` for the op with index `OP`.
struct BinaryK<T, I, const OP: u8>(PhantomData<(T, I)>);
impl<T, I, const OP: u8> Clone for BinaryK<T, I, OP> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, I, const OP: u8> Copy for BinaryK<T, I, OP> {}
impl<T: VFloat, I: Isa, const OP: u8> kernels::Fn2<T, T> for BinaryK<T, I, OP> {
    #[inline(always)]
    fn call(self, a: T, b: T) -> T {
        T::binary_elem::<I>(FloatBinary::ALL[OP as usize], a, b)
    }
}

#[inline(always)]
fn is_finite_fn<T: VFloat>(x: T) -> u8 {
    T::is_finite_elem(x) as u8
}

macro_rules! compare_fns {
    ($($name:ident $key:ident $test:tt $cmp:path;)*) => {$(
        #[inline(always)]
        fn $name<T: VFloat>(a: T, b: T) -> u8 {
            compare_fns!(@body $key $test $cmp, a, b) as u8
        }
    )*};
    (@body total $test:tt $cmp:path, $a:ident, $b:ident) => {
        sem::total_order_key($a) $test sem::total_order_key($b)
    };
    (@body ieee $test:tt $cmp:path, $a:ident, $b:ident) => {
        $cmp($a, $b)
    };
}
compare_fns! {
    eq_ieee ieee == sem::eq; ne_ieee ieee != sem::ne; lt_ieee ieee < sem::lt;
    le_ieee ieee <= sem::le; gt_ieee ieee > sem::gt; ge_ieee ieee >= sem::ge;
    eq_total total == sem::eq; ne_total total != sem::ne; lt_total total < sem::lt;
    le_total total <= sem::le; gt_total total > sem::gt; ge_total total >= sem::ge;
}

/// Runs `$body` with `$op` bound to each [`FloatUnary`] variant as a constant,
/// so that the element function folds to one arm per loop.
macro_rules! each_unary {
    ($op:expr, $c:ident => $body:expr) => {
        match $op {
            FloatUnary::Neg => {
                const $c: u8 = FloatUnary::Neg as u8;
                $body
            }
            FloatUnary::Abs => {
                const $c: u8 = FloatUnary::Abs as u8;
                $body
            }
            FloatUnary::Sign => {
                const $c: u8 = FloatUnary::Sign as u8;
                $body
            }
            FloatUnary::Sqrt => {
                const $c: u8 = FloatUnary::Sqrt as u8;
                $body
            }
            FloatUnary::Rsqrt => {
                const $c: u8 = FloatUnary::Rsqrt as u8;
                $body
            }
            FloatUnary::Cbrt => {
                const $c: u8 = FloatUnary::Cbrt as u8;
                $body
            }
            FloatUnary::Exp => {
                const $c: u8 = FloatUnary::Exp as u8;
                $body
            }
            FloatUnary::Expm1 => {
                const $c: u8 = FloatUnary::Expm1 as u8;
                $body
            }
            FloatUnary::Log => {
                const $c: u8 = FloatUnary::Log as u8;
                $body
            }
            FloatUnary::Log1p => {
                const $c: u8 = FloatUnary::Log1p as u8;
                $body
            }
            FloatUnary::Logistic => {
                const $c: u8 = FloatUnary::Logistic as u8;
                $body
            }
            FloatUnary::Tanh => {
                const $c: u8 = FloatUnary::Tanh as u8;
                $body
            }
            FloatUnary::Erf => {
                const $c: u8 = FloatUnary::Erf as u8;
                $body
            }
            FloatUnary::Sin => {
                const $c: u8 = FloatUnary::Sin as u8;
                $body
            }
            FloatUnary::Cos => {
                const $c: u8 = FloatUnary::Cos as u8;
                $body
            }
            FloatUnary::Tan => {
                const $c: u8 = FloatUnary::Tan as u8;
                $body
            }
            FloatUnary::Floor => {
                const $c: u8 = FloatUnary::Floor as u8;
                $body
            }
            FloatUnary::Ceil => {
                const $c: u8 = FloatUnary::Ceil as u8;
                $body
            }
            FloatUnary::RoundNearestEven => {
                const $c: u8 = FloatUnary::RoundNearestEven as u8;
                $body
            }
            FloatUnary::RoundNearestAfz => {
                const $c: u8 = FloatUnary::RoundNearestAfz as u8;
                $body
            }
        }
    };
}

macro_rules! each_binary {
    ($op:expr, $c:ident => $body:expr) => {
        match $op {
            FloatBinary::Add => {
                const $c: u8 = FloatBinary::Add as u8;
                $body
            }
            FloatBinary::Sub => {
                const $c: u8 = FloatBinary::Sub as u8;
                $body
            }
            FloatBinary::Mul => {
                const $c: u8 = FloatBinary::Mul as u8;
                $body
            }
            FloatBinary::Div => {
                const $c: u8 = FloatBinary::Div as u8;
                $body
            }
            FloatBinary::Max => {
                const $c: u8 = FloatBinary::Max as u8;
                $body
            }
            FloatBinary::Min => {
                const $c: u8 = FloatBinary::Min as u8;
                $body
            }
            FloatBinary::Pow => {
                const $c: u8 = FloatBinary::Pow as u8;
                $body
            }
            FloatBinary::Atan2 => {
                const $c: u8 = FloatBinary::Atan2 as u8;
                $body
            }
            FloatBinary::Rem => {
                const $c: u8 = FloatBinary::Rem as u8;
                $body
            }
        }
    };
}

/// `dst = op(src)`.
pub fn unary<T: VFloat>(level: Level, op: FloatUnary, src: &[T], dst: &mut [T]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(kernels::length_error(op.name(), src.len(), dst.len()));
    }
    // The op outermost: each (op, level) pair is its own small closure, which
    // LLVM inlines into the level's trampoline (one closure holding every op
    // grew past the inliner's limit and lost the level's features).
    each_unary!(op, OP => dispatch!(level, I => {
        if const { is_trig(OP) } {
            map1_fixup(src, dst, UnaryK::<T, I, OP>(PhantomData), T::trig_needs_slow, trig_slow_fn::<T, OP>)
        } else if const { is_cheap(OP) } {
            map1(src, dst, UnaryK::<T, I, OP>(PhantomData))
        } else {
            map1_paired(src, dst, UnaryK::<T, I, OP>(PhantomData))
        }
    }));
    Ok(())
}

/// `buf = op(buf)`.
pub fn unary_inplace<T: VFloat>(level: Level, op: FloatUnary, buf: &mut [T]) {
    // The op outermost, as in `unary`.
    each_unary!(op, OP => dispatch!(level, I => {
        if const { is_trig(OP) } {
            map1_fixup_inplace(buf, UnaryK::<T, I, OP>(PhantomData), T::trig_needs_slow, trig_slow_fn::<T, OP>)
        } else if const { is_cheap(OP) } {
            map1_inplace(buf, UnaryK::<T, I, OP>(PhantomData))
        } else {
            map1_paired_inplace(buf, UnaryK::<T, I, OP>(PhantomData))
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
    each_binary!(op, OP => dispatch!(level, I => map2(a, b, dst, BinaryK::<T, I, OP>(PhantomData))));
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
        dispatch!(level, I => map2(Operand::Slice(sa), Operand::Slice(sb), out, BinaryK::<T, I, { FloatBinary::Rem as u8 }>(PhantomData)));
        for i in 0..len {
            if T::rem_needs_slow(sa[i], sb[i]) {
                out[i] = T::rem_slow(sa[i], sb[i]);
            }
        }
        start = end;
    }
    Ok(())
}

/// `a * b + c` with one rounding, arranged as `how` says (XLA CPU's contraction
/// of a single-use multiply into the add or subtract consuming it; see
/// `platform_api::semantics::contraction`).
pub fn fused_multiply_add<T: VFloat>(
    level: Level,
    how: Contraction,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    c: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths("fused multiply-add", &[&a, &b, &c], dst.len())?;
    // The baseline level has no FMA instruction: `mul_add` is then the C
    // library's exact (and slow) fma.
    match how {
        Contraction::Add => dispatch!(level, I => map3(a, b, c, dst, fma_add::<T>)),
        Contraction::SubtractFromProduct => {
            dispatch!(level, I => map3(a, b, c, dst, fma_sub_from_product::<T>))
        }
        Contraction::SubtractProduct => {
            dispatch!(level, I => map3(a, b, c, dst, fma_sub_product::<T>))
        }
    }
    Ok(())
}

#[inline(always)]
fn fma_add<T: VFloat>(a: T, b: T, c: T) -> T {
    T::mul_add(a, b, c)
}
#[inline(always)]
fn fma_sub_from_product<T: VFloat>(a: T, b: T, c: T) -> T {
    T::mul_add(a, b, sem::negate(c))
}
#[inline(always)]
fn fma_sub_product<T: VFloat>(a: T, b: T, c: T) -> T {
    T::mul_add(sem::negate(a), b, c)
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
        ($f:ident) => {
            dispatch!(level, I => map2_to(a, b, dst, $f::<T>))
        };
    }
    match (total_order, dir) {
        (false, Compare::Eq) => cmp!(eq_ieee),
        (false, Compare::Ne) => cmp!(ne_ieee),
        (false, Compare::Lt) => cmp!(lt_ieee),
        (false, Compare::Le) => cmp!(le_ieee),
        (false, Compare::Gt) => cmp!(gt_ieee),
        (false, Compare::Ge) => cmp!(ge_ieee),
        (true, Compare::Eq) => cmp!(eq_total),
        (true, Compare::Ne) => cmp!(ne_total),
        (true, Compare::Lt) => cmp!(lt_total),
        (true, Compare::Le) => cmp!(le_total),
        (true, Compare::Gt) => cmp!(gt_total),
        (true, Compare::Ge) => cmp!(ge_total),
    }
    Ok(())
}

/// `dst[i] = is_finite(src[i])` as 0/1 bytes.
pub fn is_finite<T: VFloat>(level: Level, src: &[T], dst: &mut [u8]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(kernels::length_error("is-finite", src.len(), dst.len()));
    }
    dispatch!(level, I => map1(src, dst, is_finite_fn::<T>));
    Ok(())
}
