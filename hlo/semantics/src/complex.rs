//! Complex semantics (`c64`, `c128`): XLA's formulas, term for term.
//!
//! XLA computes complex ops with explicit real formulas (its elemental IR
//! emitter), not C99's `<complex.h>`, and the two disagree on many special values
//! (signed zeros, infinities mixed with NaN). The functions here follow XLA's
//! formulas step by step, including its corner-case selects, so special values
//! come out as XLA's do:
//!
//! * `multiply` is the textbook `(ac - bd, ad + bc)`;
//! * `divide` is Smith's algorithm, with XLA's recovery of infinities and zeros
//!   when the quotient would otherwise be `(NaN, NaN)`;
//! * `abs` is `max * sqrt(1 + (min/max)^2)` (NaN → `min`), with NaN-propagating
//!   `max`/`min`;
//! * `exp`, `expm1`, `log`, `log1p`, `sqrt`, `rsqrt`, `sin`, `cos`, `tan`, `tanh`,
//!   `power`, `atan2`, `sign` and `logistic` as documented on each function.
//!
//! Real component math comes from [`Real`], so the results are within a few ULP of
//! XLA's (which uses its own approximations for some real functions).

use super::real::Real;
use hlo_ir::native::NativeType;
use num_complex::{Complex32, Complex64};

/// A complex element type with its component type.
pub trait ComplexSemantics: NativeType + Copy {
    type Part: Real + NativeType;
    fn new(re: Self::Part, im: Self::Part) -> Self;
    fn re(self) -> Self::Part;
    fn im(self) -> Self::Part;
}

impl ComplexSemantics for Complex32 {
    type Part = f32;
    #[inline]
    fn new(re: f32, im: f32) -> Self {
        Complex32::new(re, im)
    }
    #[inline]
    fn re(self) -> f32 {
        self.re
    }
    #[inline]
    fn im(self) -> f32 {
        self.im
    }
}

impl ComplexSemantics for Complex64 {
    type Part = f64;
    #[inline]
    fn new(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
    #[inline]
    fn re(self) -> f64 {
        self.re
    }
    #[inline]
    fn im(self) -> f64 {
        self.im
    }
}

#[inline]
fn c<C: ComplexSemantics>(re: C::Part, im: C::Part) -> C {
    C::new(re, im)
}

#[inline]
fn is_inf<R: Real>(x: R) -> bool {
    x.abs() == R::INFINITY
}

/// `x` is neither infinite nor NaN (LLVM's ordered `!= inf` on `|x|`).
#[inline]
fn is_finite<R: Real>(x: R) -> bool {
    x.is_finite()
}

#[inline]
pub fn add<C: ComplexSemantics>(a: C, b: C) -> C {
    c(a.re() + b.re(), a.im() + b.im())
}

#[inline]
pub fn subtract<C: ComplexSemantics>(a: C, b: C) -> C {
    c(a.re() - b.re(), a.im() - b.im())
}

/// `(ac - bd) + (ad + bc)i`, no special-value recovery (as XLA).
#[inline]
pub fn multiply<C: ComplexSemantics>(a: C, b: C) -> C {
    c(
        a.re() * b.re() - a.im() * b.im(),
        a.re() * b.im() + a.im() * b.re(),
    )
}

#[inline]
pub fn negate<C: ComplexSemantics>(x: C) -> C {
    c(-x.re(), -x.im())
}

/// Smith's division; when both parts come out NaN, XLA's recovery: a zero
/// divisor gives `inf·sign(b_re)·a`, an infinite dividend over a finite divisor
/// gives infinities, a finite dividend over an infinite divisor gives zeros.
#[inline]
pub fn divide<C: ComplexSemantics>(a: C, b: C) -> C {
    let (ar, ai, br, bi) = (a.re(), a.im(), b.re(), b.im());
    let zero = C::Part::ZERO;
    let one = C::Part::ONE;
    let inf = C::Part::INFINITY;
    let br_over_bi = br / bi;
    let denom_bi = bi + br_over_bi * br;
    let bi_over_br = bi / br;
    let denom_br = br + bi_over_br * bi;
    let br_abs = br.abs();
    let bi_abs = bi.abs();
    let (cr, ci) = if br_abs < bi_abs {
        (
            (br_over_bi * ar + ai) / denom_bi,
            (br_over_bi * ai - ar) / denom_bi,
        )
    } else {
        (
            (bi_over_br * ai + ar) / denom_br,
            (ai - bi_over_br * ar) / denom_br,
        )
    };
    if !(cr.is_nan() && ci.is_nan()) {
        return c(cr, ci);
    }
    let zero_denominator = br_abs == zero && bi_abs == zero && (!ar.is_nan() || !ai.is_nan());
    if zero_denominator {
        let signed_inf = inf.copysign(br);
        return c(signed_inf * ar, signed_inf * ai);
    }
    let ar_inf = is_inf(ar);
    let ai_inf = is_inf(ai);
    if (ar_inf || ai_inf) && is_finite(br) && is_finite(bi) {
        let ars = (if ar_inf { one } else { zero }).copysign(ar);
        let ais = (if ai_inf { one } else { zero }).copysign(ai);
        return c(inf * (ars * br + ais * bi), inf * (ais * br - ars * bi));
    }
    let br_inf = is_inf(br);
    let bi_inf = is_inf(bi);
    if (br_inf || bi_inf) && is_finite(ar) && is_finite(ai) {
        let brs = (if br_inf { one } else { zero }).copysign(br);
        let bis = (if bi_inf { one } else { zero }).copysign(bi);
        return c(zero * (ar * brs + ai * bis), zero * (ai * brs - ar * bis));
    }
    c(cr, ci)
}

/// `(min, max, 1 + (min/max)^2)` of `|re|`, `|im|` with NaN-propagating max/min.
#[inline]
fn abs_parts<R: Real>(re: R, im: R) -> (R, R, R) {
    let (x, y) = (re.abs(), im.abs());
    let max = x.maximum(y);
    let min = x.minimum(y);
    let ratio = min / max;
    (min, max, R::ONE + ratio * ratio)
}

/// `abs`: `max * sqrt(1 + (min/max)^2)`, or `min` where that is NaN (both zero,
/// both infinite, or a NaN part: so `abs(inf + NaN i)` is NaN, unlike C99).
#[inline]
pub fn abs<C: ComplexSemantics>(x: C) -> C::Part {
    let (min, max, one_plus) = abs_parts(x.re(), x.im());
    let r = max * one_plus.sqrt();
    if r.is_nan() {
        min
    } else {
        r
    }
}

/// `sqrt(|x|)` computed without overflow: `sqrt(max) * (1 + (min/max)^2)^(1/4)`.
#[inline]
fn sqrt_abs<R: Real>(re: R, im: R) -> R {
    let (min, max, one_plus) = abs_parts(re, im);
    let r = max.sqrt() * one_plus.powf(R::from_f64(0.25));
    if r.is_nan() {
        min
    } else {
        r
    }
}

/// `1 / sqrt(|x|)`: `rsqrt(max) * rsqrt(sqrt(1 + (min/max)^2))`.
#[inline]
fn rsqrt_abs<R: Real>(re: R, im: R) -> R {
    let rsqrt = |v: R| R::ONE / v.sqrt();
    let (min, max, one_plus) = abs_parts(re, im);
    let r = rsqrt(max) * rsqrt(one_plus.sqrt());
    if r.is_nan() {
        rsqrt(min)
    } else {
        r
    }
}

/// `sign`: `x / |x|`, and `0` (both parts `+0`) where `|x| = 0`.
#[inline]
pub fn sign<C: ComplexSemantics>(x: C) -> C {
    let a = abs(x);
    if a == C::Part::ZERO {
        c(C::Part::ZERO, C::Part::ZERO)
    } else {
        c(x.re() / a, x.im() / a)
    }
}

/// `exp(a + bi) = e^a cos b + (e^a sin b) i`.
#[inline]
pub fn exp<C: ComplexSemantics>(x: C) -> C {
    let e = x.re().exp();
    let b = x.im();
    c(e * b.cos(), e * b.sin())
}

/// `cos(x) - 1`, accurate for small `x`.
#[inline]
fn cos_minus_one<R: Real>(x: R) -> R {
    let s = (x * R::HALF).sin();
    -(R::TWO * s * s)
}

/// `expm1(a + bi) = (expm1(a) cos b + cosm1(b)) + (e^a sin b) i`, with an exact
/// `+0` imaginary part when `b = 0`.
#[inline]
pub fn exponential_minus_one<C: ComplexSemantics>(x: C) -> C {
    let (a, b) = (x.re(), x.im());
    let expm1_a = a.exp_m1();
    let exp_a = expm1_a + C::Part::ONE;
    let cosm1_b = cos_minus_one(b);
    let cos_b = cosm1_b + C::Part::ONE;
    let re = expm1_a * cos_b + cosm1_b;
    let im = if b == C::Part::ZERO {
        C::Part::ZERO
    } else {
        exp_a * b.sin()
    };
    c(re, im)
}

/// `log(z) = log|z| + atan2(b, a) i`.
#[inline]
pub fn log<C: ComplexSemantics>(x: C) -> C {
    c(abs(x).ln(), x.im().atan2(x.re()))
}

/// `log1p(a + bi)`: real part `log1p(max(|a+1|,|b|) - 1) + log1p((min/max)^2)/2`
/// (with `a` itself for `max - 1` when `a + 1 > |b|`; NaN → `min`), imaginary part
/// `atan2(b, a + 1)`.
#[inline]
pub fn log_plus_one<C: ComplexSemantics>(x: C) -> C {
    let (a, b) = (x.re(), x.im());
    let a1 = a + C::Part::ONE;
    let (abs_a1, abs_b) = (a1.abs(), b.abs());
    let max = abs_a1.maximum(abs_b);
    let min = abs_a1.minimum(abs_b);
    let max_minus_one = if a1 > abs_b { a } else { max - C::Part::ONE };
    let ratio = min / max;
    let r = C::Part::HALF * (ratio * ratio).ln_1p() + max_minus_one.ln_1p();
    let re = if r.is_nan() { min } else { r };
    c(re, b.atan2(a1))
}

/// `sqrt(z) = sqrt|z| (cos(t/2) + sin(t/2) i)`, `t = atan2(b, a)`, with XLA's
/// infinities: `|b| = inf` or `a = +inf` gives real `+inf`; `a = -inf` (finite `b`)
/// gives real `0`; `|b| = inf` or `a = -inf` gives imaginary `±inf` (sign of `b`);
/// `|z| = 0` gives `0`.
#[inline]
pub fn sqrt<C: ComplexSemantics>(x: C) -> C {
    let (a, b) = (x.re(), x.im());
    let zero = C::Part::ZERO;
    let inf = C::Part::INFINITY;
    let r = sqrt_abs(a, b);
    let angle = b.atan2(a) * C::Part::HALF;
    let (cos, sin) = (angle.cos(), angle.sin());
    let abs_b = b.abs();
    let re = if abs_b == inf || a == inf {
        inf
    } else if a == C::Part::NEG_INFINITY && abs_b != inf {
        zero
    } else {
        r * cos
    };
    let im = if abs_b == inf || a == C::Part::NEG_INFINITY {
        inf.copysign(b)
    } else if r.is_nan() {
        C::Part::NAN
    } else if sin == zero {
        sin
    } else {
        r * sin
    };
    if r == zero {
        c(zero, zero)
    } else {
        c(re, im)
    }
}

/// `rsqrt(z) = |z|^(-1/2) (cos(-t/2) + sin(-t/2) i)`; `rsqrt(0) = inf + NaN i`;
/// an infinite part (or infinite `b` with NaN `a`) gives signed zeros.
#[inline]
pub fn rsqrt<C: ComplexSemantics>(x: C) -> C {
    let (a, b) = (x.re(), x.im());
    let zero = C::Part::ZERO;
    let inf = C::Part::INFINITY;
    let r = rsqrt_abs(a, b);
    let angle = b.atan2(a) * (-C::Part::HALF);
    let (cos, sin) = (angle.cos(), angle.sin());
    let zero_zero = a == zero && b == zero;
    let to_zero = (is_inf(b) && a.is_nan()) || is_inf(a);
    let re = if zero_zero {
        inf
    } else if to_zero {
        zero.copysign(a)
    } else {
        r * cos
    };
    let im = if zero_zero {
        C::Part::NAN
    } else if to_zero {
        -zero.copysign(b)
    } else {
        r * sin
    };
    c(re, im)
}

/// `(sinh y, cosh y)` as XLA builds them from one `exp`.
#[inline]
fn sinh_cosh<R: Real>(y: R) -> (R, R) {
    let e = y.exp();
    let half_e = R::HALF * e;
    let half_inv = R::HALF / e;
    (half_e - half_inv, half_e + half_inv)
}

/// `sin(x + yi) = sin x cosh y + (cos x sinh y) i`.
#[inline]
pub fn sin<C: ComplexSemantics>(z: C) -> C {
    let (x, y) = (z.re(), z.im());
    let (sinh, cosh) = sinh_cosh(y);
    c(x.sin() * cosh, x.cos() * sinh)
}

/// `cos(x + yi) = cos x cosh y - (sin x sinh y) i`.
#[inline]
pub fn cos<C: ComplexSemantics>(z: C) -> C {
    let (x, y) = (z.re(), z.im());
    let (sinh, cosh) = sinh_cosh(y);
    c(x.cos() * cosh, -(x.sin() * sinh))
}

/// The real and imaginary parts of `tanh(a + bi)` by XLA's formula
/// `(e^2a - e^-2a + 2 sin(2b) i) / (e^2a + e^-2a + 2 cos(2b))`, built from
/// `expm1`, with its limits: `±1` once the denominator overflows, NaN real part
/// when `sin 2b` is NaN and `a` is finite, `+0` imaginary part when `b = 0` (or `a`
/// is infinite and `sin 2b` is NaN).
#[inline]
fn tanh_parts<R: Real>(a: R, b: R) -> (R, R) {
    let four = R::from_f64(4.0);
    let two_a = a + a;
    let exp_2a_m1 = two_a.exp_m1();
    let exp_neg_2a_m1 = (-two_a).exp_m1();
    let real_numerator = exp_2a_m1 - exp_neg_2a_m1;
    let cos_b = b.cos();
    let two_cos_2b_p2 = cos_b * cos_b * four;
    let imag_numerator = four * (cos_b * b.sin());
    let exp_sum_m2 = exp_2a_m1 + exp_neg_2a_m1;
    let denom = exp_sum_m2 + two_cos_2b_p2;
    let mut re = if exp_sum_m2 == R::INFINITY {
        (-R::ONE).copysign(a)
    } else {
        real_numerator / denom
    };
    let mut im = imag_numerator / denom;
    let a_is_inf = is_inf(a);
    let sin_2b_is_nan = imag_numerator.is_nan();
    if sin_2b_is_nan && !a_is_inf {
        re = R::NAN;
    }
    if b == R::ZERO || (a_is_inf && sin_2b_is_nan) {
        im = R::ZERO;
    }
    (re, im)
}

/// `tanh(a + bi) = (e^2a - e^-2a + 2 sin(2b) i) / (e^2a + e^-2a + 2 cos(2b))`,
/// with XLA's limits: `±1` real part once the denominator overflows, NaN real part
/// when `sin 2b` is NaN and `a` is finite, `+0` imaginary part when `b = 0`.
#[inline]
pub fn tanh<C: ComplexSemantics>(z: C) -> C {
    let (re, im) = tanh_parts(z.re(), z.im());
    c(re, im)
}

/// `tan(x + yi) = -i tanh(-y + xi)`.
#[inline]
pub fn tan<C: ComplexSemantics>(z: C) -> C {
    let (re, im) = tanh_parts(-z.im(), z.re());
    c(im, -re)
}

/// `logistic(z) = 1 / (1 + exp(-z))` with the complex ops above.
#[inline]
pub fn logistic<C: ComplexSemantics>(z: C) -> C {
    let one = c::<C>(C::Part::ONE, C::Part::ZERO);
    divide(one, add(one, exp(negate(z))))
}

/// `power(a + bi, c + di) = |z|^c e^(-d t) (cos q + sin q i)` with `t = atan2(b, a)`,
/// `q = c t + d log|z|`, and XLA's exact cases, later ones winning: `0^(c + 0i)` is
/// 1 for `c = 0` and 0 for `c > 0`; `z^0 = 1`; `1^w = 1`; `inf^(c + 0i)` is `inf` for
/// `c > 0` and 0 for `c < 0`.
#[inline]
pub fn power<C: ComplexSemantics>(lhs: C, rhs: C) -> C {
    let (a, b, cr, d) = (lhs.re(), lhs.im(), rhs.re(), rhs.im());
    let zero = C::Part::ZERO;
    let one = C::Part::ONE;
    let inf = C::Part::INFINITY;
    if a == inf && b == zero && d == zero && cr < zero {
        return c(zero, zero);
    }
    if a == inf && b == zero && d == zero && cr > zero {
        return c(inf, zero);
    }
    if a == one && b == zero {
        return c(one, zero);
    }
    if cr == zero && d == zero {
        return c(one, zero);
    }
    let modulus = abs(lhs);
    if modulus == zero && d == zero && zero <= cr {
        return c(if cr == zero { one } else { zero }, zero);
    }
    let arg = b.atan2(a);
    let coeff = modulus.powf(cr) * (-d * arg).exp();
    let q = cr * arg + d * modulus.ln();
    c(coeff * q.cos(), coeff * q.sin())
}

/// `atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2))` with the complex ops above.
#[inline]
pub fn atan2<C: ComplexSemantics>(y: C, x: C) -> C {
    let zero = C::Part::ZERO;
    let one = C::Part::ONE;
    let sum_of_squares = add(multiply(x, x), multiply(y, y));
    let root = sqrt(sum_of_squares);
    let x_plus_iy = add(x, multiply(c::<C>(zero, one), y));
    let l = log(divide(x_plus_iy, root));
    multiply(c::<C>(zero, -one), l)
}

/// `compare EQ`: both parts equal (IEEE).
#[inline]
pub fn eq<C: ComplexSemantics>(a: C, b: C) -> bool {
    a.re() == b.re() && a.im() == b.im()
}

/// `compare NE`: either part unequal (true with NaN).
#[inline]
pub fn ne<C: ComplexSemantics>(a: C, b: C) -> bool {
    a.re() != b.re() || a.im() != b.im()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    fn close(a: Complex64, b: Complex64) -> bool {
        (a - b).norm() <= 1e-12 * b.norm().max(1.0)
    }

    #[test]
    fn arithmetic() {
        assert_eq!(multiply(z(1.0, 2.0), z(3.0, 4.0)), z(-5.0, 10.0));
        assert!(close(divide(z(-5.0, 10.0), z(3.0, 4.0)), z(1.0, 2.0)));
        assert!(close(divide(z(1.0, 1.0), z(1e300, 1e300)), z(1e-300, 0.0)));
        // XLA's recoveries.
        let q = divide(z(1.0, 0.0), z(0.0, 0.0));
        assert!(q.re.is_infinite() && q.im.is_nan());
        let q = divide(z(f64::INFINITY, 0.0), z(2.0, 0.0));
        assert!(q.re == f64::INFINITY && q.im.is_nan());
        let q = divide(z(1.0, 1.0), z(f64::INFINITY, 0.0));
        assert_eq!(q, z(0.0, 0.0));
    }

    #[test]
    fn abs_and_sign() {
        assert_eq!(abs(z(3.0, 4.0)), 5.0);
        assert_eq!(abs(z(1e300, 1e300)), 1e300 * 2f64.sqrt());
        assert_eq!(abs(z(0.0, -0.0)), 0.0);
        assert_eq!(abs(z(f64::INFINITY, f64::NEG_INFINITY)), f64::INFINITY);
        assert!(abs(z(f64::INFINITY, f64::NAN)).is_nan());
        assert_eq!(sign(z(0.0, 0.0)), z(0.0, 0.0));
        assert!(close(sign(z(3.0, -4.0)), z(0.6, -0.8)));
    }

    #[test]
    fn elementary_functions_agree_with_num_complex_on_ordinary_values() {
        for &(re, im) in &[(0.3, -1.2), (-2.0, 0.5), (1.5, 2.5), (-0.7, -0.1)] {
            let x = z(re, im);
            assert!(close(exp(x), x.exp()), "exp {x}");
            assert!(close(log(x), x.ln()), "log {x}");
            assert!(close(sqrt(x), x.sqrt()), "sqrt {x}");
            assert!(close(rsqrt(x), x.sqrt().inv()), "rsqrt {x}");
            assert!(close(sin(x), x.sin()), "sin {x}");
            assert!(close(cos(x), x.cos()), "cos {x}");
            assert!(close(tan(x), x.tan()), "tan {x}");
            assert!(close(tanh(x), x.tanh()), "tanh {x}");
            assert!(close(exponential_minus_one(x), x.exp() - 1.0), "expm1 {x}");
            assert!(close(log_plus_one(x), (x + 1.0).ln()), "log1p {x}");
            assert!(close(logistic(x), (1.0 + (-x).exp()).inv()), "logistic {x}");
            let w = z(0.5, -0.25);
            assert!(close(power(x, w), x.powc(w)), "pow {x}");
        }
    }

    #[test]
    fn special_values_follow_xla_formulas() {
        // tanh corner cases listed in XLA's emitter.
        assert_eq!(tanh(z(0.0, 0.0)), z(0.0, 0.0));
        let t = tanh(z(1.0, f64::INFINITY));
        assert!(t.re.is_nan() && t.im.is_nan());
        assert_eq!(tanh(z(f64::INFINITY, 1.0)), z(1.0, 0.0));
        assert_eq!(tanh(z(f64::NEG_INFINITY, f64::INFINITY)).re, -1.0);
        let t = tanh(z(f64::NAN, 0.0));
        assert!(t.re.is_nan() && t.im == 0.0);
        // sqrt
        // cos(pi/2) is not exactly 0, so the real part is a rounding residue.
        assert!(close(sqrt(z(-4.0, 0.0)), z(0.0, 2.0)));
        assert_eq!(sqrt(z(0.0, -0.0)), z(0.0, 0.0));
        assert_eq!(sqrt(z(f64::NEG_INFINITY, 1.0)), z(0.0, f64::INFINITY));
        assert_eq!(
            sqrt(z(1.0, f64::NEG_INFINITY)),
            z(f64::INFINITY, f64::NEG_INFINITY)
        );
        // rsqrt
        let r = rsqrt(z(0.0, 0.0));
        assert!(r.re == f64::INFINITY && r.im.is_nan());
        assert_eq!(rsqrt(z(f64::INFINITY, 2.0)), z(0.0, -0.0));
        // power
        assert_eq!(power(z(0.0, 0.0), z(0.0, 0.0)), z(1.0, 0.0));
        assert_eq!(power(z(0.0, 0.0), z(2.0, 0.0)), z(0.0, 0.0));
        assert_eq!(power(z(f64::NAN, 1.0), z(0.0, 0.0)), z(1.0, 0.0));
        assert_eq!(power(z(1.0, 0.0), z(f64::NAN, 3.0)), z(1.0, 0.0));
        assert_eq!(
            power(z(f64::INFINITY, 0.0), z(2.0, 0.0)),
            z(f64::INFINITY, 0.0)
        );
        assert_eq!(power(z(f64::INFINITY, 0.0), z(-2.0, 0.0)), z(0.0, 0.0));
        // expm1 keeps tiny values and has +0 imaginary part for real input.
        assert_eq!(exponential_minus_one(z(1e-30, 0.0)), z(1e-30, 0.0));
        assert!(exponential_minus_one(z(1.0, -0.0)).im.is_sign_positive());
        assert_eq!(log_plus_one(z(1e-30, 0.0)), z(1e-30, 0.0));
    }

    #[test]
    fn atan2_of_real_arguments_is_real_atan2() {
        let r = atan2(z(1.0, 0.0), z(2.0, 0.0));
        assert!((r.re - 0.5f64.atan()).abs() < 1e-15 && r.im.abs() < 1e-15);
    }
}
