//! [`Real`]: the two machine floating-point types (`f32`, `f64`) in which every
//! floating-point and complex HLO op is evaluated.
//!
//! `f16` and `bf16` have no arithmetic of their own here: like XLA CPU they are
//! widened to `f32`, computed, and rounded back once (see
//! [`super::float::FloatSemantics`]). So the math library only has to exist for
//! `f32` and `f64`, and this trait is that library.
//!
//! The transcendental functions come from the platform's C math library (through
//! `std`, and `erf`/`erff` declared here), which is within an ULP or two of
//! correctly rounded. XLA CPU uses its own approximations for some of them, so the
//! two can differ by a few ULP in the middle of the range; the special values
//! (±0, ±inf, NaN, overflow and underflow thresholds) agree, and
//! `tests/semantics_xla.rs` checks both against XLA's output.

use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

mod libm {
    // `std` already links the C math library on every supported target; `erf`
    // is part of C99 but has no `std` wrapper on stable Rust.
    extern "C" {
        pub fn erf(x: f64) -> f64;
        pub fn erff(x: f32) -> f32;
    }
}

/// A machine float type with the math XLA's elementwise ops need.
///
/// Contract: every method is the IEEE-754 / C99 function of the same name, with
/// C99's special-value rules (e.g. `powf(1, NaN) = 1`, `atan2(±0, -0) = ±pi`), in
/// round-to-nearest-even, without flushing denormals.
pub trait Real:
    Copy
    + PartialOrd
    + PartialEq
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const TWO: Self;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    const NAN: Self;

    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;

    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs(self) -> Self;
    fn copysign(self, sign: Self) -> Self;

    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// Round half away from zero.
    fn round(self) -> Self;
    /// Round half to even.
    fn round_ties_even(self) -> Self;

    fn sqrt(self) -> Self;
    fn cbrt(self) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn atan2(self, x: Self) -> Self;
    fn powf(self, y: Self) -> Self;
    fn erf(self) -> Self;

    /// IEEE-754 (2019) `maximum`: NaN if either is NaN, and `-0 < +0`.
    #[inline]
    fn maximum(self, other: Self) -> Self {
        if self.is_nan() {
            self
        } else if other.is_nan() {
            other
        } else if self > other {
            self
        } else if other > self {
            other
        } else if self.is_sign_negative() {
            // Equal values: only ±0 can differ, and +0 is the larger.
            other
        } else {
            self
        }
    }

    /// IEEE-754 (2019) `minimum`: NaN if either is NaN, and `-0 < +0`.
    #[inline]
    fn minimum(self, other: Self) -> Self {
        if self.is_nan() {
            self
        } else if other.is_nan() {
            other
        } else if self < other {
            self
        } else if other < self {
            other
        } else if self.is_sign_negative() {
            self
        } else {
            other
        }
    }
}

macro_rules! real_impl {
    ($t:ty, $erf:ident) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const TWO: Self = 2.0;
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const NAN: Self = <$t>::NAN;

            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            #[inline]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline]
            fn round(self) -> Self {
                <$t>::round(self)
            }
            #[inline]
            fn round_ties_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn cbrt(self) -> Self {
                <$t>::cbrt(self)
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline]
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline]
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            #[inline]
            fn powf(self, y: Self) -> Self {
                <$t>::powf(self, y)
            }
            #[inline]
            fn erf(self) -> Self {
                // SAFETY: `erf`/`erff` are pure C99 math functions taking and
                // returning a plain float; every input (NaN and infinities included)
                // is valid.
                unsafe { libm::$erf(self) }
            }
        }
    };
}

real_impl!(f32, erff);
real_impl!(f64, erf);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maximum_and_minimum_order_signed_zeros_and_propagate_nan() {
        assert!(Real::maximum(-0.0f32, 0.0).is_sign_positive());
        assert!(Real::maximum(0.0f32, -0.0).is_sign_positive());
        assert!(Real::minimum(0.0f64, -0.0).is_sign_negative());
        assert!(Real::minimum(-0.0f64, 0.0).is_sign_negative());
        assert!(Real::maximum(f32::NAN, 1.0).is_nan());
        assert!(Real::maximum(1.0, f32::NAN).is_nan());
        assert!(Real::minimum(f64::NEG_INFINITY, f64::NAN).is_nan());
        assert_eq!(Real::maximum(2.0f32, 3.0), 3.0);
        assert_eq!(Real::minimum(2.0f32, 3.0), 2.0);
    }

    #[test]
    fn erf_reaches_the_c_library() {
        assert_eq!(Real::erf(0.0f64), 0.0);
        assert!(Real::erf(-0.0f32).is_sign_negative());
        assert_eq!(Real::erf(f64::INFINITY), 1.0);
        assert_eq!(Real::erf(f32::NEG_INFINITY), -1.0);
        assert!(Real::erf(f32::NAN).is_nan());
        // erf(1) = 0.8427007929497149 (Abramowitz & Stegun table 7.1).
        assert!((Real::erf(1.0f64) - 0.842_700_792_949_714_9).abs() < 1e-15);
    }
}
