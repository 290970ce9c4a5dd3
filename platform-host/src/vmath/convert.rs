//! Element type conversions.
//!
//! [`convert()`] covers every pair of `pred` ([`Pred`]), integer, `f32` and
//! `f64` types with `platform_api::semantics::convert`'s element function (XLA's
//! rules: float → int truncates toward zero and saturates, NaN → 0; int → float
//! and narrowing float → float round to nearest-even; `pred` is `x != 0`),
//! compiled per level. The 16-bit float types travel as raw `u16` bits:
//! [`f16_to_f32`], [`f32_to_f16`], [`bf16_to_f32`], [`f32_to_bf16`] (nearest-even,
//! NaNs quieted keeping sign and top payload bits; `bf16 → f32` is a pure shift).
//! With F16C (the AVX2 and AVX-512 levels) the `f16` conversions use the
//! hardware instructions, whose results are the same bits.

use super::isa::dispatch;
use super::kernels::{length_error, map1};
use super::{level, Level};
pub use platform_api::semantics::convert::Pred;
use platform_api::semantics::convert::{self as sem, ConvertSource, ConvertTarget};
use platform_api::Result;

/// `dst[i] = src[i]` converted with XLA's rules, at the current level.
#[inline]
pub fn convert<S: ConvertSource + 'static, D: ConvertTarget + 'static>(
    src: &[S],
    dst: &mut [D],
) -> Result<()> {
    convert_at(level(), src, dst)
}

/// [`convert()`] at `level`.
pub fn convert_at<S: ConvertSource + 'static, D: ConvertTarget + 'static>(
    level: Level,
    src: &[S],
    dst: &mut [D],
) -> Result<()> {
    if src.len() != dst.len() {
        return Err(length_error("convert", src.len(), dst.len()));
    }
    if !float_to_int(level, src, dst) {
        dispatch!(level, I => map1(src, dst, sem::convert::<S, D>));
    }
    Ok(())
}

/// Float → integer element conversions LLVM vectorises: NaN → 0 and the
/// saturation are done as float clamps and blends around a truncating cast
/// that is then always in range (the generic path's saturating `as` does not
/// vectorise). Same results as `semantics::convert`.
macro_rules! float_to_int_fns {
    ($($name:ident: $F:ty => $I:ty, lo $lo:expr, hi $hi:expr;)*) => {$(
        #[inline(always)]
        fn $name(x: $F) -> $I {
            let v = if x.is_nan() { 0.0 } else { x };
            let v = if v < $lo { $lo } else { v };
            let big = v >= $hi;
            let v = if big { 0.0 } else { v };
            // SAFETY: `v` is finite and in [lo, hi), so its truncation is
            // representable in the target type.
            let r = unsafe { v.to_int_unchecked::<$I>() };
            if big { <$I>::MAX } else { r }
        }
    )*};
}
float_to_int_fns! {
    f32_i32: f32 => i32, lo -2_147_483_648.0, hi 2_147_483_648.0;
    f32_i64: f32 => i64, lo -9_223_372_036_854_775_808.0, hi 9_223_372_036_854_775_808.0;
    f32_u32: f32 => u32, lo 0.0, hi 4_294_967_296.0;
    f32_i8: f32 => i8, lo -128.0, hi 128.0;
    f32_u8: f32 => u8, lo 0.0, hi 256.0;
    f32_i16: f32 => i16, lo -32_768.0, hi 32_768.0;
    f32_u16: f32 => u16, lo 0.0, hi 65_536.0;
    f64_i32: f64 => i32, lo -2_147_483_648.0, hi 2_147_483_648.0;
    f64_i64: f64 => i64, lo -9_223_372_036_854_775_808.0, hi 9_223_372_036_854_775_808.0;
    f64_u32: f64 => u32, lo 0.0, hi 4_294_967_296.0;
    f64_u8: f64 => u8, lo 0.0, hi 256.0;
}

/// Runs the fast float → int loop when `(S, D)` is one of its pairs.
fn float_to_int<S: 'static, D: 'static>(level: Level, src: &[S], dst: &mut [D]) -> bool {
    use std::any::TypeId;
    macro_rules! pair {
        ($($s:ty => $d:ty: $f:ident),*) => {$(
            if TypeId::of::<S>() == TypeId::of::<$s>() && TypeId::of::<D>() == TypeId::of::<$d>() {
                // SAFETY: `S` is `$s` and `D` is `$d` (equal type ids), so this
                // views each slice as its own type.
                let (src, dst) = unsafe {
                    (
                        std::slice::from_raw_parts(src.as_ptr().cast::<$s>(), src.len()),
                        std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<$d>(), dst.len()),
                    )
                };
                dispatch!(level, I => map1(src, dst, $f));
                return true;
            }
        )*};
    }
    pair!(f32 => i32: f32_i32, f32 => i64: f32_i64, f32 => u32: f32_u32, f32 => i8: f32_i8,
          f32 => u8: f32_u8, f32 => i16: f32_i16, f32 => u16: f32_u16, f64 => i32: f64_i32,
          f64 => i64: f64_i64, f64 => u32: f64_u32, f64 => u8: f64_u8);
    false
}

/// `f16` bits → `f32`, without F16C.
#[inline(always)]
fn f16_to_f32_soft(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exponent = (h >> 10) & 0x1f;
    let mantissa = h & 0x3ff;
    let normal = f32::from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
    // Subnormals (and zero): mantissa * 2^-24, exact.
    let tiny = f32::from_bits(sign | (mantissa as f32 * 5.960_464_5e-8).to_bits());
    // Infinities and NaNs (quieted, payload kept).
    let special = f32::from_bits(
        sign | 0x7f80_0000 | (mantissa << 13) | if mantissa != 0 { 0x0040_0000 } else { 0 },
    );
    if exponent == 0x1f {
        special
    } else if exponent == 0 {
        tiny
    } else {
        normal
    }
}

/// `f32` → `f16` bits, nearest-even, without F16C.
#[inline(always)]
fn f32_to_f16_soft(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = (bits >> 16) & 0x8000;
    let a = bits & 0x7fff_ffff;
    // Normal results: re-bias the exponent, round the mantissa to 10 bits.
    let r = a.wrapping_sub(0x3800_0000);
    let normal = r.wrapping_add(0x0fff + ((r >> 13) & 1)) >> 13;
    // Subnormal results (and zero): adding 0.5 rounds |x| to a multiple of
    // 2^-24 (nearest-even), which is the f16 subnormal's integer mantissa; a
    // carry to 1024 is the smallest normal's bits.
    let tiny = (f32::from_bits(a) + 0.5)
        .to_bits()
        .wrapping_sub(0x3f00_0000);
    let magnitude = if a > 0x7f80_0000 {
        0x7e00 | ((a >> 13) & 0x3ff)
    } else if a >= 0x477f_f000 {
        0x7c00
    } else if a >= 0x3880_0000 {
        normal
    } else {
        tiny
    };
    (sign | magnitude) as u16
}

/// The whole chunks of 8 of [`f16_to_f32`] by `vcvtph2ps`; returns how many
/// elements it converted. Its own function with the features enabled: in
/// the level's closure, when LLVM did not inline the closure into the
/// trampoline, each intrinsic was a call (an f16 matrix-vector product spent
/// most of its time converting the matrix).
///
/// # Safety
/// The processor has AVX and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn f16_to_f32_f16c(src: &[u16], dst: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
        // SAFETY: the chunks hold exactly 8 elements, so the unaligned 16-
        // and 32-byte accesses stay inside them.
        unsafe {
            let h = _mm_loadu_si128(s.as_ptr().cast());
            _mm256_storeu_ps(d.as_mut_ptr(), _mm256_cvtph_ps(h));
        }
    }
    src.len().min(dst.len()) / 8 * 8
}

/// [`f16_to_f32_f16c`] the other way, nearest-even.
///
/// # Safety
/// The processor has AVX and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn f32_to_f16_f16c(src: &[f32], dst: &mut [u16]) -> usize {
    use std::arch::x86_64::*;
    for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(8)) {
        // SAFETY: as in `f16_to_f32_f16c`.
        unsafe {
            let v = _mm256_loadu_ps(s.as_ptr());
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
            _mm_storeu_si128(d.as_mut_ptr().cast(), h);
        }
    }
    src.len().min(dst.len()) / 8 * 8
}

/// `f16` (raw bits) → `f32`, exact.
#[inline]
pub fn f16_to_f32(src: &[u16], dst: &mut [f32]) -> Result<()> {
    f16_to_f32_at(level(), src, dst)
}

/// [`f16_to_f32`] at `level`.
pub fn f16_to_f32_at(level: Level, src: &[u16], dst: &mut [f32]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(length_error("f16 → f32", src.len(), dst.len()));
    }
    dispatch!(level, I => {
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if I::F16C {
            // SAFETY: `I::F16C` is true only in the AVX2/AVX-512
            // instantiations, which run where F16C and AVX exist.
            done = unsafe { f16_to_f32_f16c(src, dst) };
        }
        map1(&src[done..], &mut dst[done..], f16_to_f32_soft);
    });
    Ok(())
}

/// `f32` → `f16` (raw bits), nearest-even.
#[inline]
pub fn f32_to_f16(src: &[f32], dst: &mut [u16]) -> Result<()> {
    f32_to_f16_at(level(), src, dst)
}

/// [`f32_to_f16`] at `level`.
pub fn f32_to_f16_at(level: Level, src: &[f32], dst: &mut [u16]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(length_error("f32 → f16", src.len(), dst.len()));
    }
    dispatch!(level, I => {
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if I::F16C {
            // SAFETY: as in `f16_to_f32_at`.
            done = unsafe { f32_to_f16_f16c(src, dst) };
        }
        map1(&src[done..], &mut dst[done..], f32_to_f16_soft);
    });
    Ok(())
}

/// `bf16` (raw bits) → `f32`: a shift (NaNs keep their bits).
#[inline]
pub fn bf16_to_f32(src: &[u16], dst: &mut [f32]) -> Result<()> {
    bf16_to_f32_at(level(), src, dst)
}

/// [`bf16_to_f32`] at `level`.
pub fn bf16_to_f32_at(level: Level, src: &[u16], dst: &mut [f32]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(length_error("bf16 → f32", src.len(), dst.len()));
    }
    dispatch!(level, I => map1(src, dst, |h| f32::from_bits((h as u32) << 16)));
    Ok(())
}

/// `f32` → `bf16` (raw bits), nearest-even.
#[inline]
pub fn f32_to_bf16(src: &[f32], dst: &mut [u16]) -> Result<()> {
    f32_to_bf16_at(level(), src, dst)
}

/// [`f32_to_bf16`] at `level`.
pub fn f32_to_bf16_at(level: Level, src: &[f32], dst: &mut [u16]) -> Result<()> {
    if src.len() != dst.len() {
        return Err(length_error("f32 → bf16", src.len(), dst.len()));
    }
    dispatch!(level, I => map1(src, dst, |x| sem::bf16_from_f32(x).to_bits()));
    Ok(())
}

/// The ends of the interval of `f32` values within `ulps` units in the last
/// place of each value, on its side of zero: `values` becomes the ends
/// nearer zero, `upper` the ends farther (capped at infinity). A NaN's ends
/// are itself and the infinity of its sign, which no rounding takes alike.
/// Rounding both ends to a narrower type tells whether every value in
/// between rounds alike.
pub fn ulp_bounds(values: &mut [f32], ulps: u32, upper: &mut [f32]) -> Result<()> {
    ulp_bounds_at(level(), values, ulps, upper)
}

/// [`ulp_bounds`] at `level`.
pub fn ulp_bounds_at(level: Level, values: &mut [f32], ulps: u32, upper: &mut [f32]) -> Result<()> {
    if values.len() != upper.len() {
        return Err(length_error("ulp bounds", values.len(), upper.len()));
    }
    const SIGN: u32 = 0x8000_0000;
    const INF: u32 = 0x7f80_0000;
    dispatch!(level, I => {
        for (lo, hi) in values.iter_mut().zip(upper.iter_mut()) {
            let bits = lo.to_bits();
            let (sign, magnitude) = (bits & SIGN, bits & !SIGN);
            let nan = magnitude > INF;
            let below = if nan { magnitude } else { magnitude.saturating_sub(ulps) };
            let above = if nan { INF } else { magnitude.saturating_add(ulps).min(INF) };
            *lo = f32::from_bits(sign | below);
            *hi = f32::from_bits(sign | above);
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_f16_matches_the_semantics_on_every_f16_and_on_rounding_cases() {
        for h in 0..=u16::MAX {
            let x = f16_to_f32_soft(h);
            let mut want = [0f32; 1];
            let lit = platform_api::Literal::from_bytes(
                platform_api::Shape::Array(platform_api::ArrayShape::new(
                    platform_api::ElementType::F16,
                    vec![1],
                )),
                &h.to_le_bytes(),
            )
            .unwrap();
            let conv =
                platform_api::semantics::convert(&lit, platform_api::ElementType::F32).unwrap();
            want.copy_from_slice(conv.data::<f32>().unwrap());
            assert_eq!(x.to_bits(), want[0].to_bits(), "f16 bits {h:#06x}");
            // Round trip, and the neighbours' midpoints.
            assert_eq!(f32_to_f16_soft(x), sem::f16_from_f32(x).to_bits(), "{x:e}");
            for delta in [-1i32, 1, 0x0fff, 0x1000, 0x1001, -0x1000] {
                let y = f32::from_bits(x.to_bits().wrapping_add_signed(delta));
                assert_eq!(
                    f32_to_f16_soft(y),
                    sem::f16_from_f32(y).to_bits(),
                    "{y:e} ({:#x})",
                    y.to_bits()
                );
            }
        }
    }
}
