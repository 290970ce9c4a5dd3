//! Integer slice kernels (`i8`..`i64`, `u8`..`u64`).
//!
//! The element functions are `platform_api::semantics::int`'s, so every rule
//! XLA pins down (wrapping arithmetic, `x / 0 = -1`, `MIN / -1 = MIN`, shifts
//! past the width, the arithmetic shift reading unsigned operands as signed,
//! integer `power`) is the shared one, bit for bit. Here they are only compiled
//! per level inside monomorphised loops; everything but division, remainder and
//! power vectorises (x86 has no vector integer division).
//!
//! `pred` is `u8` holding 0/1: `and`/`or`/`xor` and `compare` work on it as on
//! `u8`; `not` of a pred is `xor` with `Operand::Scalar(1)`.

use super::isa::dispatch;
use super::kernels::{self, map1, map1_inplace, map2, map2_to, map3};
use super::{level, Level, Operand};
use platform_api::hlo::ComparisonDirection as Compare;
use platform_api::semantics::int::{self as sem, IntSemantics};
use platform_api::{Error, Result};

/// An integer element type the kernels support.
///
/// [`VInt::divide_fast`] and [`VInt::remainder_fast`] of types of at most 32
/// bits go through a float type (`f64` for 32-bit types, `f32` for narrower
/// ones), so that they vectorise: `x86` has no vector integer division. For
/// `|a| < 2^p` (`p` the float's significand bits, 53 or 24) the quotient
/// rounded to the float truncates to the exact integer quotient: a
/// non-integral `a / b` lies at least `1/|b|` from the next integer and the
/// rounding error is at most `|a / b|·2^-p < 1/|b|`. The special cases
/// (`b = 0`, `MIN / -1`) are the semantics' own. 64-bit types keep the
/// semantics' division.
pub trait VInt: IntSemantics + Send + Sync {
    /// A nonzero divisor fixed for a whole slice, prepared once (see
    /// [`VInt::divisor`]).
    type Divisor: Copy + Send + Sync;
    /// `d` prepared for [`VInt::divide_by`]; `None` for 0, whose quotients
    /// are the semantics' special case.
    fn divisor(d: Self) -> Option<Self::Divisor>;
    /// `divide(a, d)`, bit for bit the semantics', by a multiply-high and
    /// shifts instead of a division.
    fn divide_by(a: Self, d: Self::Divisor) -> Self;
    /// `remainder(a, d)` through [`VInt::divide_by`].
    fn remainder_by(a: Self, d: Self::Divisor) -> Self;
    /// `divide`, bit for bit the semantics'.
    #[inline(always)]
    fn divide_fast(a: Self, b: Self) -> Self {
        sem::divide(a, b)
    }
    /// `remainder`, bit for bit the semantics'.
    #[inline(always)]
    fn remainder_fast(a: Self, b: Self) -> Self {
        sem::remainder(a, b)
    }
}

/// An unsigned divisor `d >= 1` of `N`-bit values as the multiplier and
/// shifts of Granlund and Montgomery's division by invariant integers
/// ("Division by Invariant Integers using Multiplication", 1994, figure
/// 4.1): `q = mulhi(x, m)`, `x / d = (q + ((x - q) >> s1)) >> s2`, exact for
/// every `N`-bit `x`. With `l = ceil(log2 d)`: `m = 2^N (2^l - d) / d + 1`
/// (below `2^N`), `s1 = 1`, `s2 = l - 1`; a power of two takes `m = 0`
/// (then the formula is `x >> l`) and 1 takes `s1 = s2 = 0` (`x` itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsignedDivisor<U> {
    d: U,
    m: U,
    s1: u32,
    s2: u32,
    /// `log2 d` when `d` is a power of two: one shift, no multiply.
    shift: Option<u32>,
}

/// A signed divisor: the unsigned divisor of its magnitude (the quotient of
/// the magnitudes, negated when the signs differ, truncates toward zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedDivisor<T, U> {
    d: T,
    magnitude: UnsignedDivisor<U>,
}

macro_rules! unsigned_divisor {
    ($($u:ty => $w:ty),*) => {$(
        impl UnsignedDivisor<$u> {
            /// `d` prepared; `d` is not 0.
            fn new(d: $u) -> Self {
                debug_assert!(d != 0);
                let n = <$u>::BITS;
                if d.is_power_of_two() {
                    let l = d.trailing_zeros();
                    return UnsignedDivisor {
                        d,
                        m: 0,
                        s1: u32::from(l > 0),
                        s2: l.saturating_sub(1),
                        shift: Some(l),
                    };
                }
                // `d` is not a power of two: `l = floor(log2 d) + 1`, and
                // `2^l - d < d` keeps `m` below `2^N`.
                let l = n - d.leading_zeros();
                let m = ((((1 as $w) << n) * (((1 as $w) << l) - d as $w)) / d as $w + 1) as $u;
                UnsignedDivisor {
                    d,
                    m,
                    s1: 1,
                    s2: l - 1,
                    shift: None,
                }
            }

            /// `x / d`, `$w` holding the product of the multiply-high.
            #[inline(always)]
            fn divide(self, x: $u) -> $u {
                match self.shift {
                    Some(l) => x >> l,
                    None => {
                        let q = ((x as $w * self.m as $w) >> <$u>::BITS) as $u;
                        (q + ((x - q) >> self.s1)) >> self.s2
                    }
                }
            }
        }
    )*};
}
unsigned_divisor!(u8 => u16, u16 => u32, u32 => u64, u64 => u128);

/// Implements [`VInt`]'s division by a prepared divisor for `$t` (`$u` its
/// unsigned type).
macro_rules! vint_divisor {
    (u8) => { vint_divisor!(@unsigned u8); };
    (u16) => { vint_divisor!(@unsigned u16); };
    (u32) => { vint_divisor!(@unsigned u32); };
    (u64) => { vint_divisor!(@unsigned u64); };
    (i8) => { vint_divisor!(@signed i8, u8); };
    (i16) => { vint_divisor!(@signed i16, u16); };
    (i32) => { vint_divisor!(@signed i32, u32); };
    (i64) => { vint_divisor!(@signed i64, u64); };
    (@unsigned $u:ty) => {
        type Divisor = UnsignedDivisor<$u>;
        fn divisor(d: $u) -> Option<Self::Divisor> {
            (d != 0).then(|| UnsignedDivisor::<$u>::new(d))
        }
        #[inline(always)]
        fn divide_by(x: $u, d: Self::Divisor) -> $u {
            d.divide(x)
        }
        #[inline(always)]
        fn remainder_by(x: $u, d: Self::Divisor) -> $u {
            x.wrapping_sub(d.divide(x).wrapping_mul(d.d))
        }
    };
    (@signed $t:ty, $u:ty) => {
        type Divisor = SignedDivisor<$t, $u>;
        fn divisor(d: $t) -> Option<Self::Divisor> {
            (d != 0).then(|| SignedDivisor {
                d,
                magnitude: UnsignedDivisor::<$u>::new(d.unsigned_abs()),
            })
        }
        #[inline(always)]
        fn divide_by(x: $t, d: Self::Divisor) -> $t {
            let q = d.magnitude.divide(x.unsigned_abs()) as $t;
            // All ones when the signs differ: negate (`MIN / -1` keeps the
            // magnitude 2^(N-1), which reads back as `MIN`, the semantics'
            // result).
            let s = (x ^ d.d) >> (<$t>::BITS - 1);
            (q ^ s).wrapping_sub(s)
        }
        #[inline(always)]
        fn remainder_by(x: $t, d: Self::Divisor) -> $t {
            // `MIN % -1`: `MIN - MIN·(-1)` wraps to 0, the semantics' result.
            x.wrapping_sub(Self::divide_by(x, d).wrapping_mul(d.d))
        }
    };
}

macro_rules! vint_via_float {
    ($($t:ident => $f:ty),*) => {$(
        impl VInt for $t {
            vint_divisor!($t);
            #[inline(always)]
            fn divide_fast(a: $t, b: $t) -> $t {
                // A float-to-integer cast saturates: `MIN / -1` would give MAX.
                let q = (a as $f / b as $f) as $t;
                if b == 0 {
                    <$t as IntSemantics>::ALL_ONES
                } else if a == <$t>::MIN && b == (0 as $t).wrapping_sub(1) {
                    // `MIN / -1` of a signed type; for an unsigned one, 0 / MAX.
                    <$t>::MIN
                } else {
                    q
                }
            }
            #[inline(always)]
            fn remainder_fast(a: $t, b: $t) -> $t {
                // `MIN % -1` is 0 through the quotient `MIN` the division
                // gives it (the product wraps back to `MIN`).
                let q = Self::divide_fast(a, b);
                if b == 0 {
                    a
                } else {
                    a.wrapping_sub(q.wrapping_mul(b))
                }
            }
        }
    )*};
}
// 8- and 16-bit operands are below 2^24: f32 is exact for them, and has
// twice the lanes.
vint_via_float!(i8 => f32, i16 => f32, u8 => f32, u16 => f32, i32 => f64, u32 => f64);
impl VInt for i64 {
    vint_divisor!(i64);
}
impl VInt for u64 {
    vint_divisor!(u64);
}

/// Integer binary ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntBinary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Max,
    Min,
    And,
    Or,
    Xor,
    ShiftLeft,
    ShiftRightLogical,
    ShiftRightArithmetic,
    Pow,
}

impl IntBinary {
    pub const ALL: [IntBinary; 14] = [
        IntBinary::Add,
        IntBinary::Sub,
        IntBinary::Mul,
        IntBinary::Div,
        IntBinary::Rem,
        IntBinary::Max,
        IntBinary::Min,
        IntBinary::And,
        IntBinary::Or,
        IntBinary::Xor,
        IntBinary::ShiftLeft,
        IntBinary::ShiftRightLogical,
        IntBinary::ShiftRightArithmetic,
        IntBinary::Pow,
    ];

    pub fn hlo(self) -> platform_api::hlo::BinaryOp {
        use platform_api::hlo::BinaryOp as B;
        match self {
            IntBinary::Add => B::Add,
            IntBinary::Sub => B::Subtract,
            IntBinary::Mul => B::Multiply,
            IntBinary::Div => B::Divide,
            IntBinary::Rem => B::Remainder,
            IntBinary::Max => B::Maximum,
            IntBinary::Min => B::Minimum,
            IntBinary::And => B::And,
            IntBinary::Or => B::Or,
            IntBinary::Xor => B::Xor,
            IntBinary::ShiftLeft => B::ShiftLeft,
            IntBinary::ShiftRightLogical => B::ShiftRightLogical,
            IntBinary::ShiftRightArithmetic => B::ShiftRightArithmetic,
            IntBinary::Pow => B::Power,
        }
    }

    pub fn from_hlo(op: platform_api::hlo::BinaryOp) -> Option<IntBinary> {
        IntBinary::ALL.into_iter().find(|b| b.hlo() == op)
    }
}

/// Integer unary ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntUnary {
    Neg,
    Abs,
    Not,
    PopCount,
    Clz,
    /// Signed types only (XLA does not define `sign` on unsigned integers).
    Sign,
}

impl IntUnary {
    pub const ALL: [IntUnary; 6] = [
        IntUnary::Neg,
        IntUnary::Abs,
        IntUnary::Not,
        IntUnary::PopCount,
        IntUnary::Clz,
        IntUnary::Sign,
    ];

    pub fn hlo(self) -> platform_api::hlo::UnaryOp {
        use platform_api::hlo::UnaryOp as U;
        match self {
            IntUnary::Neg => U::Negate,
            IntUnary::Abs => U::Abs,
            IntUnary::Not => U::Not,
            IntUnary::PopCount => U::PopCount,
            IntUnary::Clz => U::Clz,
            IntUnary::Sign => U::Sign,
        }
    }

    pub fn from_hlo(op: platform_api::hlo::UnaryOp) -> Option<IntUnary> {
        IntUnary::ALL.into_iter().find(|u| u.hlo() == op)
    }
}

fn unsigned_sign<T: VInt>() -> Error {
    Error::unimplemented(format!(
        "vmath sign is not defined for unsigned {} (XLA defines it for signed integers only)",
        T::TYPE
    ))
}

/// `dst = op(a, b)` at the current level.
#[inline]
pub fn binary<T: VInt>(
    op: IntBinary,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    binary_at(level(), op, a, b, dst)
}

/// `dst = op(a, b)` at `level`.
pub fn binary_at<T: VInt>(
    level: Level,
    op: IntBinary,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths("integer binary op", &[&a, &b], dst.len())?;
    macro_rules! go {
        ($f:expr) => {
            dispatch!(level, I => map2(a, b, dst, $f))
        };
    }
    // A divisor broadcast over the slice (`x // 2`, a constant splat or a
    // uniform value): prepared once, then a multiply-high and shifts per
    // element, as XLA's LLVM emits for a constant divisor, instead of a
    // float division.
    if let (IntBinary::Div | IntBinary::Rem, Operand::Scalar(d)) = (op, &b) {
        if let Some(d) = T::divisor(*d) {
            match op {
                IntBinary::Div => go!(move |x: T, _: T| T::divide_by(x, d)),
                _ => go!(move |x: T, _: T| T::remainder_by(x, d)),
            }
            return Ok(());
        }
    }
    match op {
        IntBinary::Add => go!(sem::add::<T>),
        IntBinary::Sub => go!(sem::subtract::<T>),
        IntBinary::Mul => go!(sem::multiply::<T>),
        IntBinary::Div => go!(T::divide_fast),
        IntBinary::Rem => go!(T::remainder_fast),
        IntBinary::Max => go!(sem::maximum::<T>),
        IntBinary::Min => go!(sem::minimum::<T>),
        IntBinary::And => go!(sem::and::<T>),
        IntBinary::Or => go!(sem::or::<T>),
        IntBinary::Xor => go!(sem::xor::<T>),
        IntBinary::ShiftLeft => go!(sem::shift_left::<T>),
        IntBinary::ShiftRightLogical => go!(sem::shift_right_logical::<T>),
        IntBinary::ShiftRightArithmetic => go!(sem::shift_right_arithmetic::<T>),
        IntBinary::Pow => go!(sem::power::<T>),
    }
    Ok(())
}

/// `dst = op(src)` at the current level.
#[inline]
pub fn unary<T: VInt>(op: IntUnary, src: &[T], dst: &mut [T]) -> Result<()> {
    unary_at(level(), op, src, dst)
}

/// `dst = op(src)` at `level`.
pub fn unary_at<T: VInt>(level: Level, op: IntUnary, src: &[T], dst: &mut [T]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(kernels::length_error(
            "integer unary op",
            src.len(),
            dst.len(),
        ));
    }
    macro_rules! go {
        ($f:expr) => {
            dispatch!(level, I => map1(src, dst, $f))
        };
    }
    match op {
        IntUnary::Neg => go!(sem::negate::<T>),
        IntUnary::Abs => go!(sem::abs::<T>),
        IntUnary::Not => go!(sem::not::<T>),
        IntUnary::PopCount => go!(sem::popcnt::<T>),
        IntUnary::Clz => go!(sem::count_leading_zeros::<T>),
        IntUnary::Sign if T::SIGNED => go!(sem::sign::<T>),
        IntUnary::Sign => return Err(unsigned_sign::<T>()),
    }
    Ok(())
}

/// `buf = op(buf)` at `level`.
pub fn unary_inplace_at<T: VInt>(level: Level, op: IntUnary, buf: &mut [T]) -> Result<()> {
    macro_rules! go {
        ($f:expr) => {
            dispatch!(level, I => map1_inplace(buf, $f))
        };
    }
    match op {
        IntUnary::Neg => go!(sem::negate::<T>),
        IntUnary::Abs => go!(sem::abs::<T>),
        IntUnary::Not => go!(sem::not::<T>),
        IntUnary::PopCount => go!(sem::popcnt::<T>),
        IntUnary::Clz => go!(sem::count_leading_zeros::<T>),
        IntUnary::Sign if T::SIGNED => go!(sem::sign::<T>),
        IntUnary::Sign => return Err(unsigned_sign::<T>()),
    }
    Ok(())
}

/// `buf = op(buf)` at the current level.
#[inline]
pub fn unary_inplace<T: VInt>(op: IntUnary, buf: &mut [T]) -> Result<()> {
    unary_inplace_at(level(), op, buf)
}

/// `dst = (a <dir> b)` as 0/1 bytes (signed or unsigned order by type).
#[inline]
pub fn compare<T: VInt>(
    dir: Compare,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [u8],
) -> Result<()> {
    compare_at(level(), dir, a, b, dst)
}

/// [`compare`] at `level`.
pub fn compare_at<T: VInt>(
    level: Level,
    dir: Compare,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [u8],
) -> Result<()> {
    kernels::no_dst("compare", &[&a, &b])?;
    kernels::check_lengths("compare", &[&a, &b], dst.len())?;
    macro_rules! go {
        ($f:expr) => {
            dispatch!(level, I => map2_to(a, b, dst, $f))
        };
    }
    match dir {
        Compare::Eq => go!(|x: T, y: T| (x == y) as u8),
        Compare::Ne => go!(|x: T, y: T| (x != y) as u8),
        Compare::Lt => go!(|x: T, y: T| (x < y) as u8),
        Compare::Le => go!(|x: T, y: T| (x <= y) as u8),
        Compare::Gt => go!(|x: T, y: T| (x > y) as u8),
        Compare::Ge => go!(|x: T, y: T| (x >= y) as u8),
    }
    Ok(())
}

/// `dst = clamp(lo, x, hi)` = `min(hi, max(lo, x))`.
#[inline]
pub fn clamp<T: VInt>(
    lo: Operand<'_, T>,
    x: Operand<'_, T>,
    hi: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    clamp_at(level(), lo, x, hi, dst)
}

/// [`clamp`] at `level`.
pub fn clamp_at<T: VInt>(
    level: Level,
    lo: Operand<'_, T>,
    x: Operand<'_, T>,
    hi: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths("clamp", &[&lo, &x, &hi], dst.len())?;
    dispatch!(level, I => map3(lo, x, hi, dst, |l, v, h| sem::minimum(h, sem::maximum(l, v))));
    Ok(())
}

/// `dst = or(shift-left(x, left), shift-right-logical(x, right))`, each shift
/// by the shared rules (an amount past the width gives 0). With `left + right`
/// equal to the width this is a rotate, the core of threefry's rounds; one
/// pass instead of three.
#[inline]
pub fn shift_pair_or<T: VInt>(
    x: Operand<'_, T>,
    left: Operand<'_, T>,
    right: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    shift_pair_or_at(level(), x, left, right, dst)
}

/// [`shift_pair_or`] at `level`.
pub fn shift_pair_or_at<T: VInt>(
    level: Level,
    x: Operand<'_, T>,
    left: Operand<'_, T>,
    right: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    kernels::check_lengths("shift pair", &[&x, &left, &right], dst.len())?;
    dispatch!(level, I => map3(x, left, right, dst, |v, l, r| {
        sem::or(sem::shift_left(v, l), sem::shift_right_logical(v, r))
    }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `divide` and `remainder` through a float type against the semantics: every
    /// pair of 8-bit values, and 16- and 32-bit values at the edges (0, ±1,
    /// MIN, MAX and their neighbours) and spread over the range.
    #[test]
    fn division_through_f64_matches_the_semantics() {
        fn check<T: VInt + std::fmt::Debug>(values: &[T]) {
            for &a in values {
                for &b in values {
                    assert_eq!(T::divide_fast(a, b), sem::divide(a, b), "{a:?} / {b:?}");
                    assert_eq!(
                        T::remainder_fast(a, b),
                        sem::remainder(a, b),
                        "{a:?} % {b:?}"
                    );
                }
            }
        }
        check(&(i8::MIN..=i8::MAX).collect::<Vec<_>>());
        check(&(u8::MIN..=u8::MAX).collect::<Vec<_>>());
        macro_rules! spread {
            ($t:ty, $wide:ty) => {{
                let mut v: Vec<$t> = vec![0, 1, 2, 3, 7, <$t>::MAX, <$t>::MAX - 1, <$t>::MIN];
                v.push(<$t>::MIN.wrapping_add(1));
                v.push((0 as $t).wrapping_sub(1));
                v.push((0 as $t).wrapping_sub(2));
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
                for _ in 0..300 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    v.push(x as $wide as $t);
                    v.push((x >> 40) as $wide as $t);
                }
                check(&v);
            }};
        }
        spread!(i16, u16);
        spread!(u16, u16);
        spread!(i32, u32);
        spread!(u32, u32);
    }

    /// Division and remainder by a prepared divisor against the semantics:
    /// every pair of 8-bit values, every 16-bit dividend by divisors at the
    /// edges and spread over the range, 32- and 64-bit values at the edges
    /// and spread; and the slice kernel with a broadcast divisor, which
    /// takes that path, at every level.
    #[test]
    fn division_by_a_prepared_divisor_matches_the_semantics() {
        fn check<T: VInt + std::fmt::Debug>(dividends: &[T], divisors: &[T]) {
            for &b in divisors {
                let Some(d) = T::divisor(b) else {
                    assert_eq!(b, T::ZERO);
                    continue;
                };
                for &a in dividends {
                    assert_eq!(T::divide_by(a, d), sem::divide(a, b), "{a:?} / {b:?}");
                    assert_eq!(T::remainder_by(a, d), sem::remainder(a, b), "{a:?} % {b:?}");
                }
            }
        }
        macro_rules! spread {
            ($t:ty, $wide:ty, $n:expr) => {{
                let mut v: Vec<$t> = vec![0, 1, 2, 3, 5, 6, 7, 10, 255, <$t>::MAX, <$t>::MAX - 1];
                v.push(<$t>::MIN);
                v.push(<$t>::MIN.wrapping_add(1));
                v.push(<$t>::MAX / 2);
                v.push(<$t>::MAX / 2 + 1);
                v.push(<$t>::MAX / 3);
                v.push(<$t>::MAX / 7 + 1);
                for k in 0..<$t>::BITS {
                    let p = (1 as $t).wrapping_shl(k);
                    v.extend([
                        p,
                        p.wrapping_sub(1),
                        p.wrapping_add(1),
                        (0 as $t).wrapping_sub(p),
                    ]);
                }
                for x in v.clone() {
                    v.push((0 as $t).wrapping_sub(x));
                }
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
                for _ in 0..$n {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    v.push(x as $wide as $t);
                    v.push((x >> 40) as $wide as $t);
                    v.push((x >> 57) as $wide as $t);
                }
                v
            }};
        }
        let all_i8: Vec<i8> = (i8::MIN..=i8::MAX).collect();
        let all_u8: Vec<u8> = (u8::MIN..=u8::MAX).collect();
        check(&all_i8, &all_i8);
        check(&all_u8, &all_u8);
        let all_i16: Vec<i16> = (i16::MIN..=i16::MAX).collect();
        let all_u16: Vec<u16> = (u16::MIN..=u16::MAX).collect();
        check(&all_i16, &spread!(i16, u16, 40));
        check(&all_u16, &spread!(u16, u16, 40));
        let (s32, u32_) = (spread!(i32, u32, 300), spread!(u32, u32, 300));
        check(&s32, &s32);
        check(&u32_, &u32_);
        let (s64, u64_) = (spread!(i64, u64, 300), spread!(u64, u64, 300));
        check(&s64, &s64);
        check(&u64_, &u64_);

        // The slice kernel, at every level, in place and not.
        let levels = [Level::Baseline, Level::Avx2, Level::Avx512];
        for &b in &all_i8 {
            for level in levels {
                for op in [IntBinary::Div, IntBinary::Rem] {
                    let mut got = vec![0i8; all_i8.len()];
                    binary_at(
                        level,
                        op,
                        Operand::Slice(&all_i8),
                        Operand::Scalar(b),
                        &mut got,
                    )
                    .unwrap();
                    let mut inplace = all_i8.clone();
                    binary_at(level, op, Operand::Dst, Operand::Scalar(b), &mut inplace).unwrap();
                    for (i, &a) in all_i8.iter().enumerate() {
                        let want = match op {
                            IntBinary::Div => sem::divide(a, b),
                            _ => sem::remainder(a, b),
                        };
                        assert_eq!(
                            (got[i], inplace[i]),
                            (want, want),
                            "{op:?} {a} {b} {level:?}"
                        );
                    }
                }
            }
        }
        for &b in &[1u32, 2, 3, 7, 10, 641, 1 << 31, u32::MAX, 0] {
            for level in levels {
                let mut got = vec![0u32; u32_.len()];
                binary_at(
                    level,
                    IntBinary::Div,
                    Operand::Slice(&u32_),
                    Operand::Scalar(b),
                    &mut got,
                )
                .unwrap();
                for (i, &a) in u32_.iter().enumerate() {
                    assert_eq!(got[i], sem::divide(a, b), "{a} / {b} {level:?}");
                }
            }
        }
    }
}
