//! Branch-free f32 `exp`, `log` and `tanh` that vectorize (the C library's
//! versions are scalar calls), and SIMD dispatch for kernel loops.
//!
//! # Accuracy
//! * `exp`: Cody–Waite range reduction by ln 2 and a degree-7 polynomial
//!   (Cephes' `expf` coefficients); within 2 ulp over the whole range,
//!   overflow to +inf above 88.72, underflow to 0 below -103.97, NaN kept.
//! * `log`: exponent/mantissa split and Cephes' `logf` polynomial; within
//!   2 ulp, with log(0) = -inf, log(x<0) = NaN, log(inf) = inf, denormals
//!   handled.
//! * `tanh`: the odd rational approximation XLA's CPU backend uses (from
//!   Eigen), clamped at ±7.905; within a few ulp, ±1 beyond |x| = 9 (where
//!   f32 tanh rounds to ±1), `x` itself for |x| < 0.0004.
//!
//! XLA CPU evaluates these functions with approximations of the same kind, so
//! results stay within the corpus' transcendental tolerances (checked against
//! f64 references in the tests below).
//!
//! # Dispatch
//! [`multiversion!`] wraps a generic loop so it runs compiled for AVX2+FMA when
//! the processor has them (detected once), and for the baseline otherwise:
//! the hot loops of kernels vectorize 8-wide without building the crate for a
//! specific CPU.

/// `2^k` for integer `k` in [-126, 127], as float bits.
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// Rounds to the nearest integer (ties to even) for |x| < 2^22, without
/// SSE4.1's `roundps` (so it vectorizes on the baseline too).
#[inline(always)]
fn round_nearest(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23
    (x + MAGIC) - MAGIC
}

/// `e^x`.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const C1: f32 = 0.693_359_4;
    const C2: f32 = -2.121_944_4e-4;
    // Clamp so the scale factors below stay finite; NaN passes through.
    let xc = if x > 89.0 {
        89.0
    } else if x < -104.0 {
        -104.0
    } else {
        x
    };
    let n = round_nearest(xc * LOG2E);
    let r = xc - n * C1 - n * C2;
    let mut p = 1.987_569_1e-4_f32;
    p = p.mul_add(r, 1.398_199_9e-3);
    p = p.mul_add(r, 8.333_452e-3);
    p = p.mul_add(r, 4.166_579_6e-2);
    p = p.mul_add(r, 1.666_666_5e-1);
    p = p.mul_add(r, 5.000_000_1e-1);
    let e = (p * r).mul_add(r, r) + 1.0;
    // Scale by 2^n in two steps so n in [-150, 129] never overflows a step.
    let ni = n as i32;
    let half = ni >> 1;
    e * pow2i(half) * pow2i(ni - half)
}

/// Natural logarithm.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    const SQRTHF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    // Denormals: scale into the normal range first.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x }; // 2^23
    let bits = xs.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 126;
    if tiny {
        e -= 23;
    }
    // Mantissa in [0.5, 1).
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let small = m < SQRTHF;
    if small {
        e -= 1;
        m = m + m - 1.0;
    } else {
        m -= 1.0;
    }
    let z = m * m;
    let mut y = 7.037_683_6e-2_f32;
    y = y.mul_add(m, -1.151_461e-1);
    y = y.mul_add(m, 1.167_699_9e-1);
    y = y.mul_add(m, -1.242_014_1e-1);
    y = y.mul_add(m, 1.424_932_3e-1);
    y = y.mul_add(m, -1.666_805_8e-1);
    y = y.mul_add(m, 2.000_071_4e-1);
    y = y.mul_add(m, -2.499_999_4e-1);
    y = y.mul_add(m, 3.333_333_1e-1);
    y = y * m * z;
    let ef = e as f32;
    y = ef.mul_add(-2.121_944_4e-4, y);
    y = (-0.5f32).mul_add(z, y);
    let r = ef.mul_add(0.693_359_4, m + y);
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x < 0.0 || x.is_nan() {
        f32::NAN
    } else if x == f32::INFINITY {
        f32::INFINITY
    } else {
        r
    }
}

/// Hyperbolic tangent.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    const CLAMP: f32 = 7.905_311;
    let xc = if x > CLAMP {
        CLAMP
    } else if x < -CLAMP {
        -CLAMP
    } else {
        x
    };
    let x2 = xc * xc;
    let mut p = -2.760_768_5e-16_f32;
    p = p.mul_add(x2, 2.000_187_9e-13);
    p = p.mul_add(x2, -8.604_671_5e-11);
    p = p.mul_add(x2, 5.122_297e-8);
    p = p.mul_add(x2, 1.485_722_4e-5);
    p = p.mul_add(x2, 6.372_619e-4);
    p = p.mul_add(x2, 4.893_524_6e-3);
    p *= xc;
    let mut q = 1.198_258_4e-6_f32;
    q = q.mul_add(x2, 1.185_347_1e-4);
    q = q.mul_add(x2, 2.268_434_6e-3);
    q = q.mul_add(x2, 4.893_525_2e-3);
    if x.abs() < 0.0004 {
        x
    } else if x.abs() > 9.0 {
        // Where tanh rounds to ±1 in f32 (the rational form stops 2 ulp short).
        1.0f32.copysign(x)
    } else {
        p / q
    }
}

/// Whether AVX2 and FMA are available (checked once).
#[inline]
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Declares `$name`, which runs the generic `$body` function compiled for
/// AVX2+FMA when the processor has them and for the baseline otherwise. The
/// wrapper has the same signature as the body (an `unsafe fn`).
#[macro_export]
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident <$($g:ident $(: $b:path)?),*> ($($v:ident : $t:ty),* $(,)?) => $body:path) => {
        $crate::multiversion!($(#[$m])* $vis unsafe fn $name<$($g $(: $b)?),*>($($v: $t),*) -> () => $body);
    };
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident <$($g:ident $(: $b:path)?),*> ($($v:ident : $t:ty),* $(,)?) -> $ret:ty => $body:path) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($g $(: $b)?),*>($($v: $t),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx2<$($g $(: $b)?),*>($($v: $t),*) -> $ret {
                // SAFETY: forwarded from the wrapper's caller.
                unsafe { $body($($v),*) }
            }
            #[cfg(target_arch = "x86_64")]
            if $crate::kernels::fast_math::has_avx2_fma() {
                // SAFETY: the processor has AVX2 and FMA (checked above); the
                // rest is the caller's contract.
                return unsafe { avx2($($v),*) };
            }
            // SAFETY: the caller's contract.
            unsafe { $body($($v),*) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f64) -> f64 {
        let b32 = b as f32;
        if a == b32 {
            return 0.0;
        }
        let ulp = (b32.abs() * f32::EPSILON).max(f32::MIN_POSITIVE * f32::EPSILON) as f64;
        (a as f64 - b).abs() / ulp
    }

    #[test]
    fn exp_log_tanh_are_accurate_across_their_ranges() {
        let mut worst = [0f64; 3];
        let mut x = -100.0f32;
        while x < 88.0 {
            worst[0] = worst[0].max(ulps(exp_f32(x), (x as f64).exp()));
            worst[2] = worst[2].max(ulps(tanh_f32(x), (x as f64).tanh()).min(1e9) * if x.abs() < 10.0 { 1.0 } else { 0.0 });
            x += 0.0137;
        }
        let mut y = 1e-38f32;
        while y < 1e38 {
            worst[1] = worst[1].max(ulps(log_f32(y), (y as f64).ln()));
            y *= 1.0173;
        }
        assert!(worst[0] <= 2.0, "exp worst {} ulp", worst[0]);
        assert!(worst[1] <= 2.0, "log worst {} ulp", worst[1]);
        assert!(worst[2] <= 8.0, "tanh worst {} ulp", worst[2]);
    }

    #[test]
    fn special_values() {
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert!(log_f32(-1.0).is_nan());
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(log_f32(1.0), 0.0);
        assert!((log_f32(1e-40) as f64 - (1e-40f64).ln()).abs() < 1e-4);
        assert_eq!(tanh_f32(20.0), 1.0);
        assert_eq!(tanh_f32(-20.0), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(1e-5), 1e-5);
    }
}
