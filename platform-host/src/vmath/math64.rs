//! `f64` element functions, written to vectorise (same conventions as
//! [`super::math32`]).
//!
//! Vectorised here: rounding, `exp`, `expm1`, `logistic`, `log`, `log1p`,
//! `tanh`, `sin`, `cos`, `tan`. The rest of the `f64` math (`pow`, `atan2`,
//! `erf`, `cbrt`, `remainder`) runs the C library through
//! `platform_api::semantics` one element at a time: correct, not fast.

use super::isa::Isa;
use super::poly::*;

#[inline(always)]
pub(crate) fn fma<I: Isa>(a: f64, b: f64, c: f64) -> f64 {
    if I::FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

#[inline(always)]
pub(crate) fn poly<I: Isa, const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut p = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        p = fma::<I>(p, x, c[i]);
    }
    p
}

#[inline(always)]
fn copysign(magnitude: f64, sign: f64) -> f64 {
    f64::from_bits((magnitude.to_bits() & !(1 << 63)) | (sign.to_bits() & (1 << 63)))
}

/// `2^k` for `-1022 <= k <= 1023`.
#[inline(always)]
fn pow2i(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) as u64).wrapping_shl(52))
}

/// 1.5 * 2^52 (see `math32::ROUND_MAGIC`).
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

#[inline(always)]
fn round_small(x: f64) -> (f64, i64) {
    let shifted = x + ROUND_MAGIC;
    let k = (shifted.to_bits() as i64).wrapping_sub(ROUND_MAGIC.to_bits() as i64);
    (shifted - ROUND_MAGIC, k)
}

// ---------------------------------------------------------------------------
// Rounding.

const TWO52: f64 = 4_503_599_627_370_496.0;

#[inline(always)]
pub fn round_even<I: Isa>(x: f64) -> f64 {
    if I::ROUND {
        x.round_ties_even()
    } else {
        let a = x.abs();
        let r = (a + TWO52) - TWO52;
        if a < TWO52 {
            copysign(r, x)
        } else {
            x
        }
    }
}

#[inline(always)]
pub fn floor<I: Isa>(x: f64) -> f64 {
    if I::ROUND {
        x.floor()
    } else {
        let r = round_even::<I>(x);
        copysign(if r > x { r - 1.0 } else { r }, x)
    }
}

#[inline(always)]
pub fn ceil<I: Isa>(x: f64) -> f64 {
    if I::ROUND {
        x.ceil()
    } else {
        let r = round_even::<I>(x);
        copysign(if r < x { r + 1.0 } else { r }, x)
    }
}

#[inline(always)]
pub fn trunc<I: Isa>(x: f64) -> f64 {
    if I::ROUND {
        x.trunc()
    } else {
        let a = x.abs();
        let r = round_even::<I>(a);
        copysign(if r > a { r - 1.0 } else { r }, x)
    }
}

#[inline(always)]
pub fn round_away<I: Isa>(x: f64) -> f64 {
    let a = x.abs();
    let r = round_even::<I>(a);
    copysign(if r - a == -0.5 { r + 1.0 } else { r }, x)
}

// ---------------------------------------------------------------------------
// Exponentials.

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln 2 rounded to 32 bits, so `k * LN2_HI` is exact for `|k| < 2^21`.
const LN2_HI: f64 = 0.693_147_180_601_954_5;
const LN2_LO: f64 = -4.200_915_072_681_084_6e-11;

#[inline(always)]
pub fn exp<I: Isa>(x: f64) -> f64 {
    let xc = if x < -760.0 { -760.0 } else { x };
    let xc = if xc > 710.0 { 710.0 } else { xc };
    let (kf, k) = round_small(xc * LOG2E);
    let r = fma::<I>(kf, -LN2_HI, xc);
    let r = fma::<I>(kf, -LN2_LO, r);
    let p = fma::<I>(r * r, poly::<I, 10>(r, &EXP_F64), r) + 1.0;
    let k1 = k >> 1;
    p * pow2i(k1) * pow2i(k - k1)
}

#[inline(always)]
pub fn expm1<I: Isa>(x: f64) -> f64 {
    let xc = if x < -40.0 { -40.0 } else { x };
    let xc = if xc > 710.0 { 710.0 } else { xc };
    let (kf, k) = round_small(xc * LOG2E);
    let r = fma::<I>(kf, -LN2_HI, xc);
    let r = fma::<I>(kf, -LN2_LO, r);
    let h = fma::<I>(r, poly::<I, 10>(r, &EXPM1_F64), 0.5);
    let em = fma::<I>(r * r, h, r);
    let s = pow2i(k - 1);
    let result = 2.0 * fma::<I>(s, em, s - 0.5);
    if x.abs() < 1e-300 {
        x
    } else {
        result
    }
}

#[inline(always)]
pub fn logistic<I: Isa>(x: f64) -> f64 {
    // See math32::logistic: 1 + exp(-x) = 1 beyond 709 already.
    let nx = if x > 709.0 { -709.0 } else { -x };
    1.0 / (1.0 + exp::<I>(nx))
}

// ---------------------------------------------------------------------------
// Logarithms.

#[inline(always)]
fn split_log(x: f64) -> (f64, f64) {
    const SQRT_HALF_BITS: i64 = 0x3fe6_a09e_667f_3bcd;
    let bits = x.to_bits() as i64;
    let e = bits.wrapping_sub(SQRT_HALF_BITS) >> 52;
    let m = f64::from_bits(bits.wrapping_sub(e.wrapping_shl(52)) as u64);
    // e is within [-1075, 1024]: exact through i32.
    (e as i32 as f64, m)
}

/// `log(1 + f)` for `f` in `[sqrt(1/2) - 1, sqrt(2) - 1]`, through
/// `s = f / (2 + f)`: `log(1+f) = f - (f^2/2 - s (f^2/2 + R(s^2)))`.
#[inline(always)]
fn log1p_core<I: Isa>(f: f64) -> f64 {
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * poly::<I, 7>(z, &LOG_F64);
    let hfsq = 0.5 * f * f;
    f - (hfsq - s * (hfsq + r))
}

#[inline(always)]
pub fn log<I: Isa>(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * TWO52 } else { x };
    let (e, m) = split_log(xs);
    let e = if tiny { e - 52.0 } else { e };
    let r = log1p_core::<I>(m - 1.0);
    let result = fma::<I>(e, LN2_HI, fma::<I>(e, LN2_LO, r));
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f64::NAN
    } else if x == f64::INFINITY {
        x
    } else {
        result
    }
}

#[inline(always)]
pub fn log1p<I: Isa>(x: f64) -> f64 {
    let u = 1.0 + x;
    let (e, m) = split_log(u);
    let near = e == 0.0;
    let f = if near { x } else { m - 1.0 };
    let c = if near { 0.0 } else { (x - (u - 1.0)) / u };
    let r = log1p_core::<I>(f);
    let result = fma::<I>(e, LN2_HI, fma::<I>(e, LN2_LO, r + c));
    if x == 0.0 {
        x // keeps the sign of zero
    } else if x == -1.0 {
        f64::NEG_INFINITY
    } else if x < -1.0 || x.is_nan() {
        f64::NAN
    } else if x == f64::INFINITY {
        x
    } else {
        result
    }
}

// ---------------------------------------------------------------------------
// tanh.

#[inline(always)]
pub fn tanh<I: Isa>(x: f64) -> f64 {
    let a = x.abs();
    let z = a * a;
    let small = fma::<I>(a * z, poly::<I, 11>(z, &TANH_F64), a);
    // 1 - 2 / (e^{2a} + 1) loses up to a few bits just above 0.625; use
    // expm1: tanh a = t / (t + 2), t = e^{2a} - 1.
    let t = expm1::<I>(a + a);
    let large = if a > 20.0 { 1.0 } else { t / (t + 2.0) };
    copysign(if a < 0.625 { small } else { large }, x)
}

// ---------------------------------------------------------------------------
// Trigonometry.

/// Above this magnitude the kernels recompute with the C library.
pub const TRIG_LIMIT: f64 = 1_048_576.0;

const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
// pi/2 in three parts of 33, 33 and 53 bits: k * part is exact for k < 2^20.
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_795_950_7e-21;

#[inline(always)]
fn reduce_pio2<I: Isa>(x: f64) -> (f64, i64) {
    let (kf, k) = round_small(x * FRAC_2_PI);
    let r = x - kf * PIO2_1;
    let r = r - kf * PIO2_2;
    (fma::<I>(kf, -PIO2_3, r), k)
}

#[inline(always)]
fn sincos_core<I: Isa>(r: f64) -> (f64, f64) {
    let z = r * r;
    let s = fma::<I>(r * z, poly::<I, 6>(z, &SIN_F64), r);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    // cos = w + ((1 - w) - hz) + z^2 C(z): the bracket recovers the rounding
    // error of 1 - z/2.
    let c = w + (((1.0 - w) - hz) + z * z * poly::<I, 7>(z, &COS_F64));
    (s, c)
}

#[inline(always)]
pub fn sin<I: Isa>(x: f64) -> f64 {
    let (r, k) = reduce_pio2::<I>(x);
    let (s, c) = sincos_core::<I>(r);
    // sin(-0) = -0 whatever the reduction did to the zero's sign.
    let v = if x == 0.0 {
        x
    } else if k & 1 == 0 {
        s
    } else {
        c
    };
    f64::from_bits(v.to_bits() ^ (((k & 2) as u64) << 62))
}

#[inline(always)]
pub fn cos<I: Isa>(x: f64) -> f64 {
    let (r, k) = reduce_pio2::<I>(x);
    let (s, c) = sincos_core::<I>(r);
    let v = if k & 1 == 0 { c } else { s };
    f64::from_bits(v.to_bits() ^ ((((k + 1) & 2) as u64) << 62))
}

#[inline(always)]
pub fn tan<I: Isa>(x: f64) -> f64 {
    let (r, k) = reduce_pio2::<I>(x);
    let (s, c) = sincos_core::<I>(r);
    let odd = k & 1 != 0;
    let num = if x == 0.0 {
        x
    } else if odd {
        -c
    } else {
        s
    };
    let den = if odd { s } else { c };
    num / den
}

#[inline(always)]
pub fn trig_needs_slow(x: f64) -> bool {
    x.abs() > TRIG_LIMIT
}

pub fn sin_slow(x: f64) -> f64 {
    x.sin()
}
pub fn cos_slow(x: f64) -> f64 {
    x.cos()
}
pub fn tan_slow(x: f64) -> f64 {
    x.tan()
}

#[inline(always)]
pub fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}
