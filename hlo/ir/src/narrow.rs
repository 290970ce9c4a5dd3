//! The narrow element types' encodings: one parametrized minifloat codec for the
//! 8-, 6- and 4-bit floats, and two's-complement helpers for `s2`/`s4`/`u2`/`u4`.
//!
//! A narrow element is stored in one byte, its bit pattern in the low bits (the
//! unused high bits are zero). Every narrow value is exact in `f32`/`f64`
//! ([`decode`]); [`encode`] rounds an `f64` to the nearest representable value,
//! ties to even, exactly as `ml_dtypes` and XLA convert.
//!
//! The formats (facts from `ml_dtypes` and XLA's `xla_data.proto`):
//!
//! | type | exp | man | bias | inf | NaN | -0 | overflow from f32 |
//! | --- | --- | --- | --- | --- | --- | --- | --- |
//! | `f8e5m2` | 5 | 2 | 15 | yes | IEEE (exp all ones, mantissa ≠ 0) | yes | inf |
//! | `f8e4m3` | 4 | 3 | 7 | yes | IEEE | yes | inf |
//! | `f8e3m4` | 3 | 4 | 3 | yes | IEEE | yes | inf |
//! | `f8e4m3fn` | 4 | 3 | 7 | no | `s.1111.111` | yes | NaN |
//! | `f8e4m3fnuz` | 4 | 3 | 8 | no | `0x80` only | no | NaN |
//! | `f8e4m3b11fnuz` | 4 | 3 | 11 | no | `0x80` only | no | NaN |
//! | `f8e5m2fnuz` | 5 | 2 | 16 | no | `0x80` only | no | NaN |
//! | `f8e8m0fnu` | 8 | 0 | 127 | no | `0xff` | no sign, no zero | NaN |
//! | `f6e2m3fn` | 2 | 3 | 1 | no | none | yes | saturates |
//! | `f6e3m2fn` | 3 | 2 | 3 | no | none | yes | saturates |
//! | `f4e2m1fn` | 2 | 1 | 1 | no | none | yes | saturates |
//!
//! NaN into an IEEE-like format becomes the quiet NaN of the same sign (exponent
//! all ones, top mantissa bit set); into an `fn` format `s.111..1` with the sign;
//! into an `fnuz` format `0x80`; into a format without NaN, negative zero (what
//! `ml_dtypes` does). `f8e8m0fnu` has no sign and no zero: zero, negatives and NaN
//! become its NaN; it rounds on the exponent grid (ties to the larger power, the
//! even "mantissa"), except below 2^-126, where XLA and `ml_dtypes` send every
//! value above 2^-127 to 2^-126 and the rest to 2^-127. NaN into a format
//! without NaN is negative zero whatever the NaN's sign (XLA CPU's result;
//! `ml_dtypes` gives +0 for a negative NaN, the one place they differ).

use crate::shape::ElementType;

/// How a minifloat format spends its special encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent holds inf (mantissa 0) and NaNs.
    Ieee,
    /// No inf; the all-ones pattern (either sign) is NaN.
    Fn,
    /// No inf, no negative zero; the negative-zero pattern is the one NaN.
    Fnuz,
    /// No inf, no NaN: overflow saturates at the largest finite value.
    FiniteOnly,
    /// `f8e8m0fnu`: no sign bit, no zero; `0xff` is NaN.
    E8M0,
}

/// A minifloat format: field widths, bias and specials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MiniFloat {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

impl MiniFloat {
    /// The format of a narrow float type; `None` for every other type.
    pub fn of(ty: ElementType) -> Option<MiniFloat> {
        use ElementType::*;
        use Specials::*;
        let f = |exponent_bits, mantissa_bits, bias, specials| MiniFloat {
            exponent_bits,
            mantissa_bits,
            bias,
            specials,
        };
        Some(match ty {
            F8E5M2 => f(5, 2, 15, Ieee),
            F8E4M3 => f(4, 3, 7, Ieee),
            F8E3M4 => f(3, 4, 3, Ieee),
            F8E4M3FN => f(4, 3, 7, Fn),
            F8E4M3FNUZ => f(4, 3, 8, Fnuz),
            F8E4M3B11FNUZ => f(4, 3, 11, Fnuz),
            F8E5M2FNUZ => f(5, 2, 16, Fnuz),
            F8E8M0FNU => f(8, 0, 127, E8M0),
            F6E2M3FN => f(2, 3, 1, FiniteOnly),
            F6E3M2FN => f(3, 2, 3, FiniteOnly),
            F4E2M1FN => f(2, 1, 1, FiniteOnly),
            _ => return None,
        })
    }

    fn has_sign(self) -> bool {
        self.specials != Specials::E8M0
    }
    fn sign_bit(self) -> u8 {
        if self.has_sign() {
            1 << (self.exponent_bits + self.mantissa_bits)
        } else {
            0
        }
    }
    fn max_exponent_field(self) -> u32 {
        (1u32 << self.exponent_bits) - 1
    }
    /// The quiet NaN (positive where the format has a sign); `None` without NaN.
    pub fn nan(self, negative: bool) -> Option<u8> {
        let (e, m) = (self.exponent_bits, self.mantissa_bits);
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.specials {
            Specials::Ieee => Some(sign | (((1u8 << e) - 1) << m) | (1 << (m - 1))),
            Specials::Fn => Some(sign | ((1u8 << (e + m)) - 1)),
            Specials::Fnuz => Some(self.sign_bit()),
            Specials::E8M0 => Some(0xff),
            Specials::FiniteOnly => None,
        }
    }
    /// The largest finite value's bit pattern (positive).
    pub fn max_finite_bits(self) -> u8 {
        let (e, m) = (self.exponent_bits, self.mantissa_bits);
        match self.specials {
            Specials::Ieee => ((((1u16 << e) - 2) << m) | ((1 << m) - 1)) as u8,
            Specials::Fn => ((1u16 << (e + m)) - 2) as u8,
            Specials::Fnuz | Specials::FiniteOnly => ((1u16 << (e + m)) - 1) as u8,
            Specials::E8M0 => 0xfe,
        }
    }

    /// Whether `bits` is a NaN of this format.
    pub fn is_nan(self, bits: u8) -> bool {
        let (e, m) = (self.exponent_bits, self.mantissa_bits);
        let magnitude = bits & !self.sign_bit();
        match self.specials {
            Specials::Ieee => {
                (magnitude >> m) as u32 == self.max_exponent_field()
                    && magnitude & ((1 << m) - 1) != 0
            }
            Specials::Fn => magnitude as u32 == (1u32 << (e + m)) - 1,
            Specials::Fnuz => bits == self.sign_bit(),
            Specials::E8M0 => bits == 0xff,
            Specials::FiniteOnly => false,
        }
    }

    /// The exact value of a bit pattern (bits above the format's width ignored).
    pub fn decode(self, bits: u8) -> f64 {
        let (e, m) = (self.exponent_bits, self.mantissa_bits);
        let width = e + m + u32::from(self.has_sign());
        let bits = if width >= 8 {
            bits
        } else {
            bits & ((1u8 << width) - 1)
        };
        if self.is_nan(bits) {
            let negative = matches!(self.specials, Specials::Ieee | Specials::Fn)
                && bits & self.sign_bit() != 0;
            return if negative { -f64::NAN } else { f64::NAN };
        }
        let negative = bits & self.sign_bit() != 0;
        let magnitude = bits & !self.sign_bit();
        let exp_field = (magnitude >> m) as i32;
        let man = f64::from(magnitude & ((1u8 << m) - 1));
        let value = if self.specials == Specials::E8M0 {
            pow2(exp_field - self.bias)
        } else if self.specials == Specials::Ieee && exp_field as u32 == self.max_exponent_field() {
            f64::INFINITY
        } else if exp_field == 0 {
            man * pow2(1 - self.bias - m as i32)
        } else {
            (f64::from(1u32 << m) + man) * pow2(exp_field - self.bias - m as i32)
        };
        if negative {
            -value
        } else {
            value
        }
    }

    /// `x` rounded to this format, to nearest with ties to even.
    pub fn encode(self, x: f64) -> u8 {
        let negative = x.is_sign_negative();
        if x.is_nan() {
            return self.nan(negative).unwrap_or(self.sign_bit());
        }
        if self.specials == Specials::E8M0 && (negative || x == 0.0) {
            return 0xff;
        }
        let sign = if negative { self.sign_bit() } else { 0 };
        let a = x.abs();
        let m = self.mantissa_bits as i32;
        let max_bits = self.max_finite_bits();
        let max = self.decode(max_bits);
        let overflow = || match self.specials {
            Specials::Ieee => sign | ((self.max_exponent_field() as u8) << m),
            Specials::FiniteOnly => sign | max_bits,
            // Every format but these two has a NaN.
            _ => self.nan(negative).unwrap_or(sign | max_bits),
        };
        if a.is_infinite() {
            return overflow();
        }
        if a == 0.0 {
            return if self.specials == Specials::Fnuz {
                0
            } else {
                sign
            };
        }
        if self.specials == Specials::E8M0 && a < pow2(-126) {
            // Below f32's normals, XLA and ml_dtypes round an f32 subnormal on
            // its bit pattern: everything above 2^-127 goes up to 2^-126, the
            // rest to 2^-127 (checked against both, see the codec table).
            return u8::from(a > pow2(-127));
        }
        // The exponent of the least significant mantissa bit at `a`'s binade, not
        // below the subnormals' (e8m0 has none: its grid is the powers of two).
        let min_normal_exp = 1 - self.bias;
        let binade = exponent_of(a);
        let lowest = if self.specials == Specials::E8M0 {
            -self.bias
        } else {
            min_normal_exp
        };
        let quantum_exp = binade.max(lowest) - m;
        let q = scale(a, -quantum_exp);
        let r = q.round_ties_even();
        let rounded = scale(r, quantum_exp);
        if rounded > max {
            return overflow();
        }
        if rounded == 0.0 {
            // Underflow to zero (the fnuz formats have only +0).
            return if self.specials == Specials::Fnuz {
                0
            } else {
                sign
            };
        }
        let e = exponent_of(rounded);
        let bits = if self.specials == Specials::E8M0 {
            (e + self.bias) as u8
        } else if e < min_normal_exp {
            scale(rounded, -(min_normal_exp - m)) as u8
        } else {
            let man = scale(rounded, -(e - m)) as u32 - (1u32 << m);
            (((e + self.bias) as u32) << m | man) as u8
        };
        sign | bits
    }
}

/// `2^e` for exponents well inside `f64`'s normal range.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `x * 2^e`, exact for the ranges used here (two steps keep the factor normal).
fn scale(x: f64, e: i32) -> f64 {
    let half = e / 2;
    x * pow2(half) * pow2(e - half)
}

/// `floor(log2(a))` of a positive finite `f64`.
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // A subnormal f64: far below any narrow format, but answer correctly.
        -1022 - ((bits << 12).leading_zeros() as i32) - 1
    } else {
        field - 1023
    }
}

/// The width in bits of `ty`'s storage byte that holds its value: the type's
/// width, capped at the byte (so the helpers below are total on every type,
/// not only the narrow ones they are meant for).
fn storage_width(ty: ElementType) -> u32 {
    ty.bit_width().clamp(1, 8) as u32
}

/// The mask of the low `width` (1 to 8) bits of a byte.
fn low_bits(width: u32) -> u8 {
    (u16::MAX >> (16 - width)) as u8
}

/// The value of a narrow integer's storage byte (sign-extended for `s2`/`s4`).
pub fn int_value(ty: ElementType, bits: u8) -> i64 {
    let width = storage_width(ty);
    let low = bits & low_bits(width);
    if ty.is_signed_int() && low & (1 << (width - 1)) != 0 {
        i64::from(low) - (1i64 << width)
    } else {
        i64::from(low)
    }
}

/// The storage byte of an integer wrapped to a narrow integer type's width.
pub fn int_bits(ty: ElementType, value: i128) -> u8 {
    (value as u8) & low_bits(storage_width(ty))
}

/// The storage byte of a float converted to a narrow integer type: truncation
/// toward zero, saturating at the type's range, NaN → 0 (XLA's float → int rule).
pub fn int_bits_from_float(ty: ElementType, x: f64) -> u8 {
    let width = storage_width(ty);
    let (lo, hi) = if ty.is_signed_int() {
        (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1)
    } else {
        (0, (1i64 << width) - 1)
    };
    let v = if x.is_nan() {
        0
    } else {
        (x.trunc().clamp(lo as f64, hi as f64)) as i64
    };
    int_bits(ty, i128::from(v))
}

/// The value of a narrow element's storage byte as an `f64` (exact).
pub fn decode(ty: ElementType, bits: u8) -> f64 {
    match MiniFloat::of(ty) {
        Some(f) => f.decode(bits),
        None => int_value(ty, bits) as f64,
    }
}

/// `x` converted to a narrow type's storage byte (rounded for floats, XLA's
/// float → int rule for integers).
pub fn encode(ty: ElementType, x: f64) -> u8 {
    match MiniFloat::of(ty) {
        Some(f) => f.encode(x),
        None => int_bits_from_float(ty, x),
    }
}
