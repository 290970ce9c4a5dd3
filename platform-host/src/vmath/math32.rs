//! `f32` element functions, written to vectorise.
//!
//! Every function here is `#[inline(always)]`, generic over the [`Isa`] level it
//! is compiled for, and free of branches that depend on the data: special cases
//! are computed alongside the general formula and chosen with `if`/`else`
//! expressions LLVM turns into blends. Integer work on the bits (exponent
//! extraction, building `2^k`) uses wrapping arithmetic so NaN and infinity
//! lanes compute harmless garbage that a final select replaces.
//!
//! A few functions have a *slow path* for arguments the vector formula does not
//! cover (trigonometric arguments beyond [`TRIG_LIMIT`], `remainder` with a huge
//! quotient): the slice kernels run the fast formula on every element, then
//! recompute those few elements with a scalar routine.

use super::isa::Isa;
use super::math64;
use super::poly::*;

/// `a * b + c`, fused (one rounding) where the level has FMA.
#[inline(always)]
pub(crate) fn fma<I: Isa>(a: f32, b: f32, c: f32) -> f32 {
    if I::FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Horner evaluation of `c[0] + c[1] x + ...`.
#[inline(always)]
pub(crate) fn poly<I: Isa, const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut p = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        p = fma::<I>(p, x, c[i]);
    }
    p
}

#[inline(always)]
fn copysign(magnitude: f32, sign: f32) -> f32 {
    f32::from_bits((magnitude.to_bits() & 0x7fff_ffff) | (sign.to_bits() & 0x8000_0000))
}

/// `2^k` for `-126 <= k <= 127`.
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32).wrapping_shl(23))
}

/// 1.5 * 2^23: adding and subtracting it rounds an `|x| < 2^22` to an integer
/// (nearest-even), and the sum's low mantissa bits hold that integer.
pub(crate) const ROUND_MAGIC: f32 = 12_582_912.0;

/// Nearest integer (ties to even) of `|x| < 2^22`, as a float and as an `i32`.
#[inline(always)]
fn round_small(x: f32) -> (f32, i32) {
    let shifted = x + ROUND_MAGIC;
    let k = (shifted.to_bits() as i32).wrapping_sub(ROUND_MAGIC.to_bits() as i32);
    (shifted - ROUND_MAGIC, k)
}

// ---------------------------------------------------------------------------
// Rounding.

/// Round half to even, any `x` (NaN and infinities pass through).
#[inline(always)]
pub fn round_even<I: Isa>(x: f32) -> f32 {
    if I::ROUND {
        x.round_ties_even()
    } else {
        // Above 2^23 every float is an integer; below, adding and removing 2^23
        // rounds to an integer in the current (nearest-even) mode.
        let a = x.abs();
        let r = (a + 8_388_608.0) - 8_388_608.0;
        if a < 8_388_608.0 {
            copysign(r, x)
        } else {
            x
        }
    }
}

#[inline(always)]
pub fn floor<I: Isa>(x: f32) -> f32 {
    if I::ROUND {
        x.floor()
    } else {
        let r = round_even::<I>(x);
        copysign(if r > x { r - 1.0 } else { r }, x)
    }
}

#[inline(always)]
pub fn ceil<I: Isa>(x: f32) -> f32 {
    if I::ROUND {
        x.ceil()
    } else {
        let r = round_even::<I>(x);
        copysign(if r < x { r + 1.0 } else { r }, x)
    }
}

/// Round half away from zero.
#[inline(always)]
pub fn round_away<I: Isa>(x: f32) -> f32 {
    // Round |x| to even, then push exact halves that went down back up.
    let a = x.abs();
    let r = round_even::<I>(a);
    copysign(if r - a == -0.5 { r + 1.0 } else { r }, x)
}

// ---------------------------------------------------------------------------
// Exponentials.

pub(crate) const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 split so that `k * LN2_HI` is exact for `|k| < 2^8`.
pub(crate) const LN2_HI: f32 = 0.693_145_751_953_125;
pub(crate) const LN2_LO: f32 = 1.428_606_765_330_187e-6;
/// [`exp`]'s argument range: beyond it the result is 0 (after rounding) or
/// infinity, and the clamped argument keeps `2^k` two exponent fields.
pub(crate) const EXP_LOW: f32 = -110.0;
pub(crate) const EXP_HIGH: f32 = 89.0;
/// [`logistic`]'s clamp (see there).
pub(crate) const LOGISTIC_HIGH: f32 = 87.0;
/// The smallest `f32` whose `tanh` rounds to 1 (`1 - tanh` is below half an
/// ULP of 1 from it on; `scripts/fit_vmath_poly.py TANH_F32_RATIONAL` prints
/// it): [`tanh`] clamps its argument here and returns 1 from here on.
pub(crate) const TANH_ONE: f32 = f32::from_bits(0x4110_2cb4);
/// [`log`]: the bits of `sqrt(1/2)`, where the mantissa range starts.
pub(crate) const SQRT_HALF_BITS: i32 = 0x3f35_04f3;

/// `exp(x) = 2^k p` with `p = e^r`, `|r| <= ln2/2`, for `|x| < 2^21`: the
/// reduction and polynomial of [`exp`], before it scales by `2^k`.
#[inline(always)]
fn exp_reduced<I: Isa>(x: f32) -> (f32, i32) {
    let (kf, k) = round_small(x * LOG2E);
    let r = fma::<I>(kf, -LN2_HI, x);
    let r = fma::<I>(kf, -LN2_LO, r);
    (fma::<I>(r * r, poly::<I, 5>(r, &EXP_F32), r) + 1.0, k)
}

/// `exp(x) = 2^k e^r`, `|r| <= ln2/2`, scaled in two steps so that results in
/// the subnormal range round once and results just below overflow are exact.
#[inline(always)]
pub fn exp<I: Isa>(x: f32) -> f32 {
    // Clamp so that k stays within [-160, 129]; NaN passes both comparisons.
    let xc = if x < EXP_LOW { EXP_LOW } else { x };
    let xc = if xc > EXP_HIGH { EXP_HIGH } else { xc };
    let (p, k) = exp_reduced::<I>(xc);
    let k1 = k >> 1;
    p * pow2i(k1) * pow2i(k - k1)
}

/// `exp(x) - 1` without cancellation near 0: `2^k (e^r - 1) + (2^k - 1)`
/// evaluated as `2 (s (e^r - 1) + (s - 1/2))` with `s = 2^(k-1)`.
#[inline(always)]
pub fn expm1<I: Isa>(x: f32) -> f32 {
    // Below -18 the result is -1 after rounding; above 89 it overflows.
    let xc = if x < -18.0 { -18.0 } else { x };
    let xc = if xc > 89.0 { 89.0 } else { xc };
    let (kf, k) = round_small(xc * LOG2E);
    let r = fma::<I>(kf, -LN2_HI, xc);
    let r = fma::<I>(kf, -LN2_LO, r);
    let h = fma::<I>(r, poly::<I, 5>(r, &EXPM1_F32), 0.5);
    let em = fma::<I>(r * r, h, r);
    let s = pow2i(k - 1);
    let result = 2.0 * fma::<I>(s, em, s - 0.5);
    // Tiny arguments: r = x exactly and em = x (keeps subnormals and -0).
    if x.abs() < 1e-10 {
        x
    } else {
        result
    }
}

/// `1 / (1 + exp(-x))`, the expansion XLA and the shared semantics use.
#[inline(always)]
pub fn logistic<I: Isa>(x: f32) -> f32 {
    // Beyond 87, exp(-x) < 2^-125 leaves 1 + exp(-x) = 1 anyway; clamping keeps
    // exp out of the subnormal range, where the hardware is slow.
    let nx = if x > LOGISTIC_HIGH {
        -LOGISTIC_HIGH
    } else {
        -x
    };
    1.0 / (1.0 + exp::<I>(nx))
}

// ---------------------------------------------------------------------------
// Logarithms.

/// Splits a positive normal `x` into `2^e * m`, `m` in `[sqrt(1/2), sqrt(2))`.
#[inline(always)]
fn split_log(x: f32) -> (f32, f32) {
    let bits = x.to_bits() as i32;
    let e = bits.wrapping_sub(SQRT_HALF_BITS) >> 23;
    let m = f32::from_bits(bits.wrapping_sub(e.wrapping_shl(23)) as u32);
    (e as f32, m)
}

/// `log(1 + f)` for `f` in `[sqrt(1/2) - 1, sqrt(2) - 1]`.
#[inline(always)]
fn log1p_core<I: Isa>(f: f32) -> f32 {
    let t = fma::<I>(f, poly::<I, 8>(f, &LOG_F32), -0.5);
    fma::<I>(f * f, t, f)
}

#[inline(always)]
pub fn log<I: Isa>(x: f32) -> f32 {
    // Subnormals: scale into the normal range first.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let (e, m) = split_log(xs);
    let e = if tiny { e - 23.0 } else { e };
    let r = log1p_core::<I>(m - 1.0);
    let result = fma::<I>(e, LN2_HI, fma::<I>(e, LN2_LO, r));
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f32::NAN
    } else if x == f32::INFINITY {
        x
    } else {
        result
    }
}

/// `log(1 + x)`, bit for bit the C library's `log1pf`: the SunPro/fdlibm
/// algorithm glibc ships (equal to glibc 2.36's on all 2^32 inputs, checked
/// once by a C harness; the test samples them). XLA CPU calls the C library
/// for `log1p`, and JAX's `erf_inv` (every `random.normal`) feeds it a
/// million values at a time, so the vector form must give the same bits.
///
/// The scalar code branches; here every lane computes the general path and
/// the special ranges are selected afterwards. `u = 1 + x` is split into
/// `2^k * (1 + f)` with `1 + f` in `[sqrt(2)/2, sqrt(2))`, `c` is the rounding
/// error of `u` relative to `u`, and `log(1 + f)` is `f - hfsq + s*(hfsq + R)`
/// with `s = f / (2 + f)` and `R` an odd-series polynomial in `s^2`. Within
/// `[-0.2929, 0.41422)` the split is skipped (`k = 0`, `f = x`). No step may
/// become an FMA: the C library rounds each product.
// `I` is unused: the port needs no FMA, but every element function of the
// kernels' table takes the level.
#[allow(clippy::extra_unused_type_parameters)]
#[inline(always)]
pub fn log1p<I: Isa>(x: f32) -> f32 {
    const LN2_HI_F: f32 = f32::from_bits(0x3f31_7180);
    const LN2_LO_F: f32 = f32::from_bits(0x3717_f7d1);
    const LP: [u32; 7] = [
        0x3f2a_aaab,
        0x3ecc_cccd,
        0x3e92_4925,
        0x3e63_8e29,
        0x3e3a_3325,
        0x3e1c_d04f,
        0x3e17_8897,
    ];
    let lp = |i: usize| f32::from_bits(LP[i]);
    let hx = x.to_bits() as i32;
    let ax = hx & 0x7fff_ffff;
    let near = hx < 0x3ed4_13d7 && (hx > 0 || hx <= 0xbe95_f61f_u32 as i32);
    // Beyond 2^53 the 1 is lost: u = x, no correction.
    let big = hx >= 0x5a00_0000;
    let u = if big { x } else { 1.0 + x };
    let hu = u.to_bits() as i32;
    let k_u = (hu >> 23) - 127;
    let c_u = if k_u > 0 {
        1.0 - (u - x)
    } else {
        x - (u - 1.0)
    };
    let c_u = if big { 0.0 } else { c_u / u };
    let mant = hu & 0x007f_ffff;
    let upper = mant >= 0x0035_04f7;
    let norm = f32::from_bits((mant | if upper { 0x3f00_0000 } else { 0x3f80_0000 }) as u32);
    let k = if near { 0 } else { k_u + upper as i32 };
    let c = if near { 0.0 } else { c_u };
    let f = if near { x } else { norm - 1.0 };
    // `hu == 0` in the C code: `f` is below 2^-20 after the split.
    let f_tiny = !near
        && (if upper {
            (0x0080_0000 - mant) >> 2
        } else {
            mant
        }) == 0;
    let kf = k as f32;
    let hfsq = 0.5 * f * f;
    let k_lo = kf * LN2_LO_F + c;
    // |f| < 2^-20.
    let r_tiny = hfsq * (1.0 - lp(0) * f);
    let tiny_path = if k == 0 {
        f - r_tiny
    } else {
        kf * LN2_HI_F - ((r_tiny - k_lo) - f)
    };
    let zero_path = if k == 0 { 0.0 } else { kf * LN2_HI_F + k_lo };
    let tiny_path = if f == 0.0 { zero_path } else { tiny_path };
    // The general case.
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z
        * (lp(0) + z * (lp(1) + z * (lp(2) + z * (lp(3) + z * (lp(4) + z * (lp(5) + z * lp(6)))))));
    let general = if k == 0 {
        f - (hfsq - s * (hfsq + r))
    } else {
        kf * LN2_HI_F - ((hfsq - (s * (hfsq + r) + k_lo)) - f)
    };
    let result = if f_tiny { tiny_path } else { general };
    // |x| < 2^-29: x - x^2/2, or x itself below 2^-54.
    let small = if ax < 0x2480_0000 { x } else { x - x * x * 0.5 };
    if ax < 0x3100_0000 {
        small
    } else if hx < 0 && ax >= 0x3f80_0000 {
        // x <= -1 (and negative NaN).
        if x == -1.0 {
            f32::NEG_INFINITY
        } else {
            f32::NAN
        }
    } else if hx >= 0x7f80_0000 {
        x + x
    } else {
        result
    }
}

// ---------------------------------------------------------------------------
// Hyperbolic and error functions.

/// One rational function over the whole range, `x P(x^2) / Q(x^2)` with the
/// argument clamped at [`TANH_ONE`], from where the result is 1: one division and
/// no branch, so a vector of arguments costs the same wherever they lie (the
/// two-branch form it replaced, a polynomial below 0.625 and `1 - 2 / (e^2x +
/// 1)` above, was within 1.2 ULP but computed both branches for every lane,
/// twice this one's work). With fused multiply-adds, at most 5.2 ULP (mean
/// 0.65) from the exact result over every f32 from 2^-12 to 9.1, and
/// `tanh(x) = x` below (`scripts/fit_vmath_poly.py TANH_F32_RATIONAL`, which
/// fits the coefficients and evaluates them as here); the fit's own error is
/// 0.4 ULP, the rest is the Horner steps' rounding near 1, where `P` and `Q`
/// are large. XLA CPU's `tanh` is one rational function too, 4.7 ULP off at
/// most on every 7th f32 of the same range. Near 1 the quotient can round
/// just above 1, so it is capped there, and from [`TANH_ONE`] on the result
/// is 1 whatever the rounding of the steps. Odd: the sign is `x`'s, so
/// `tanh(-0) = -0`; NaN passes.
#[inline(always)]
pub fn tanh<I: Isa>(x: f32) -> f32 {
    let a = x.abs();
    let ac = if a > TANH_ONE { TANH_ONE } else { a };
    let z = ac * ac;
    let p = poly::<I, 5>(z, &TANH_F32_NUM);
    let q = poly::<I, 5>(z, &TANH_F32_DEN);
    let r = (ac * p) / q;
    // A NaN `r` (from a NaN `x` only) fails both comparisons and passes.
    let r = if a >= TANH_ONE || r > 1.0 { 1.0 } else { r };
    copysign(r, x)
}

#[inline(always)]
pub fn erf<I: Isa>(x: f32) -> f32 {
    let a = x.abs();
    let small = a * poly::<I, 7>(a * a, &ERF_F32);
    // erf = 1 - exp(-a^2) g(1/a) on [0.921875, 3.92]; 1 beyond.
    let g = poly::<I, 10>(1.0 / a, &ERFC_F32);
    // Clamped so exp stays out of the (slow) subnormal range; beyond 3.92 the
    // result is 1 anyway.
    let ac = if a > 4.0 { 4.0 } else { a };
    let large = fma::<I>(-exp::<I>(-(ac * ac)), g, 1.0);
    let r = if a >= 3.92 { 1.0 } else { large };
    copysign(if a < 0.921875 { small } else { r }, x)
}

// ---------------------------------------------------------------------------
// Trigonometry.

/// Above this magnitude the vector range reduction is not accurate enough and
/// the slice kernels recompute the element with [`sin_slow`] and friends.
pub const TRIG_LIMIT: f32 = 131_072.0;

const FRAC_2_PI: f32 = std::f32::consts::FRAC_2_PI;
// pi/2 = P1 + P2 + P3 to about 72 bits (each part rounded to f32).
const PIO2_1: f32 = 1.570_796_4;
const PIO2_2: f32 = -4.371_139e-8;
const PIO2_3: f32 = -1.715_124_5e-15;

/// `x = k pi/2 + r`, `|r| <= pi/4` (for `|x| <= TRIG_LIMIT`); returns `(r, k)`.
#[inline(always)]
fn reduce_pio2<I: Isa>(x: f32) -> (f32, i32) {
    let (kf, k) = round_small(x * FRAC_2_PI);
    if I::FMA {
        // k * PIO2_1 is exact inside the fma and x - k*PIO2_1 is exactly
        // representable (a multiple of 2^-23 below 1), so only the last two
        // steps round.
        let r = kf.mul_add(-PIO2_1, x);
        let r = kf.mul_add(-PIO2_2, r);
        (kf.mul_add(-PIO2_3, r), k)
    } else {
        // Without fma, reduce in f64: k * hi is exact for k < 2^20.
        let (x, kd) = (x as f64, kf as f64);
        const HI: f64 = 1.570_796_326_734_125_6; // 33 bits
        const LO: f64 = 6.077_100_506_506_192e-11;
        ((x - kd * HI - kd * LO) as f32, k)
    }
}

/// `(sin r, cos r)` for `|r| <= pi/4`.
#[inline(always)]
fn sincos_core<I: Isa>(r: f32) -> (f32, f32) {
    let z = r * r;
    let s = fma::<I>(r * z, poly::<I, 4>(z, &SIN_F32), r);
    let c = fma::<I>(z * z, poly::<I, 4>(z, &COS_F32), fma::<I>(z, -0.5, 1.0));
    (s, c)
}

#[inline(always)]
pub fn sin<I: Isa>(x: f32) -> f32 {
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
    // Quadrants 2 and 3 negate.
    f32::from_bits(v.to_bits() ^ (((k & 2) as u32) << 30))
}

#[inline(always)]
pub fn cos<I: Isa>(x: f32) -> f32 {
    let (r, k) = reduce_pio2::<I>(x);
    let (s, c) = sincos_core::<I>(r);
    let v = if k & 1 == 0 { c } else { s };
    // cos(r + k pi/2) = cos r, -sin r, -cos r, sin r.
    f32::from_bits(v.to_bits() ^ ((((k + 1) & 2) as u32) << 30))
}

#[inline(always)]
pub fn tan<I: Isa>(x: f32) -> f32 {
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

/// Whether `x` needs the scalar trigonometric path.
#[inline(always)]
pub fn trig_needs_slow(x: f32) -> bool {
    x.abs() > TRIG_LIMIT
}

/// Scalar fallbacks: `f64` libm, then one rounding to `f32`.
pub fn sin_slow(x: f32) -> f32 {
    (x as f64).sin() as f32
}
pub fn cos_slow(x: f32) -> f32 {
    (x as f64).cos() as f32
}
pub fn tan_slow(x: f32) -> f32 {
    (x as f64).tan() as f32
}

const PI_HI: f32 = std::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;
const PIO2_HI: f32 = std::f32::consts::FRAC_PI_2;
const PIO2_LO: f32 = -4.371_139e-8;

/// `atan2(y, x)` with C's quadrant, signed-zero and infinity rules.
#[inline(always)]
pub fn atan2<I: Isa>(y: f32, x: f32) -> f32 {
    let (ay, ax) = (y.abs(), x.abs());
    let swap = ay > ax;
    let (num, den) = if swap { (ax, ay) } else { (ay, ax) };
    let both_inf = ay == f32::INFINITY && ax == f32::INFINITY;
    let t = if den == 0.0 {
        0.0
    } else if both_inf {
        1.0
    } else {
        num / den
    };
    let z = t * t;
    let a = fma::<I>(t * z, poly::<I, 9>(z, &ATAN_F32), t);
    // a, pi/2 - a, pi - a or pi/2 + a by octant pair; the constant's low part
    // is added to `a` first so the one rounding left is the final one.
    let x_neg = x.is_sign_negative();
    let (base, low) = if swap {
        (PIO2_HI, PIO2_LO)
    } else if x_neg {
        (PI_HI, PI_LO)
    } else {
        (0.0, 0.0)
    };
    let signed_a = if swap != x_neg { -a } else { a };
    let r = copysign(base + (low + signed_a), y);
    // NaN in either operand (the zero-denominator case above would hide it).
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r
    }
}

// ---------------------------------------------------------------------------
// Roots and powers.

#[inline(always)]
pub fn rsqrt(x: f32) -> f32 {
    1.0 / x.sqrt()
}

/// Cube root: a bit-trick estimate, then two Halley steps in `f64` (cubic
/// convergence: 5% → 1e-4 → 1e-12), rounded once.
#[inline(always)]
pub fn cbrt(x: f32) -> f32 {
    let a = x.abs();
    let tiny = a < f32::MIN_POSITIVE;
    let scaled = if tiny { a * 16_777_216.0 } else { a }; // 2^24
    let guess = f32::from_bits((scaled.to_bits() / 3).wrapping_add(0x2a55_5555));
    let guess = if tiny { guess * (1.0 / 256.0) } else { guess }; // 2^-8
    let (a64, mut y) = (a as f64, guess as f64);
    for _ in 0..2 {
        let y3 = y * y * y;
        y = y * (y3 + 2.0 * a64) / (2.0 * y3 + a64);
    }
    let r = copysign(y as f32, x);
    if a == f32::INFINITY || a.is_nan() || a == 0.0 {
        x
    } else {
        r
    }
}

/// Whether `y` is an integer (infinities count as even integers, as in C).
#[inline(always)]
fn is_integer<I: Isa>(y: f32) -> bool {
    floor::<I>(y) == y
}

/// `pow(x, y)` with C99's special cases, computed as `exp(y log|x|)` in `f64`
/// (so the result is within a hair of correctly rounded for every `f32`).
#[inline(always)]
pub fn pow<I: Isa>(x: f32, y: f32) -> f32 {
    let ax = x.abs();
    let t = (y as f64) * math64::log::<I>(ax as f64);
    let magnitude = math64::exp::<I>(t) as f32;
    let y_int = is_integer::<I>(y);
    let y_odd = y_int && !is_integer::<I>(y * 0.5);
    let negative = x.is_sign_negative() && y_odd;
    let general = if negative { -magnitude } else { magnitude };
    if y == 0.0 || x == 1.0 || (ax == 1.0 && y.abs() == f32::INFINITY) {
        1.0
    } else if x < 0.0 && ax < f32::INFINITY && !y_int {
        f32::NAN
    } else {
        general
    }
}

/// `fmod`: exact. With `q = trunc(a / b)` below 2^24, `a - q b` is exact in
/// `f64`; a quotient rounded up to the next integer is corrected by one `b`.
#[inline(always)]
pub fn rem<I: Isa>(a: f32, b: f32) -> f32 {
    let (a64, b64) = (a as f64, b as f64);
    let q = math64::trunc::<I>(a64 / b64);
    let r = a64 - q * b64;
    let r = if r != 0.0 && (r < 0.0) != (a64 < 0.0) {
        r + if (a64 < 0.0) == (b64 < 0.0) {
            b64
        } else {
            -b64
        }
    } else {
        r
    };
    let r = copysign(r as f32, a);
    if b.abs() == f32::INFINITY && a.abs() < f32::INFINITY {
        a
    } else {
        r
    }
}

/// Whether [`rem`]'s quotient is too large for its exact formula.
#[inline(always)]
pub fn rem_needs_slow(a: f32, b: f32) -> bool {
    // Comparisons are false for NaN; infinities and zeros are handled by the
    // fast formula.
    a.abs() >= b.abs() * 16_777_216.0 && a.abs() < f32::INFINITY && b != 0.0
}

pub fn rem_slow(a: f32, b: f32) -> f32 {
    a % b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmath::isa::{Avx2, Base};

    /// `tanh` is odd, at most 1 in magnitude and 1 from `TANH_ONE` on,
    /// within its documented error of the correctly rounded result (every
    /// 4093rd f32 below 12), and keeps NaN, zero signs and tiny arguments
    /// (`tanh(x) = x` below 2^-12).
    fn tanh_properties<I: Isa>() {
        let mut bits = 0;
        while bits < 12.0f32.to_bits() {
            let x = f32::from_bits(bits);
            let t = tanh::<I>(x);
            assert_eq!((-t).to_bits(), tanh::<I>(-x).to_bits(), "tanh(-{x})");
            assert!((0.0..=1.0).contains(&t), "tanh({x}) = {t}");
            let want = (x as f64).tanh();
            let spacing = if want == 0.0 {
                f32::from_bits(1) as f64
            } else {
                let w = want as f32;
                (f32::from_bits(w.to_bits() + 1) - w) as f64
            };
            assert!(
                (t as f64 - want).abs() <= 5.2 * spacing,
                "tanh({x}) = {t}, want {want}"
            );
            if x < 2f32.powi(-12) {
                assert_eq!(t.to_bits(), x.to_bits(), "tanh({x})");
            }
            bits += 4093;
        }
        for x in [TANH_ONE, 9.02, 9.1, 20.0, f32::MAX, f32::INFINITY] {
            assert_eq!(tanh::<I>(x), 1.0, "tanh({x})");
            assert_eq!(tanh::<I>(-x), -1.0, "tanh(-{x})");
        }
        assert_eq!(tanh::<I>(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(tanh::<I>(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_odd_bounded_and_accurate() {
        tanh_properties::<Base>();
        // With fused multiply-adds (emulated where the CPU lacks them).
        tanh_properties::<Avx2>();
    }
}
