//! Floating-point semantics: what XLA computes for `f16`, `bf16`, `f32`, `f64`.
//!
//! Every op is evaluated in the type's [`FloatSemantics::Wide`] type (`f32` for the
//! 16-bit types, the type itself otherwise) and rounded back once to nearest-even,
//! which is what XLA CPU does for `f16`/`bf16` (and, because `f32` carries more than
//! twice their precision, it equals computing `+ - * / sqrt` directly in the narrow
//! type). Ops that only move bits (`negate`, `abs`, `sign` of NaN, `maximum`'s
//! choice of operand, `reduce-precision`) work on the native bits so NaN payloads
//! survive exactly as in XLA.
//!
//! XLA's rules that differ from a naive `std` call:
//! * `maximum`/`minimum` propagate NaN and order `-0 < +0` (IEEE-754 2019
//!   `maximum`/`minimum`, not C's `fmax`);
//! * `remainder` is C's `fmod` (sign of the dividend);
//! * `round-nearest-afz` rounds half away from zero, `round-nearest-even` half to
//!   even;
//! * `sign(±0) = ±0`, `sign(NaN) = NaN` (the operand itself);
//! * `logistic(x) = 1 / (1 + exp(-x))`, exactly the expansion XLA uses;
//! * `f16` `exponential-minus-one` and `logistic` round every intermediate step to
//!   `f16`, as XLA CPU does (all other `f16`/`bf16` ops round once);
//! * `rsqrt(x) = 1 / sqrt(x)`;
//! * comparisons are IEEE (`NE` is true when either side is NaN) unless the
//!   comparison type is `TOTALORDER`: `-NaN < -inf < … < -0 < +0 < … < inf < +NaN`,
//!   NaNs ordered by payload (see [`total_order_key`]).
//!
//! One deliberate difference: XLA CPU runs with denormals flushed to zero (FTZ and
//! DAZ) for `f32` and `f64` arithmetic. These semantics are IEEE with gradual
//! underflow, like XLA's reference interpreter (`HloEvaluator`); results differ
//! from XLA CPU only in magnitudes below `f32::MIN_POSITIVE` / `f64::MIN_POSITIVE`.

use super::convert::{bf16_from_f32, f16_from_f32};
use super::real::Real;
use half::{bf16, f16};
use hlo_ir::native::NativeType;
use hlo_ir::shape::ElementType;

/// A floating-point element type, with the wide type it is computed in and its
/// bit layout.
pub trait FloatSemantics: NativeType + Copy + PartialOrd {
    /// The type arithmetic is done in.
    type Wide: Real;
    /// Total bits (16, 32 or 64).
    const BITS: u32;
    /// Exponent bits (5, 8, 8, 11).
    const EXPONENT_BITS: u32;
    /// Explicit mantissa bits (10, 7, 23, 52).
    const MANTISSA_BITS: u32;

    /// Exact widening.
    fn widen(self) -> Self::Wide;
    /// Rounds to nearest-even (exact for `f32`/`f64`, where `Wide = Self`).
    fn narrow(wide: Self::Wide) -> Self;
    /// The bits, zero-extended.
    fn to_bits_u64(self) -> u64;
    /// From bits (the low `BITS` bits are used).
    fn from_bits_u64(bits: u64) -> Self;
}

impl FloatSemantics for f16 {
    type Wide = f32;
    const BITS: u32 = 16;
    const EXPONENT_BITS: u32 = 5;
    const MANTISSA_BITS: u32 = 10;
    #[inline]
    fn widen(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn narrow(wide: f32) -> Self {
        f16_from_f32(wide)
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline]
    fn from_bits_u64(bits: u64) -> Self {
        f16::from_bits(bits as u16)
    }
}

impl FloatSemantics for bf16 {
    type Wide = f32;
    const BITS: u32 = 16;
    const EXPONENT_BITS: u32 = 8;
    const MANTISSA_BITS: u32 = 7;
    #[inline]
    fn widen(self) -> f32 {
        f32::from_bits((self.to_bits() as u32) << 16)
    }
    #[inline]
    fn narrow(wide: f32) -> Self {
        bf16_from_f32(wide)
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline]
    fn from_bits_u64(bits: u64) -> Self {
        bf16::from_bits(bits as u16)
    }
}

impl FloatSemantics for f32 {
    type Wide = f32;
    const BITS: u32 = 32;
    const EXPONENT_BITS: u32 = 8;
    const MANTISSA_BITS: u32 = 23;
    #[inline]
    fn widen(self) -> f32 {
        self
    }
    #[inline]
    fn narrow(wide: f32) -> Self {
        wide
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline]
    fn from_bits_u64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl FloatSemantics for f64 {
    type Wide = f64;
    const BITS: u32 = 64;
    const EXPONENT_BITS: u32 = 11;
    const MANTISSA_BITS: u32 = 52;
    #[inline]
    fn widen(self) -> f64 {
        self
    }
    #[inline]
    fn narrow(wide: f64) -> Self {
        wide
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn from_bits_u64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

#[inline]
fn sign_mask<T: FloatSemantics>() -> u64 {
    1u64 << (T::BITS - 1)
}

#[inline]
fn lift1<T: FloatSemantics>(x: T, f: impl Fn(T::Wide) -> T::Wide) -> T {
    T::narrow(f(x.widen()))
}

#[inline]
fn lift2<T: FloatSemantics>(a: T, b: T, f: impl Fn(T::Wide, T::Wide) -> T::Wide) -> T {
    T::narrow(f(a.widen(), b.widen()))
}

/// Whether the value is NaN.
#[inline]
pub fn is_nan<T: FloatSemantics>(x: T) -> bool {
    x.widen().is_nan()
}

#[inline]
pub fn add<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x + y)
}

#[inline]
pub fn subtract<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x - y)
}

#[inline]
pub fn multiply<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x * y)
}

#[inline]
pub fn divide<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x / y)
}

/// `remainder`: C `fmod`, the sign of the dividend.
#[inline]
pub fn remainder<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x % y)
}

/// Whether IEEE `maximum(a, b)` is `a` (NaN propagates, `-0 < +0`; ties pick `a`).
#[inline]
fn maximum_is_first<W: Real>(a: W, b: W) -> bool {
    if a.is_nan() {
        true
    } else if b.is_nan() {
        false
    } else if a == b {
        // Only ±0 compare equal with different bits; +0 is the larger.
        !a.is_sign_negative() || b.is_sign_negative()
    } else {
        a > b
    }
}

/// Whether IEEE `minimum(a, b)` is `a`.
#[inline]
fn minimum_is_first<W: Real>(a: W, b: W) -> bool {
    if a.is_nan() {
        true
    } else if b.is_nan() {
        false
    } else if a == b {
        a.is_sign_negative() || !b.is_sign_negative()
    } else {
        a < b
    }
}

/// `maximum`: NaN if either operand is NaN, `maximum(-0, +0) = +0`.
#[inline]
pub fn maximum<T: FloatSemantics>(a: T, b: T) -> T {
    if maximum_is_first(a.widen(), b.widen()) {
        a
    } else {
        b
    }
}

/// `minimum`: NaN if either operand is NaN, `minimum(-0, +0) = -0`.
#[inline]
pub fn minimum<T: FloatSemantics>(a: T, b: T) -> T {
    if minimum_is_first(a.widen(), b.widen()) {
        a
    } else {
        b
    }
}

/// `clamp(lo, x, hi) = minimum(hi, maximum(lo, x))`, XLA's order of operations
/// (so NaN in any operand gives NaN, and `lo > hi` gives `hi`).
#[inline]
pub fn clamp<T: FloatSemantics>(lo: T, x: T, hi: T) -> T {
    minimum(hi, maximum(lo, x))
}

/// `power`: C `pow` (`pow(x, 0) = 1` even for NaN, `pow(1, y) = 1`,
/// `pow(-8, 1/3)` is NaN).
#[inline]
pub fn power<T: FloatSemantics>(a: T, b: T) -> T {
    lift2(a, b, |x, y| x.powf(y))
}

/// `atan2(y, x)` with C's quadrant and signed-zero rules.
#[inline]
pub fn atan2<T: FloatSemantics>(y: T, x: T) -> T {
    lift2(y, x, |a, b| a.atan2(b))
}

/// `negate`: flips the sign bit (NaN payloads kept).
#[inline]
pub fn negate<T: FloatSemantics>(x: T) -> T {
    T::from_bits_u64(x.to_bits_u64() ^ sign_mask::<T>())
}

/// `abs`: clears the sign bit.
#[inline]
pub fn abs<T: FloatSemantics>(x: T) -> T {
    T::from_bits_u64(x.to_bits_u64() & !sign_mask::<T>())
}

/// `sign`: ±1 for nonzero numbers, ±0 for ±0, the operand itself for NaN.
#[inline]
pub fn sign<T: FloatSemantics>(x: T) -> T {
    let w = x.widen();
    if w.is_nan() || w == T::Wide::ZERO {
        x
    } else {
        T::narrow(T::Wide::ONE.copysign(w))
    }
}

#[inline]
pub fn floor<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::floor)
}

#[inline]
pub fn ceil<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::ceil)
}

/// `round-nearest-afz`: halves away from zero (`-0.5 → -0`, `2.5 → 3`).
#[inline]
pub fn round_nearest_afz<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::round)
}

/// `round-nearest-even`: halves to even (`2.5 → 2`, `-0.5 → -0`).
#[inline]
pub fn round_nearest_even<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::round_ties_even)
}

/// `real` of a real value: the value.
#[inline]
pub fn real<T: FloatSemantics>(x: T) -> T {
    x
}

/// `imag` of a real value: `+0`.
#[inline]
pub fn imag<T: FloatSemantics>(_x: T) -> T {
    T::from_bits_u64(0)
}

/// `is-finite`: false for ±inf and NaN.
#[inline]
pub fn is_finite<T: FloatSemantics>(x: T) -> bool {
    x.widen().is_finite()
}

#[inline]
pub fn exp<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::exp)
}

/// `exponential-minus-one`. For `f16`, XLA CPU evaluates its emitter's formula
/// with every intermediate rounded to `f16` (`x` if `x/2` underflows to 0,
/// `exp(x) - 1` if `|x| > 0.5`, else `tanh(x/2) * (exp(x) + 1)`); that is reproduced
/// here bit for bit. Other types round `expm1` once.
#[inline]
pub fn exponential_minus_one<T: FloatSemantics>(x: T) -> T {
    if T::TYPE != ElementType::F16 {
        return lift1(x, Real::exp_m1);
    }
    let constant = |v: f64| T::narrow(<T::Wide as Real>::from_f64(v));
    let (one, half) = (constant(1.0), constant(0.5));
    let half_x = multiply(x, half);
    if eq(half_x, constant(0.0)) {
        return x;
    }
    let exp_x = exp(x);
    if gt(abs(x), half) {
        subtract(exp_x, one)
    } else {
        multiply(tanh(half_x), add(exp_x, one))
    }
}

#[inline]
pub fn log<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::ln)
}

#[inline]
pub fn log_plus_one<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::ln_1p)
}

/// `logistic(x) = 1 / (1 + exp(-x))` (0 once `exp(-x)` overflows), the expansion
/// XLA uses. XLA CPU evaluates it in `f32` for `bf16` (one rounding at the end) but
/// rounds every step to `f16` for `f16`; both are reproduced.
#[inline]
pub fn logistic<T: FloatSemantics>(x: T) -> T {
    if T::TYPE == ElementType::F16 {
        let one = T::narrow(<T::Wide as Real>::ONE);
        return divide(one, add(one, exp(negate(x))));
    }
    lift1(x, |w| T::Wide::ONE / (T::Wide::ONE + (-w).exp()))
}

#[inline]
pub fn sqrt<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::sqrt)
}

/// `rsqrt(x) = 1 / sqrt(x)` (`rsqrt(±0) = ±inf`, negative → NaN).
#[inline]
pub fn rsqrt<T: FloatSemantics>(x: T) -> T {
    lift1(x, |w| T::Wide::ONE / w.sqrt())
}

#[inline]
pub fn cbrt<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::cbrt)
}

#[inline]
pub fn sin<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::sin)
}

#[inline]
pub fn cos<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::cos)
}

#[inline]
pub fn tan<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::tan)
}

#[inline]
pub fn tanh<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::tanh)
}

#[inline]
pub fn erf<T: FloatSemantics>(x: T) -> T {
    lift1(x, Real::erf)
}

/// IEEE `a == b` (false with NaN; `-0 == +0`).
#[inline]
pub fn eq<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() == b.widen()
}

/// IEEE `a != b` (true with NaN).
#[inline]
pub fn ne<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() != b.widen()
}

#[inline]
pub fn lt<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() < b.widen()
}

#[inline]
pub fn le<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() <= b.widen()
}

#[inline]
pub fn gt<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() > b.widen()
}

#[inline]
pub fn ge<T: FloatSemantics>(a: T, b: T) -> bool {
    a.widen() >= b.widen()
}

/// A signed integer whose order is XLA's `TOTALORDER` on floats:
/// `-NaN < -inf < … < -0 < +0 < … < +inf < +NaN`, NaNs by payload. Equal keys
/// mean identical bits.
#[inline]
pub fn total_order_key<T: FloatSemantics>(x: T) -> i64 {
    let shift = 64 - T::BITS;
    // Sign-extend the bits to 64, then flip the magnitude of negatives so that
    // larger magnitudes sort lower.
    let signed = ((x.to_bits_u64() << shift) as i64) >> shift;
    if signed < 0 {
        signed ^ (u64::MAX >> (65 - T::BITS)) as i64
    } else {
        signed
    }
}

/// `reduce-precision` to `exponent_bits` (at least 1) and `mantissa_bits`, as XLA
/// does it on the value's bits:
/// * the mantissa is rounded to nearest-even at the new width (a carry may bump
///   the exponent);
/// * then, if the exponent range shrinks, anything above the new largest finite
///   exponent becomes ±inf and anything at or below the new smallest normal
///   exponent minus one becomes ±0 (the narrow format's denormals are flushed,
///   not rounded);
/// * NaN comes back unchanged.
///
/// Widths at or above the type's own leave that part untouched.
#[inline]
pub fn reduce_precision<T: FloatSemantics>(x: T, exponent_bits: u32, mantissa_bits: u32) -> T {
    let nbits = T::BITS;
    let src_mantissa = T::MANTISSA_BITS;
    let src_exponent = T::EXPONENT_BITS;
    let width_mask = if nbits == 64 {
        u64::MAX
    } else {
        (1u64 << nbits) - 1
    };
    let sign_bit = 1u64 << (nbits - 1);
    let exponent_mask = ((1u64 << src_exponent) - 1) << src_mantissa;
    let bits = x.to_bits_u64();
    if bits & !sign_bit > exponent_mask {
        return x; // NaN
    }
    let mut v = bits;
    if mantissa_bits < src_mantissa {
        let dropped = src_mantissa - mantissa_bits;
        let last_kept = 1u64 << dropped;
        // Round half to even: add 0111… plus the last kept bit, then truncate. A
        // carry out of the mantissa correctly increments the exponent.
        let bias = (last_kept >> 1) - 1 + ((v & last_kept) >> dropped);
        v = (v.wrapping_add(bias) & !(last_kept - 1)) & width_mask;
    }
    let exponent_bits = exponent_bits.max(1);
    if exponent_bits < src_exponent {
        let bias = (1u64 << (src_exponent - 1)) - 1;
        let reduced_bias = (1u64 << (exponent_bits - 1)) - 1;
        let max_exponent = (bias + reduced_bias) << src_mantissa;
        let min_exponent = (bias - reduced_bias) << src_mantissa;
        let exponent = v & exponent_mask;
        let signed_zero = v & sign_bit;
        if exponent > max_exponent {
            v = signed_zero | exponent_mask;
        } else if exponent <= min_exponent {
            v = signed_zero;
        }
    }
    T::from_bits_u64(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(x: f32) -> f16 {
        f16::from_f32(x)
    }

    #[test]
    fn min_max_clamp_propagate_nan_and_order_zeros() {
        assert!(maximum(-0.0f32, 0.0).is_sign_positive());
        assert!(maximum(0.0f32, -0.0).is_sign_positive());
        assert!(minimum(0.0f64, -0.0).is_sign_negative());
        assert!(maximum(f32::NAN, 1.0).is_nan());
        assert!(minimum(1.0, f64::NAN).is_nan());
        assert!(clamp(0.0f32, f32::NAN, 1.0).is_nan());
        assert!(clamp(f32::NAN, 5.0, 1.0).is_nan());
        assert_eq!(clamp(2.0f32, 1.0, 0.0), 0.0);
        assert!(clamp(0.0f32, 0.0, -0.0).is_sign_negative());
        assert_eq!(maximum(h(1.0), h(2.0)), h(2.0));
    }

    #[test]
    fn sign_keeps_zeros_and_nan() {
        assert!(sign(-0.0f32).is_sign_negative());
        assert_eq!(sign(-3.0f64), -1.0);
        assert_eq!(sign(f32::INFINITY), 1.0);
        let nan = f32::from_bits(0xffc1_2345);
        assert_eq!(sign(nan).to_bits(), nan.to_bits());
        assert_eq!(sign(h(-2.0)), h(-1.0));
        assert_eq!(sign(1e-40f32), 1.0);
    }

    #[test]
    fn rounding() {
        assert_eq!(round_nearest_afz(2.5f32), 3.0);
        assert_eq!(round_nearest_afz(-2.5f64), -3.0);
        assert!(round_nearest_afz(-0.4f32).is_sign_negative());
        assert_eq!(round_nearest_even(2.5f32), 2.0);
        assert_eq!(round_nearest_even(3.5f32), 4.0);
        assert!(round_nearest_even(-0.5f64).is_sign_negative());
        assert_eq!(round_nearest_even(bf16::from_f32(2.5)), bf16::from_f32(2.0));
    }

    #[test]
    fn remainder_is_fmod() {
        assert_eq!(remainder(-7.0f32, 3.0), -1.0);
        assert_eq!(remainder(7.0f32, -3.0), 1.0);
        assert!(remainder(1.0f32, 0.0).is_nan());
        assert!(remainder(f32::INFINITY, 1.0).is_nan());
        assert_eq!(remainder(5.0f64, f64::INFINITY), 5.0);
    }

    #[test]
    fn half_precision_rounds_once_from_f32() {
        // 65504 + 16 = 65520 in f32, which rounds to inf in f16 (it is the halfway
        // point to 65536 and 65504 is odd).
        assert!(add(h(65504.0), h(16.0)).to_f32().is_infinite());
        assert_eq!(add(h(65504.0), h(15.0)).to_f32(), 65504.0);
        // 1 + 2^-11 is a tie in f16: rounds to even (1.0).
        assert_eq!(add(h(1.0), h(2f32.powi(-11))).to_f32(), 1.0);
        assert_eq!(
            multiply(bf16::from_f32(1.5), bf16::from_f32(1.5)),
            bf16::from_f32(2.25)
        );
    }

    #[test]
    fn unary_edges() {
        assert!(rsqrt(-0.0f32).is_infinite() && rsqrt(-0.0f32).is_sign_negative());
        assert!(rsqrt(-1.0f64).is_nan());
        assert_eq!(logistic(f32::NEG_INFINITY), 0.0);
        assert_eq!(logistic(f32::INFINITY), 1.0);
        assert_eq!(
            logistic(-100.0f64).to_bits(),
            (1.0 / (1.0 + 100f64.exp())).to_bits()
        );
        assert!(!is_finite(f32::NAN) && !is_finite(f64::NEG_INFINITY) && is_finite(h(65504.0)));
        assert!(negate(0.0f32).is_sign_negative());
        assert_eq!(negate(f32::from_bits(0x7fc0_0001)).to_bits(), 0xffc0_0001);
        assert_eq!(abs(h(-2.0)), h(2.0));
        assert_eq!(power(f32::NAN, 0.0), 1.0);
        assert_eq!(power(1.0f64, f64::NAN), 1.0);
        assert!(power(-8.0f32, 1.0 / 3.0).is_nan());
        assert_eq!(atan2(0.0f32, -0.0), std::f32::consts::PI);
        assert!(atan2(-0.0f64, 1.0).is_sign_negative());
    }

    #[test]
    fn total_order() {
        let order = [
            f32::from_bits(0xffc0_0000), // -NaN (quiet, larger payload)
            f32::from_bits(0xff80_0001), // -NaN (signalling)
            f32::NEG_INFINITY,
            -1.0,
            -f32::from_bits(1),
            -0.0,
            0.0,
            f32::from_bits(1),
            1.0,
            f32::INFINITY,
            f32::from_bits(0x7f80_0001),
            f32::NAN,
        ];
        for w in order.windows(2) {
            assert!(total_order_key(w[0]) < total_order_key(w[1]), "{w:?}");
        }
        assert!(total_order_key(h(-0.0)) < total_order_key(h(0.0)));
        assert!(total_order_key(f64::NEG_INFINITY) < total_order_key(-f64::MAX));
    }

    #[test]
    fn reduce_precision_matches_xla_rules() {
        // To bf16's widths: ties to even, carry into the exponent.
        assert_eq!(reduce_precision(1.0f32 + 2f32.powi(-8), 8, 7), 1.0);
        assert_eq!(
            reduce_precision(1.0f32 + 3.0 * 2f32.powi(-8), 8, 7),
            1.015_625
        );
        // To f16's widths: overflow to inf, f16 denormals flushed to zero.
        assert!(reduce_precision(65520.0f32, 5, 10).is_infinite());
        assert_eq!(reduce_precision(65519.0f32, 5, 10), 65504.0);
        assert_eq!(reduce_precision(1e-5f32, 5, 10), 0.0);
        assert!(reduce_precision(-1e-5f32, 5, 10).is_sign_negative());
        // NaN comes back bit for bit.
        let nan = f32::from_bits(0x7f80_0001);
        assert_eq!(reduce_precision(nan, 5, 0).to_bits(), 0x7f80_0001);
        // Zero mantissa bits: 1.5 is a tie and goes to the even exponent (2).
        assert_eq!(reduce_precision(1.5f32, 8, 0), 2.0);
        assert_eq!(reduce_precision(1.25f32, 8, 0), 1.0);
        // One exponent bit leaves no finite nonzero value.
        assert_eq!(reduce_precision(1.0f32, 1, 1), 0.0);
        assert!(reduce_precision(1.75f32, 1, 1).is_infinite());
        // Wider than the type: unchanged.
        assert_eq!(reduce_precision(1.1f64, 12, 60), 1.1);
        // Works on a 16-bit type's own bits: an f16 denormal keeps its exponent.
        let tiny = f16::from_bits(0x00a7);
        assert_eq!(reduce_precision(tiny, 5, 2).to_bits(), 0x0100);
    }
}
