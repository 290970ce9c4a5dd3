//! Integer semantics: what XLA computes for `s8`..`s64` and `u8`..`u64`.
//!
//! [`IntSemantics`] is the small set of machine operations each integer type
//! provides (wrapping arithmetic, bit counts, raw shifts); the free functions in
//! this module build the HLO ops on top of it with XLA's rules for the cases C
//! leaves undefined:
//!
//! * arithmetic wraps (two's complement);
//! * `x / 0 = -1` (all bits set, also for unsigned), `x % 0 = x`,
//!   `MIN / -1 = MIN`, `MIN % -1 = 0`;
//! * a shift amount is read as unsigned, so negative amounts are huge; amounts
//!   `>= bits` give 0 for `shift-left` and `shift-right-logical`, and the sign fill
//!   (0 or -1) for `shift-right-arithmetic`, which treats its operand as signed even
//!   for unsigned types;
//! * `power` squares-and-multiplies over the exponent's low 6 bits (XLA unrolls six
//!   steps, enough for any exponent that does not overflow); a negative exponent
//!   (read as signed, also for unsigned types) gives 1 for base 1, ±1 for base -1
//!   (all bits set) by the exponent's parity, and 0 otherwise;
//! * `abs(MIN) = MIN`, `negate(MIN) = MIN`.
//!
//! Every function is `#[inline]`, allocation free and branch-light so a caller's
//! loop over a slice can be vectorised.

use hlo_ir::native::NativeType;

/// A machine integer type; the primitive operations the HLO integer ops are
/// built from.
pub trait IntSemantics: NativeType + Copy + Eq + Ord + Default {
    const BITS: u32;
    const SIGNED: bool;
    const ZERO: Self;
    const ONE: Self;
    /// All bits set: -1 for signed types, `MAX` for unsigned ones.
    const ALL_ONES: Self;
    const MIN: Self;
    const MAX: Self;

    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    /// Quotient truncated toward zero; `other` is neither 0 nor, for signed
    /// types, -1 with `self == MIN`.
    fn raw_div(self, other: Self) -> Self;
    /// Remainder with the sign of `self`; same preconditions as [`Self::raw_div`].
    fn raw_rem(self, other: Self) -> Self;
    fn bit_and(self, other: Self) -> Self;
    fn bit_or(self, other: Self) -> Self;
    fn bit_xor(self, other: Self) -> Self;
    fn bit_not(self) -> Self;
    fn count_ones(self) -> u32;
    fn leading_zeros(self) -> u32;
    /// The bits zero-extended to 64 (a shift amount is read this way).
    fn as_unsigned_u64(self) -> u64;
    /// Whether the sign bit is set (the value is negative when read as signed).
    fn sign_bit(self) -> bool;
    /// `self << n` for `n < BITS`.
    fn raw_shl(self, n: u32) -> Self;
    /// Logical right shift for `n < BITS`.
    fn raw_lshr(self, n: u32) -> Self;
    /// Arithmetic right shift (sign bit replicated) for `n < BITS`.
    fn raw_ashr(self, n: u32) -> Self;
    /// The count `n` as this type (`n` is at most 64).
    fn from_count(n: u32) -> Self;
}

macro_rules! int_impl {
    ($t:ty, $u:ty, $s:ty, $signed:expr) => {
        impl IntSemantics for $t {
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = $signed;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const ALL_ONES: Self = !0;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;

            #[inline]
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            #[inline]
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
            #[inline]
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            #[inline]
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            #[inline]
            fn raw_div(self, other: Self) -> Self {
                // Wrapping only to keep the MIN / -1 case panic-free; callers never
                // pass it.
                <$t>::wrapping_div(self, other)
            }
            #[inline]
            fn raw_rem(self, other: Self) -> Self {
                <$t>::wrapping_rem(self, other)
            }
            #[inline]
            fn bit_and(self, other: Self) -> Self {
                self & other
            }
            #[inline]
            fn bit_or(self, other: Self) -> Self {
                self | other
            }
            #[inline]
            fn bit_xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline]
            fn bit_not(self) -> Self {
                !self
            }
            #[inline]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            #[inline]
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
            #[inline]
            fn as_unsigned_u64(self) -> u64 {
                self as $u as u64
            }
            #[inline]
            fn sign_bit(self) -> bool {
                (self as $s) < 0
            }
            #[inline]
            fn raw_shl(self, n: u32) -> Self {
                self.wrapping_shl(n)
            }
            #[inline]
            fn raw_lshr(self, n: u32) -> Self {
                (self as $u).wrapping_shr(n) as $t
            }
            #[inline]
            fn raw_ashr(self, n: u32) -> Self {
                (self as $s).wrapping_shr(n) as $t
            }
            #[inline]
            fn from_count(n: u32) -> Self {
                n as $t
            }
        }
    };
}

int_impl!(i8, u8, i8, true);
int_impl!(i16, u16, i16, true);
int_impl!(i32, u32, i32, true);
int_impl!(i64, u64, i64, true);
int_impl!(u8, u8, i8, false);
int_impl!(u16, u16, i16, false);
int_impl!(u32, u32, i32, false);
int_impl!(u64, u64, i64, false);

/// `add`: wraps.
#[inline]
pub fn add<T: IntSemantics>(a: T, b: T) -> T {
    a.wrapping_add(b)
}

/// `subtract`: wraps.
#[inline]
pub fn subtract<T: IntSemantics>(a: T, b: T) -> T {
    a.wrapping_sub(b)
}

/// `multiply`: wraps.
#[inline]
pub fn multiply<T: IntSemantics>(a: T, b: T) -> T {
    a.wrapping_mul(b)
}

#[inline]
fn is_min_over_minus_one<T: IntSemantics>(a: T, b: T) -> bool {
    T::SIGNED && a == T::MIN && b == T::ALL_ONES
}

/// `divide`: truncates toward zero; `x / 0` is all bits set (-1, or `MAX` for
/// unsigned) and `MIN / -1` is `MIN`.
#[inline]
pub fn divide<T: IntSemantics>(a: T, b: T) -> T {
    if b == T::ZERO {
        T::ALL_ONES
    } else if is_min_over_minus_one(a, b) {
        T::MIN
    } else {
        a.raw_div(b)
    }
}

/// `remainder`: the sign of the dividend; `x % 0 = x` and `MIN % -1 = 0`.
#[inline]
pub fn remainder<T: IntSemantics>(a: T, b: T) -> T {
    if b == T::ZERO {
        a
    } else if is_min_over_minus_one(a, b) {
        T::ZERO
    } else {
        a.raw_rem(b)
    }
}

/// `maximum` (signed or unsigned order by type).
#[inline]
pub fn maximum<T: IntSemantics>(a: T, b: T) -> T {
    if a >= b {
        a
    } else {
        b
    }
}

/// `minimum` (signed or unsigned order by type).
#[inline]
pub fn minimum<T: IntSemantics>(a: T, b: T) -> T {
    if a <= b {
        a
    } else {
        b
    }
}

/// `and`: bitwise.
#[inline]
pub fn and<T: IntSemantics>(a: T, b: T) -> T {
    a.bit_and(b)
}

/// `or`: bitwise.
#[inline]
pub fn or<T: IntSemantics>(a: T, b: T) -> T {
    a.bit_or(b)
}

/// `xor`: bitwise.
#[inline]
pub fn xor<T: IntSemantics>(a: T, b: T) -> T {
    a.bit_xor(b)
}

/// `shift-left`: amounts are unsigned; `>= bits` gives 0.
#[inline]
pub fn shift_left<T: IntSemantics>(a: T, amount: T) -> T {
    let n = amount.as_unsigned_u64();
    if n < T::BITS as u64 {
        a.raw_shl(n as u32)
    } else {
        T::ZERO
    }
}

/// `shift-right-logical`: amounts are unsigned; `>= bits` gives 0.
#[inline]
pub fn shift_right_logical<T: IntSemantics>(a: T, amount: T) -> T {
    let n = amount.as_unsigned_u64();
    if n < T::BITS as u64 {
        a.raw_lshr(n as u32)
    } else {
        T::ZERO
    }
}

/// `shift-right-arithmetic`: the operand's bits are read as signed (also for
/// unsigned types); amounts are unsigned; `>= bits` gives the sign fill.
#[inline]
pub fn shift_right_arithmetic<T: IntSemantics>(a: T, amount: T) -> T {
    let n = amount.as_unsigned_u64();
    if n < T::BITS as u64 {
        a.raw_ashr(n as u32)
    } else if a.sign_bit() {
        T::ALL_ONES
    } else {
        T::ZERO
    }
}

/// `power`: see the module documentation for XLA's exact rule.
#[inline]
pub fn power<T: IntSemantics>(base: T, exponent: T) -> T {
    if exponent.sign_bit() {
        // A negative exponent: only ±1 have an integer reciprocal power.
        if base == T::ONE {
            T::ONE
        } else if base == T::ALL_ONES {
            if exponent.bit_and(T::ONE) == T::ONE {
                T::ALL_ONES
            } else {
                T::ONE
            }
        } else {
            T::ZERO
        }
    } else {
        let mut accumulator = T::ONE;
        let mut square = base;
        let mut e = exponent;
        for _ in 0..6 {
            if e.bit_and(T::ONE) == T::ONE {
                accumulator = accumulator.wrapping_mul(square);
            }
            square = square.wrapping_mul(square);
            e = e.raw_lshr(1);
        }
        accumulator
    }
}

/// `abs`: `abs(MIN) = MIN`; the identity for unsigned types.
#[inline]
pub fn abs<T: IntSemantics>(x: T) -> T {
    if T::SIGNED && x.sign_bit() {
        x.wrapping_neg()
    } else {
        x
    }
}

/// `negate`: wraps (`-MIN = MIN`; unsigned `-x = 2^bits - x`).
#[inline]
pub fn negate<T: IntSemantics>(x: T) -> T {
    x.wrapping_neg()
}

/// `sign`: -1, 0 or 1. (XLA defines `sign` for signed integers only; for an
/// unsigned type this gives 0 or 1.)
#[inline]
pub fn sign<T: IntSemantics>(x: T) -> T {
    if x == T::ZERO {
        T::ZERO
    } else if T::SIGNED && x.sign_bit() {
        T::ALL_ONES
    } else {
        T::ONE
    }
}

/// `not`: bitwise complement.
#[inline]
pub fn not<T: IntSemantics>(x: T) -> T {
    x.bit_not()
}

/// `popcnt`: number of set bits, in the operand's type.
#[inline]
pub fn popcnt<T: IntSemantics>(x: T) -> T {
    T::from_count(x.count_ones())
}

/// `count-leading-zeros`: `bits` for 0, in the operand's type.
#[inline]
pub fn count_leading_zeros<T: IntSemantics>(x: T) -> T {
    T::from_count(x.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_rules() {
        assert_eq!(divide(7i32, 0), -1);
        assert_eq!(divide(7u32, 0), u32::MAX);
        assert_eq!(divide(i32::MIN, -1), i32::MIN);
        assert_eq!(divide(-7i8, 2), -3);
        assert_eq!(remainder(7i32, 0), 7);
        assert_eq!(remainder(i64::MIN, -1), 0);
        assert_eq!(remainder(-7i16, 2), -1);
        assert_eq!(remainder(7u8, 0), 7);
        // For unsigned types all-ones is MAX, not -1: MAX / MAX is 1.
        assert_eq!(divide(u8::MAX, u8::MAX), 1);
    }

    #[test]
    fn shifts_saturate_past_the_width() {
        assert_eq!(shift_left(1i32, 31), i32::MIN);
        assert_eq!(shift_left(1i32, 32), 0);
        assert_eq!(shift_left(1i32, -1), 0);
        assert_eq!(shift_right_logical(-8i32, 31), 1);
        assert_eq!(shift_right_logical(-8i32, 32), 0);
        assert_eq!(shift_right_arithmetic(-8i32, 33), -1);
        assert_eq!(shift_right_arithmetic(8i32, 33), 0);
        assert_eq!(shift_right_arithmetic(-8i32, i32::MIN), -1);
        // Arithmetic shift reads unsigned operands as signed.
        assert_eq!(shift_right_arithmetic(200u8, 7), 255);
        assert_eq!(shift_right_arithmetic(200u8, 8), 255);
        assert_eq!(shift_right_arithmetic(100u8, 9), 0);
    }

    #[test]
    fn power_uses_six_exponent_bits_and_handles_negative_exponents() {
        assert_eq!(power(3i32, 5), 243);
        assert_eq!(power(2i64, 62), 1 << 62);
        // 3^100 is computed as 3^(100 mod 64) = 3^36, wrapped.
        assert_eq!(power(3i32, 100), power(3i32, 36));
        assert_eq!(power(3i32, 64), 1);
        assert_eq!(power(-1i32, -3), -1);
        assert_eq!(power(-1i32, -2), 1);
        assert_eq!(power(1i8, -128), 1);
        assert_eq!(power(2i32, -1), 0);
        assert_eq!(power(0i32, -1), 0);
        assert_eq!(power(0i32, 0), 1);
        // Unsigned exponents with the top bit set count as negative.
        assert_eq!(power(3u32, u32::MAX), 0);
        assert_eq!(power(u32::MAX, u32::MAX), u32::MAX);
        assert_eq!(power(u8::MAX, 254), 1);
    }

    #[test]
    fn unary_ops() {
        assert_eq!(abs(i32::MIN), i32::MIN);
        assert_eq!(abs(-5i8), 5);
        assert_eq!(negate(i16::MIN), i16::MIN);
        assert_eq!(negate(1u8), 255);
        assert_eq!(sign(-9i64), -1);
        assert_eq!(sign(0i64), 0);
        assert_eq!(sign(i32::MAX), 1);
        assert_eq!(popcnt(-1i32), 32);
        assert_eq!(popcnt(0x0Fu8), 4);
        assert_eq!(count_leading_zeros(0u16), 16);
        assert_eq!(count_leading_zeros(-1i64), 0);
        assert_eq!(count_leading_zeros(1u64), 63);
        assert_eq!(not(0u8), 255);
    }
}
