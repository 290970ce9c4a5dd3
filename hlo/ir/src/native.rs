//! Rust types that hold one element of an [`ElementType`], and a dynamically typed
//! scalar ([`Scalar`]) for code that works on any type.

use crate::shape::ElementType;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::fmt;

/// A Rust type whose values are the elements of one (or more) element types.
///
/// `u8` also serves `pred`, which is stored as one byte holding 0 or 1.
pub trait NativeType:
    bytemuck::Pod + Copy + Send + Sync + PartialEq + fmt::Debug + 'static
{
    /// The element type this Rust type stands for.
    const TYPE: ElementType;
    /// Whether a buffer of `ty` may be viewed as a slice of `Self`.
    fn can_view(ty: ElementType) -> bool {
        ty == Self::TYPE
    }
    fn to_scalar(self) -> Scalar;
}

macro_rules! native {
    ($t:ty, $et:ident) => {
        impl NativeType for $t {
            const TYPE: ElementType = ElementType::$et;
            fn to_scalar(self) -> Scalar {
                Scalar::$et(self)
            }
        }
    };
}
native!(i8, S8);
native!(i16, S16);
native!(i32, S32);
native!(i64, S64);
native!(u16, U16);
native!(u32, U32);
native!(u64, U64);
native!(f16, F16);
native!(bf16, BF16);
native!(f32, F32);
native!(f64, F64);
native!(Complex32, C64);
native!(Complex64, C128);

impl NativeType for u8 {
    const TYPE: ElementType = ElementType::U8;
    fn can_view(ty: ElementType) -> bool {
        matches!(ty, ElementType::U8 | ElementType::Pred)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::U8(self)
    }
}

/// One element of any type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Pred(bool),
    S8(i8),
    S16(i16),
    S32(i32),
    S64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
    C64(Complex32),
    C128(Complex64),
}

impl Scalar {
    pub fn element_type(&self) -> ElementType {
        match self {
            Scalar::Pred(_) => ElementType::Pred,
            Scalar::S8(_) => ElementType::S8,
            Scalar::S16(_) => ElementType::S16,
            Scalar::S32(_) => ElementType::S32,
            Scalar::S64(_) => ElementType::S64,
            Scalar::U8(_) => ElementType::U8,
            Scalar::U16(_) => ElementType::U16,
            Scalar::U32(_) => ElementType::U32,
            Scalar::U64(_) => ElementType::U64,
            Scalar::F16(_) => ElementType::F16,
            Scalar::BF16(_) => ElementType::BF16,
            Scalar::F32(_) => ElementType::F32,
            Scalar::F64(_) => ElementType::F64,
            Scalar::C64(_) => ElementType::C64,
            Scalar::C128(_) => ElementType::C128,
        }
    }

    /// The zero of a type (`false` for pred).
    pub fn zero(ty: ElementType) -> Scalar {
        Scalar::from_bytes(ty, &[0u8; 16][..ty.byte_size()])
    }

    /// Reads one element from its little-endian bytes (`bytes.len()` must be the
    /// type's byte size; a pred byte other than 0 reads as true). A narrow type's
    /// element reads as its value in [`ElementType::wide_type`] (`s8`, `u8`, `f32`).
    pub fn from_bytes(ty: ElementType, bytes: &[u8]) -> Scalar {
        fn rd<T: bytemuck::Pod>(b: &[u8]) -> T {
            bytemuck::pod_read_unaligned(b)
        }
        match ty {
            ElementType::Pred => Scalar::Pred(bytes[0] != 0),
            ElementType::S8 => Scalar::S8(rd(bytes)),
            ElementType::S16 => Scalar::S16(rd(bytes)),
            ElementType::S32 => Scalar::S32(rd(bytes)),
            ElementType::S64 => Scalar::S64(rd(bytes)),
            ElementType::U8 => Scalar::U8(rd(bytes)),
            ElementType::U16 => Scalar::U16(rd(bytes)),
            ElementType::U32 => Scalar::U32(rd(bytes)),
            ElementType::U64 => Scalar::U64(rd(bytes)),
            ElementType::F16 => Scalar::F16(rd(bytes)),
            ElementType::BF16 => Scalar::BF16(rd(bytes)),
            ElementType::F32 => Scalar::F32(rd(bytes)),
            ElementType::F64 => Scalar::F64(rd(bytes)),
            ElementType::C64 => Scalar::C64(rd(bytes)),
            ElementType::C128 => Scalar::C128(rd(bytes)),
            // A narrow element reads as its value in its wide type (exact).
            t if t.is_integer() && t.is_signed_int() => {
                Scalar::S8(crate::narrow::int_value(t, bytes[0]) as i8)
            }
            t if t.is_integer() => Scalar::U8(crate::narrow::int_value(t, bytes[0]) as u8),
            t => Scalar::F32(crate::narrow::decode(t, bytes[0]) as f32),
        }
    }

    /// Writes the element's little-endian bytes into `out` (of the type's byte size).
    pub fn write_bytes(&self, out: &mut [u8]) {
        fn wr<T: bytemuck::Pod>(v: T, out: &mut [u8]) {
            out.copy_from_slice(bytemuck::bytes_of(&v));
        }
        match *self {
            Scalar::Pred(v) => out[0] = v as u8,
            Scalar::S8(v) => wr(v, out),
            Scalar::S16(v) => wr(v, out),
            Scalar::S32(v) => wr(v, out),
            Scalar::S64(v) => wr(v, out),
            Scalar::U8(v) => wr(v, out),
            Scalar::U16(v) => wr(v, out),
            Scalar::U32(v) => wr(v, out),
            Scalar::U64(v) => wr(v, out),
            Scalar::F16(v) => wr(v, out),
            Scalar::BF16(v) => wr(v, out),
            Scalar::F32(v) => wr(v, out),
            Scalar::F64(v) => wr(v, out),
            Scalar::C64(v) => wr(v, out),
            Scalar::C128(v) => wr(v, out),
        }
    }

    /// The value as f64 (real part of complex, 0/1 for pred). Lossy for 64-bit ints;
    /// meant for comparisons and reporting, not for semantics.
    pub fn to_f64_lossy(&self) -> f64 {
        match *self {
            Scalar::Pred(v) => v as u8 as f64,
            Scalar::S8(v) => v as f64,
            Scalar::S16(v) => v as f64,
            Scalar::S32(v) => v as f64,
            Scalar::S64(v) => v as f64,
            Scalar::U8(v) => v as f64,
            Scalar::U16(v) => v as f64,
            Scalar::U32(v) => v as f64,
            Scalar::U64(v) => v as f64,
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
            Scalar::C64(v) => v.re as f64,
            Scalar::C128(v) => v.re,
        }
    }

    /// The value as i64 if it is an integer or pred (u64 above i64::MAX wraps).
    pub fn to_i64(&self) -> Option<i64> {
        Some(match *self {
            Scalar::Pred(v) => v as i64,
            Scalar::S8(v) => v as i64,
            Scalar::S16(v) => v as i64,
            Scalar::S32(v) => v as i64,
            Scalar::S64(v) => v,
            Scalar::U8(v) => v as i64,
            Scalar::U16(v) => v as i64,
            Scalar::U32(v) => v as i64,
            Scalar::U64(v) => v as i64,
            _ => return None,
        })
    }
}

/// The payload (mantissa bits) of a NaN with these bits, or `None` when it is the
/// plain quiet NaN (only the top mantissa bit set), which prints as `nan`.
fn nan_payload(bits: u64, mantissa_bits: u32) -> Option<u64> {
    let payload = bits & ((1u64 << mantissa_bits) - 1);
    (payload != 1u64 << (mantissa_bits - 1)).then_some(payload)
}

/// Writes a float the way HLO text spells it, as XLA does: shortest round-trip
/// digits, `inf`, `-inf`, `nan`, `-nan`, `nan(0x1)` for a NaN with another payload
/// than the quiet bit (`payload` is [`nan_payload`] of the value's bits); very
/// small and very large magnitudes in exponent form (`5e-324`,
/// `1.7976931348623157e308`) rather than hundreds of zeros.
pub(crate) fn fmt_float(
    f: &mut fmt::Formatter<'_>,
    v: f64,
    shortest: impl fmt::Display + fmt::LowerExp,
    payload: Option<u64>,
) -> fmt::Result {
    if v.is_nan() {
        if v.is_sign_negative() {
            f.write_str("-")?;
        }
        match payload {
            Some(p) => write!(f, "nan(0x{p:x})"),
            None => f.write_str("nan"),
        }
    } else if v.is_infinite() {
        f.write_str(if v > 0.0 { "inf" } else { "-inf" })
    } else if v != 0.0 && !(1e-5..1e16).contains(&v.abs()) {
        write!(f, "{shortest:e}")
    } else {
        write!(f, "{shortest}")
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Pred(v) => f.write_str(if v { "true" } else { "false" }),
            Scalar::S8(v) => write!(f, "{v}"),
            Scalar::S16(v) => write!(f, "{v}"),
            Scalar::S32(v) => write!(f, "{v}"),
            Scalar::S64(v) => write!(f, "{v}"),
            Scalar::U8(v) => write!(f, "{v}"),
            Scalar::U16(v) => write!(f, "{v}"),
            Scalar::U32(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
            Scalar::F16(v) => fmt_float(f, v.to_f64(), v, nan_payload(v.to_bits().into(), 10)),
            Scalar::BF16(v) => fmt_float(f, v.to_f64(), v, nan_payload(v.to_bits().into(), 7)),
            Scalar::F32(v) => fmt_float(f, v as f64, v, nan_payload(v.to_bits().into(), 23)),
            Scalar::F64(v) => fmt_float(f, v, v, nan_payload(v.to_bits(), 52)),
            Scalar::C64(v) => {
                f.write_str("(")?;
                fmt_float(f, v.re as f64, v.re, nan_payload(v.re.to_bits().into(), 23))?;
                f.write_str(", ")?;
                fmt_float(f, v.im as f64, v.im, nan_payload(v.im.to_bits().into(), 23))?;
                f.write_str(")")
            }
            Scalar::C128(v) => {
                f.write_str("(")?;
                fmt_float(f, v.re, v.re, nan_payload(v.re.to_bits(), 52))?;
                f.write_str(", ")?;
                fmt_float(f, v.im, v.im, nan_payload(v.im.to_bits(), 52))?;
                f.write_str(")")
            }
        }
    }
}
