//! `convert`: element type conversions exactly as XLA CPU performs them.
//!
//! Every source type describes its value as a [`Repr`] (an exact integer, an `f32`
//! or `f64` value, or a complex pair) and every target type builds itself from a
//! [`Repr`]. Both sides are `#[inline]`, so for a concrete source/target pair the
//! match on [`Repr`] folds away and a conversion loop is straight-line code.
//!
//! The rules (each checked against XLA CPU by `tests/semantics_xla.rs`):
//! * integer → integer: two's-complement truncation or sign/zero extension by the
//!   *source's* signedness;
//! * integer → float: round to nearest-even; `bf16` goes through `f32` first (XLA
//!   converts to `f32` and then rounds again, so a value halfway between two `bf16`
//!   after the first rounding goes to even);
//! * float → integer: truncation toward zero, saturating at the target's range;
//!   NaN → 0 (for unsigned targets everything `<= 0` → 0);
//! * float → float: round to nearest-even; `f64 → f16` rounds once, directly;
//!   `f64 → bf16` rounds to `f32` first (as XLA does); NaN stays NaN of the same
//!   sign, quieted, keeping the top payload bits except into `bf16`, where XLA CPU
//!   drops the payload;
//! * anything → `pred`: `x != 0` (NaN → true); `pred` → anything: 0 or 1;
//! * real → complex: `(x, 0)`; complex → complex: each part converted;
//! * complex → real or integer or `pred`: the real part, then the rules above. HLO's
//!   own `convert` rejects this (XLA's shape inference says unimplemented), but
//!   StableHLO defines it this way and XLA lowers it to `real` + `convert`.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// One element's value, in a form every conversion can start from without loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Repr {
    /// Any integer or `pred` (0/1), exactly.
    Int(i128),
    /// `f16`, `bf16`, `f32`: exact in `f32` (NaN payloads included for `bf16`).
    F32(f32),
    F64(f64),
    C64(f32, f32),
    C128(f64, f64),
}

/// A type that can be converted from ([`Repr`] of its value).
pub trait ConvertSource: Copy {
    fn to_repr(self) -> Repr;
}

/// A type that can be converted to.
pub trait ConvertTarget: Copy {
    fn from_repr(repr: Repr) -> Self;
}

/// `pred` as a distinct Rust type, one byte holding 0 or 1, so conversions to and
/// from `pred` (which shares `u8`'s storage) can be monomorphised separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Pred(pub u8);

/// Converts one element with XLA's rules.
#[inline]
pub fn convert<F: ConvertSource, T: ConvertTarget>(x: F) -> T {
    T::from_repr(x.to_repr())
}

// ---- Bit-exact narrowing helpers shared with the float semantics ----

/// `f32 → f16`, round to nearest-even; NaN quieted with the top payload bits.
#[inline]
pub fn f16_from_f32(x: f32) -> f16 {
    // `half` rounds to nearest-even (hardware F16C when present, else software)
    // and maps NaN to sign | 0x7e00 | payload >> 13, exactly XLA's result.
    f16::from_f32(x)
}

/// `f32 → bf16`, round to nearest-even; NaN becomes the quiet NaN of the same
/// sign (XLA CPU drops the payload).
#[inline]
pub fn bf16_from_f32(x: f32) -> bf16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return bf16::from_bits(((bits >> 16) as u16 & 0x8000) | 0x7fc0);
    }
    let lsb = (bits >> 16) & 1;
    bf16::from_bits((bits.wrapping_add(0x7fff + lsb) >> 16) as u16)
}

/// `f64 → f16` rounded once to nearest-even (unlike `half::f16::from_f64`, which
/// may round twice).
#[inline]
pub fn f16_from_f64(x: f64) -> f16 {
    // Round to f32 with "round to odd" (truncate, then set the last bit if anything
    // was lost). f32 keeps more than two extra bits beyond f16 at every magnitude
    // where f16 is nonzero, so the second rounding, to f16, is then exact RNE.
    if !x.is_finite() {
        return f16_from_f32(x as f32);
    }
    let nearest = x as f32;
    if nearest as f64 == x {
        return f16_from_f32(nearest);
    }
    let toward_zero = if (nearest as f64).abs() > x.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f16_from_f32(f32::from_bits(toward_zero.to_bits() | 1))
}

/// `f64 → bf16` as XLA does it: to `f32` (nearest-even), then to `bf16`.
#[inline]
pub fn bf16_from_f64(x: f64) -> bf16 {
    bf16_from_f32(x as f32)
}

// ---- Sources ----

macro_rules! int_source {
    ($($t:ty),*) => {$(
        impl ConvertSource for $t {
            #[inline]
            fn to_repr(self) -> Repr {
                Repr::Int(self as i128)
            }
        }
    )*};
}
int_source!(i8, i16, i32, i64, u8, u16, u32, u64);

impl ConvertSource for Pred {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::Int((self.0 != 0) as i128)
    }
}

impl ConvertSource for f16 {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::F32(self.to_f32())
    }
}

impl ConvertSource for bf16 {
    #[inline]
    fn to_repr(self) -> Repr {
        // A pure shift, as XLA does: even a signalling NaN stays signalling.
        Repr::F32(f32::from_bits((self.to_bits() as u32) << 16))
    }
}

impl ConvertSource for f32 {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::F32(self)
    }
}

impl ConvertSource for f64 {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::F64(self)
    }
}

impl ConvertSource for Complex32 {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::C64(self.re, self.im)
    }
}

impl ConvertSource for Complex64 {
    #[inline]
    fn to_repr(self) -> Repr {
        Repr::C128(self.re, self.im)
    }
}

/// The real value a non-complex target converts from: complex sources give their
/// real part.
#[derive(Clone, Copy)]
enum RealRepr {
    Int(i128),
    F32(f32),
    F64(f64),
}

#[inline]
fn real_part(repr: Repr) -> RealRepr {
    match repr {
        Repr::Int(v) => RealRepr::Int(v),
        Repr::F32(v) | Repr::C64(v, _) => RealRepr::F32(v),
        Repr::F64(v) | Repr::C128(v, _) => RealRepr::F64(v),
    }
}

// ---- Targets ----

macro_rules! int_target {
    ($($t:ty),*) => {$(
        impl ConvertTarget for $t {
            #[inline]
            fn from_repr(repr: Repr) -> Self {
                match real_part(repr) {
                    // Truncation of the exact value = XLA's sign/zero extension
                    // followed by truncation.
                    RealRepr::Int(v) => v as $t,
                    // Rust's float → int `as` truncates toward zero, saturates and
                    // maps NaN to 0: XLA's rule.
                    RealRepr::F32(v) => v as $t,
                    RealRepr::F64(v) => v as $t,
                }
            }
        }
    )*};
}
int_target!(i8, i16, i32, i64, u8, u16, u32, u64);

impl ConvertTarget for Pred {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        Pred(match real_part(repr) {
            RealRepr::Int(v) => (v != 0) as u8,
            // `!=` is true for NaN.
            RealRepr::F32(v) => (v != 0.0) as u8,
            RealRepr::F64(v) => (v != 0.0) as u8,
        })
    }
}

impl ConvertTarget for f32 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match real_part(repr) {
            RealRepr::Int(v) => v as f32,
            RealRepr::F32(v) => v,
            RealRepr::F64(v) => v as f32,
        }
    }
}

impl ConvertTarget for f64 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match real_part(repr) {
            RealRepr::Int(v) => v as f64,
            RealRepr::F32(v) => v as f64,
            RealRepr::F64(v) => v,
        }
    }
}

impl ConvertTarget for f16 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match real_part(repr) {
            // Exact in f32 whenever the f16 result is finite, so one rounding.
            RealRepr::Int(v) => f16_from_f32(v as f32),
            RealRepr::F32(v) => f16_from_f32(v),
            RealRepr::F64(v) => f16_from_f64(v),
        }
    }
}

impl ConvertTarget for bf16 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match real_part(repr) {
            RealRepr::Int(v) => bf16_from_f32(v as f32),
            RealRepr::F32(v) => bf16_from_f32(v),
            RealRepr::F64(v) => bf16_from_f64(v),
        }
    }
}

impl ConvertTarget for Complex32 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match repr {
            Repr::C64(re, im) => Complex32::new(re, im),
            Repr::C128(re, im) => Complex32::new(re as f32, im as f32),
            other => Complex32::new(f32::from_repr(other), 0.0),
        }
    }
}

impl ConvertTarget for Complex64 {
    #[inline]
    fn from_repr(repr: Repr) -> Self {
        match repr {
            Repr::C64(re, im) => Complex64::new(re as f64, im as f64),
            Repr::C128(re, im) => Complex64::new(re, im),
            other => Complex64::new(f64::from_repr(other), 0.0),
        }
    }
}

/// Converts a slice element by element into `out` (same length).
#[inline]
pub fn convert_slice<F: ConvertSource, T: ConvertTarget>(src: &[F], out: &mut [T]) {
    for (o, &x) in out.iter_mut().zip(src) {
        *o = convert(x);
    }
}

impl Pred {
    /// Reinterprets a `pred` byte slice.
    pub fn from_bytes(bytes: &[u8]) -> &[Pred] {
        bytemuck::cast_slice(bytes)
    }
    /// Reinterprets a mutable `pred` byte slice.
    pub fn from_bytes_mut(bytes: &mut [u8]) -> &mut [Pred] {
        bytemuck::cast_slice_mut(bytes)
    }
}

// ---- Narrow types (one element per byte; see `hlo_ir::narrow`) ----

/// The [`Repr`] of a narrow element's storage byte.
#[inline]
pub fn narrow_to_repr(ty: hlo_ir::ElementType, bits: u8) -> Repr {
    if ty.is_integer() {
        Repr::Int(i128::from(hlo_ir::narrow::int_value(ty, bits)))
    } else {
        // Every narrow float is exact in f32 (f8e8m0fnu's 2^-127 as a subnormal).
        Repr::F32(hlo_ir::narrow::decode(ty, bits) as f32)
    }
}

/// A narrow element's storage byte from a [`Repr`], by XLA's rules: integers
/// wrap to the width, floats truncate and saturate into integers (NaN → 0) and
/// round to nearest-even into floats (once, from the exact value), complex
/// values give their real part, `pred` is 0 or 1.
#[inline]
pub fn narrow_from_repr(ty: hlo_ir::ElementType, repr: Repr) -> u8 {
    use hlo_ir::narrow;
    let real = match repr {
        Repr::Int(i) if ty.is_integer() => return narrow::int_bits(ty, i),
        // XLA CPU sends an f64 below 2^-127 to f8e8m0fnu's NaN (an f32 there is
        // subnormal and goes to 2^-127 instead; checked in tests/narrow).
        Repr::F64(x) | Repr::C128(x, _)
            if ty == hlo_ir::ElementType::F8E8M0FNU
                && x.abs() < f64::from(f32::MIN_POSITIVE) / 2.0 =>
        {
            return 0xff
        }
        Repr::Int(i) => i as f64,
        Repr::F32(x) | Repr::C64(x, _) => f64::from(x),
        Repr::F64(x) | Repr::C128(x, _) => x,
    };
    narrow::encode(ty, real)
}

/// `convert` of row-major element bytes where `from` or `to` (or both) is a
/// narrow type: element by element through [`Repr`].
pub fn convert_narrow(
    from: hlo_ir::ElementType,
    input: &[u8],
    to: hlo_ir::ElementType,
    output: &mut [u8],
) -> hlo_ir::Result<()> {
    let (fs, ts) = (from.byte_size(), to.byte_size());
    let n = output.len() / ts;
    let source = |i: usize| -> Repr {
        let b = &input[i * fs..(i + 1) * fs];
        if from.is_narrow() {
            return narrow_to_repr(from, b[0]);
        }
        crate::with_any_type!(from, S => bytemuck::pod_read_unaligned::<S>(b).to_repr())
    };
    for i in 0..n {
        let repr = source(i);
        let out = &mut output[i * ts..(i + 1) * ts];
        if to.is_narrow() {
            out[0] = narrow_from_repr(to, repr);
        } else {
            crate::with_any_type!(to, D => out.copy_from_slice(bytemuck::bytes_of(&D::from_repr(repr))));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        assert_eq!(convert::<f32, i32>(f32::NAN), 0);
        assert_eq!(convert::<f32, i32>(3e9), i32::MAX);
        assert_eq!(convert::<f32, i32>(-3e9), i32::MIN);
        assert_eq!(convert::<f32, i32>(-2.7), -2);
        assert_eq!(convert::<f32, u32>(-2.7), 0);
        assert_eq!(convert::<f64, u64>(f64::INFINITY), u64::MAX);
        assert_eq!(convert::<f16, i8>(f16::INFINITY), 127);
        assert_eq!(convert::<bf16, i64>(bf16::NEG_INFINITY), i64::MIN);
    }

    #[test]
    fn int_to_int_truncates_or_extends_by_source_signedness() {
        assert_eq!(convert::<i8, u32>(-1), u32::MAX);
        assert_eq!(convert::<u8, i32>(255), 255);
        assert_eq!(convert::<i32, i8>(300), 44);
        assert_eq!(convert::<u64, i64>(u64::MAX), -1);
    }

    #[test]
    fn pred_conversions() {
        assert_eq!(convert::<f32, Pred>(f32::NAN), Pred(1));
        assert_eq!(convert::<f32, Pred>(-0.0), Pred(0));
        assert_eq!(convert::<i32, Pred>(256), Pred(1));
        assert_eq!(convert::<Pred, f32>(Pred(1)), 1.0);
        assert_eq!(
            convert::<Pred, Complex32>(Pred(1)),
            Complex32::new(1.0, 0.0)
        );
        assert_eq!(
            convert::<Complex32, Pred>(Complex32::new(0.0, 1.0)),
            Pred(0)
        );
    }

    #[test]
    fn narrowing_float_rounding_matches_xla() {
        // f64 → bf16 rounds to f32 first: 1 + 2^-8 + 2^-40 becomes the tie
        // 1 + 2^-8, which goes to even (1.0), though the exact value is nearer 1 + 2^-7.
        assert_eq!(
            bf16_from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-40)).to_f32(),
            1.0
        );
        // f64 → f16 rounds once: the same shape of value goes up.
        let up = f16_from_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-40));
        assert_eq!(up.to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)).to_f64(), 1.0);
        assert_eq!(f16_from_f64(65519.99).to_f64(), 65504.0);
        assert!(f16_from_f64(65520.0).is_infinite());
        assert_eq!(f16_from_f64(-1e-300).to_bits(), 0x8000);
        assert_eq!(f16_from_f64(3e-8).to_bits(), 0x0001);
        // int → bf16 goes through f32: 2^24 + 2^16 + 1 → 2^24 + 2^16 (f32) → 2^24.
        assert_eq!(
            convert::<i64, bf16>((1 << 24) + (1 << 16) + 1).to_f32(),
            16777216.0
        );
    }

    #[test]
    fn nan_conversions_keep_sign_and_quiet() {
        let snan = f32::from_bits(0x7f80_0001);
        assert_eq!(bf16_from_f32(snan).to_bits(), 0x7fc0);
        assert_eq!(bf16_from_f32(f32::from_bits(0xff80_0001)).to_bits(), 0xffc0);
        assert_eq!(bf16_from_f32(f32::from_bits(0x7fc1_2345)).to_bits(), 0x7fc0);
        assert_eq!(f16_from_f32(snan).to_bits(), 0x7e00);
        assert_eq!(f16_from_f32(f32::from_bits(0xffc1_2345)).to_bits(), 0xfe09);
        // bf16 → f32 is a shift: a signalling NaN stays signalling.
        let f: f32 = convert(bf16::from_bits(0x7f81));
        assert_eq!(f.to_bits(), 0x7f81_0000);
    }

    #[test]
    fn complex_conversions() {
        let z = Complex64::new(1.5, -2.25);
        assert_eq!(
            convert::<Complex64, Complex32>(z),
            Complex32::new(1.5, -2.25)
        );
        assert_eq!(convert::<Complex64, f32>(z), 1.5);
        assert_eq!(convert::<Complex32, i32>(Complex32::new(-2.7, 9.0)), -2);
        assert_eq!(convert::<i32, Complex64>(-3), Complex64::new(-3.0, 0.0));
    }
}
