//! Elementwise semantics as typed loops: for each (operation, element type) a
//! kernel function, chosen once when a thunk is compiled, whose inner loop is
//! monomorphic (no per-element dispatch).
//!
//! The semantics follow XLA's (operation_semantics.md and the CPU emitter):
//! integer arithmetic wraps; `x / 0` is -1 (all bits set) and `x % 0` is `x`;
//! `INT_MIN / -1` is `INT_MIN` and `INT_MIN % -1` is 0; shifts by the bit width
//! or more give 0 (or the sign fill for arithmetic right shifts); integer `pow`
//! squares over the exponent's low six bits and gives `base == 1 ? 1 : 0` for
//! negative exponents; float `maximum`/`minimum` propagate NaN; `f16`/`bf16`
//! compute in `f32` and round each result; conversions from float to integer
//! saturate and send NaN to 0; conversions to `pred` test `!= 0`; complex to real
//! keeps the real part.
//!
//! Transcendentals follow the C library except f32 `exp`, `log`, `tanh` and
//! `logistic`, which use the vectorizable approximations of
//! [`super::fast_math`] (as XLA CPU uses its own approximations).
//!
//! (When `platform_api::semantics` offers its typed layer, these kernels are
//! meant to be built on it; until then this module is the Host's statement of
//! those rules.)
//!
//! Kernel functions take raw pointers so a result may be written over an
//! operand (element `i` is read before it is written); pointers must be aligned
//! for their element types and valid for `n` elements.

use super::types::Pred;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use num_traits::AsPrimitive;
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

/// `out[i] = f(a[i])` for `i < n`.
pub type UnaryFn = Arc<dyn Fn(*const u8, *mut u8, usize) + Send + Sync>;
/// `out[i] = f(a[i], b[i])` for `i < n`.
pub type BinaryFn = Arc<dyn Fn(*const u8, *const u8, *mut u8, usize) + Send + Sync>;

/// `out[i] = f(a[i])`.
///
/// # Safety
/// Pointers valid and aligned for `n` elements; `out` may equal `a`.
#[inline(always)]
unsafe fn unary_loop<T: Copy, R, F: Fn(T) -> R>(f: &F, a: *const T, out: *mut R, n: usize) {
    for i in 0..n {
        // SAFETY: the caller's contract; element `i` is read before written.
        unsafe { out.add(i).write(f(a.add(i).read())) };
    }
}

/// `out[i] = f(a[i], b[i])`.
///
/// # Safety
/// As [`unary_loop`].
#[inline(always)]
unsafe fn binary_loop<A: Copy, B: Copy, R, F: Fn(A, B) -> R>(
    f: &F,
    a: *const A,
    b: *const B,
    out: *mut R,
    n: usize,
) {
    for i in 0..n {
        // SAFETY: as in `unary_loop`.
        unsafe { out.add(i).write(f(a.add(i).read(), b.add(i).read())) };
    }
}

crate::multiversion!(unsafe fn unary_simd<T: Copy, R: Copy, F: Fn(T) -> R>(f: &F, a: *const T, out: *mut R, n: usize) => unary_loop);
crate::multiversion!(unsafe fn binary_simd<A: Copy, B: Copy, R: Copy, F: Fn(A, B) -> R>(f: &F, a: *const A, b: *const B, out: *mut R, n: usize) => binary_loop);

/// Builds a unary kernel from a per-element function.
pub fn unary<T: bytemuck::Pod, R: bytemuck::Pod>(
    f: impl Fn(T) -> R + Send + Sync + 'static,
) -> UnaryFn {
    Arc::new(move |a: *const u8, out: *mut u8, n: usize| {
        // SAFETY: the caller passes pointers valid and aligned for `n`
        // elements (see the module docs).
        unsafe { unary_simd(&f, a.cast::<T>(), out.cast::<R>(), n) }
    })
}

/// Builds a binary kernel from a per-element function.
pub fn binary<A: bytemuck::Pod, B: bytemuck::Pod, R: bytemuck::Pod>(
    f: impl Fn(A, B) -> R + Send + Sync + 'static,
) -> BinaryFn {
    Arc::new(move |a: *const u8, b: *const u8, out: *mut u8, n: usize| {
        // SAFETY: as in `unary`.
        unsafe { binary_simd(&f, a.cast::<A>(), b.cast::<B>(), out.cast::<R>(), n) }
    })
}

/// Real floating-point element types (`f16` and `bf16` compute through `f32`).
pub trait Float: bytemuck::Pod + PartialOrd + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn ceil(self) -> Self;
    fn floor(self) -> Self;
    fn round_afz(self) -> Self;
    fn round_even(self) -> Self;
    fn sqrt(self) -> Self;
    fn rsqrt(self) -> Self;
    fn cbrt(self) -> Self;
    fn exp(self) -> Self;
    fn expm1(self) -> Self;
    fn ln(self) -> Self;
    fn ln1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn erf(self) -> Self;
    fn logistic(self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
    /// The value as f64 (exact).
    fn widen(self) -> f64;
    /// -1, 0 or 1 with the sign of `self`; NaN stays NaN, ±0 stays ±0.
    fn sign(self) -> Self;
    /// An integer whose order is IEEE totalOrder (-NaN < -inf < ... < -0 < +0 <
    /// ... < inf < +NaN).
    fn total_order_key(self) -> i64;
    /// `(a >= b || a is NaN) ? a : b`, XLA's NaN-propagating maximum.
    #[inline]
    fn max_nan(self, o: Self) -> Self {
        if self >= o || self.is_nan() {
            self
        } else {
            o
        }
    }
    /// `(a <= b || a is NaN) ? a : b`.
    #[inline]
    fn min_nan(self, o: Self) -> Self {
        if self <= o || self.is_nan() {
            self
        } else {
            o
        }
    }
}

macro_rules! native_float {
    ($t:ty, $bits:ty, $ubits:ty, $erf:path, $exp:path, $ln:path, $tanh:path) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline]
            fn rem(self, o: Self) -> Self {
                self % o
            }
            #[inline]
            fn neg(self) -> Self {
                -self
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline]
            fn round_afz(self) -> Self {
                <$t>::round(self)
            }
            #[inline]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn rsqrt(self) -> Self {
                1.0 / <$t>::sqrt(self)
            }
            #[inline]
            fn cbrt(self) -> Self {
                <$t>::cbrt(self)
            }
            #[inline]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline]
            fn expm1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline]
            fn ln(self) -> Self {
                $ln(self)
            }
            #[inline]
            fn ln1p(self) -> Self {
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
                $tanh(self)
            }
            #[inline]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline]
            fn logistic(self) -> Self {
                1.0 / (1.0 + $exp(-self))
            }
            #[inline]
            fn pow(self, o: Self) -> Self {
                <$t>::powf(self, o)
            }
            #[inline]
            fn atan2(self, o: Self) -> Self {
                <$t>::atan2(self, o)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn widen(self) -> f64 {
                self as f64
            }
            #[inline]
            fn sign(self) -> Self {
                if self.is_nan() || self == 0.0 {
                    self
                } else {
                    <$t>::copysign(1.0, self)
                }
            }
            #[inline]
            fn total_order_key(self) -> i64 {
                let bits = self.to_bits() as $bits;
                let shift = (std::mem::size_of::<$bits>() * 8 - 1) as u32;
                // Negative values: flip every bit but the sign, so larger
                // magnitudes order lower.
                let mask = ((bits >> shift) as $ubits >> 1) as $bits;
                (bits ^ mask) as i64
            }
        }
    };
}
native_float!(
    f32,
    i32,
    u32,
    libm::erff,
    super::fast_math::exp_f32,
    super::fast_math::log_f32,
    super::fast_math::tanh_f32
);
native_float!(f64, i64, u64, libm::erf, f64::exp, f64::ln, f64::tanh);

macro_rules! half_float {
    ($t:ty) => {
        impl Float for $t {
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
            #[inline]
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            #[inline]
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            #[inline]
            fn div(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            #[inline]
            fn rem(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() % o.to_f32())
            }
            #[inline]
            fn neg(self) -> Self {
                -self
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::from_bits(self.to_bits() & 0x7fff)
            }
            #[inline]
            fn ceil(self) -> Self {
                <$t>::from_f32(Float::ceil(self.to_f32()))
            }
            #[inline]
            fn floor(self) -> Self {
                <$t>::from_f32(Float::floor(self.to_f32()))
            }
            #[inline]
            fn round_afz(self) -> Self {
                <$t>::from_f32(Float::round_afz(self.to_f32()))
            }
            #[inline]
            fn round_even(self) -> Self {
                <$t>::from_f32(Float::round_even(self.to_f32()))
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::from_f32(Float::sqrt(self.to_f32()))
            }
            #[inline]
            fn rsqrt(self) -> Self {
                <$t>::from_f32(Float::rsqrt(self.to_f32()))
            }
            #[inline]
            fn cbrt(self) -> Self {
                <$t>::from_f32(Float::cbrt(self.to_f32()))
            }
            #[inline]
            fn exp(self) -> Self {
                <$t>::from_f32(Float::exp(self.to_f32()))
            }
            #[inline]
            fn expm1(self) -> Self {
                <$t>::from_f32(Float::expm1(self.to_f32()))
            }
            #[inline]
            fn ln(self) -> Self {
                <$t>::from_f32(Float::ln(self.to_f32()))
            }
            #[inline]
            fn ln1p(self) -> Self {
                <$t>::from_f32(Float::ln1p(self.to_f32()))
            }
            #[inline]
            fn sin(self) -> Self {
                <$t>::from_f32(Float::sin(self.to_f32()))
            }
            #[inline]
            fn cos(self) -> Self {
                <$t>::from_f32(Float::cos(self.to_f32()))
            }
            #[inline]
            fn tan(self) -> Self {
                <$t>::from_f32(Float::tan(self.to_f32()))
            }
            #[inline]
            fn tanh(self) -> Self {
                <$t>::from_f32(Float::tanh(self.to_f32()))
            }
            #[inline]
            fn erf(self) -> Self {
                <$t>::from_f32(Float::erf(self.to_f32()))
            }
            #[inline]
            fn logistic(self) -> Self {
                <$t>::from_f32(Float::logistic(self.to_f32()))
            }
            #[inline]
            fn pow(self, o: Self) -> Self {
                <$t>::from_f32(Float::pow(self.to_f32(), o.to_f32()))
            }
            #[inline]
            fn atan2(self, o: Self) -> Self {
                <$t>::from_f32(Float::atan2(self.to_f32(), o.to_f32()))
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn widen(self) -> f64 {
                self.to_f64()
            }
            #[inline]
            fn sign(self) -> Self {
                <$t>::from_f32(Float::sign(self.to_f32()))
            }
            #[inline]
            fn total_order_key(self) -> i64 {
                let bits = self.to_bits() as i16;
                let mask = ((bits >> 15) as u16 >> 1) as i16;
                (bits ^ mask) as i64
            }
        }
    };
}
half_float!(f16);
half_float!(bf16);

/// Integer element types with XLA's integer semantics.
pub trait Int: bytemuck::Pod + Ord + Send + Sync + 'static {
    const BITS: u32;
    const ZERO: Self;
    const ONE: Self;
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn xla_div(self, o: Self) -> Self;
    fn xla_rem(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr_logical(self, o: Self) -> Self;
    fn shr_arithmetic(self, o: Self) -> Self;
    fn wneg(self) -> Self;
    fn wabs(self) -> Self;
    fn sign(self) -> Self;
    fn clz(self) -> Self;
    fn popcnt(self) -> Self;
    fn xla_pow(self, o: Self) -> Self;
}

macro_rules! int_type {
    ($t:ty, $u:ty, $s:ty) => {
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline]
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline]
            fn xla_div(self, o: Self) -> Self {
                if o == 0 {
                    !0
                } else {
                    self.wrapping_div(o)
                }
            }
            #[inline]
            fn xla_rem(self, o: Self) -> Self {
                if o == 0 {
                    self
                } else {
                    self.wrapping_rem(o)
                }
            }
            #[inline]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline]
            fn not(self) -> Self {
                !self
            }
            #[inline]
            fn shl(self, o: Self) -> Self {
                let s = o as $u;
                if s >= <$t>::BITS as $u {
                    0
                } else {
                    self << s
                }
            }
            #[inline]
            fn shr_logical(self, o: Self) -> Self {
                let s = o as $u;
                if s >= <$t>::BITS as $u {
                    0
                } else {
                    ((self as $u) >> s) as $t
                }
            }
            #[inline]
            fn shr_arithmetic(self, o: Self) -> Self {
                let s = o as $u;
                let signed = self as $s;
                if s >= <$t>::BITS as $u {
                    if signed < 0 {
                        !0
                    } else {
                        0
                    }
                } else {
                    (signed >> s) as $t
                }
            }
            #[inline]
            fn wneg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline]
            #[allow(unused_comparisons)]
            fn wabs(self) -> Self {
                if self < 0 {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            #[inline]
            #[allow(unused_comparisons)]
            fn sign(self) -> Self {
                if self == 0 {
                    0
                } else if self < 0 {
                    (0 as $t).wrapping_sub(1)
                } else {
                    1
                }
            }
            #[inline]
            fn clz(self) -> Self {
                self.leading_zeros() as $t
            }
            #[inline]
            fn popcnt(self) -> Self {
                self.count_ones() as $t
            }
            #[inline]
            fn xla_pow(self, o: Self) -> Self {
                // Squaring over the exponent's low six bits, as XLA's emitter.
                let mut acc: $t = 1;
                let mut base = self;
                let mut e = o as $u;
                for _ in 0..6 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                if (o as $s) >= 0 {
                    acc
                } else if self == 1 {
                    1
                } else {
                    0
                }
            }
        }
    };
}
int_type!(i8, u8, i8);
int_type!(i16, u16, i16);
int_type!(i32, u32, i32);
int_type!(i64, u64, i64);
int_type!(u8, u8, i8);
int_type!(u16, u16, i16);
int_type!(u32, u32, i32);
int_type!(u64, u64, i64);

fn unsupported(what: impl std::fmt::Display, ty: ElementType) -> Error {
    Error::unimplemented(format!("{what} is not supported for element type {ty}"))
}

/// Evaluates `$body` with `$T` bound to the Rust type of a real float type.
#[macro_export]
macro_rules! with_float {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $ty {
            platform_api::ElementType::F16 => {
                type $T = half::f16;
                $body
            }
            platform_api::ElementType::BF16 => {
                type $T = half::bf16;
                $body
            }
            platform_api::ElementType::F32 => {
                type $T = f32;
                $body
            }
            platform_api::ElementType::F64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// Evaluates `$body` with `$T` bound to the Rust type of an integer type.
#[macro_export]
macro_rules! with_int {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $ty {
            platform_api::ElementType::S8 => {
                type $T = i8;
                $body
            }
            platform_api::ElementType::S16 => {
                type $T = i16;
                $body
            }
            platform_api::ElementType::S32 => {
                type $T = i32;
                $body
            }
            platform_api::ElementType::S64 => {
                type $T = i64;
                $body
            }
            platform_api::ElementType::U8 => {
                type $T = u8;
                $body
            }
            platform_api::ElementType::U16 => {
                type $T = u16;
                $body
            }
            platform_api::ElementType::U32 => {
                type $T = u32;
                $body
            }
            platform_api::ElementType::U64 => {
                type $T = u64;
                $body
            }
            _ => $other,
        }
    };
}

/// Evaluates `$body` with `$T` bound to any real numeric type (integers and
/// floats; not pred, not complex).
#[macro_export]
macro_rules! with_real {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::with_int!($ty, $T => $body, _ => $crate::with_float!($ty, $T => $body, _ => $other))
    };
}

pub use crate::{with_float, with_int, with_real};

/// The kernel for a unary op from `input` elements to `output` elements.
pub fn unary_fn(op: UnaryOp, input: ElementType, output: ElementType) -> Result<UnaryFn> {
    let bad = || unsupported(op, input);
    with_float!(input, T => return float_unary::<T>(op, output).ok_or_else(bad), _ => ());
    with_int!(input, T => return int_unary::<T>(op).ok_or_else(bad), _ => ());
    match input {
        ElementType::Pred => match op {
            UnaryOp::Not => Ok(unary(|x: Pred| Pred::new(!x.get()))),
            _ => Err(bad()),
        },
        ElementType::C64 => complex64_unary(op).ok_or_else(bad),
        ElementType::C128 => complex128_unary(op).ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn float_unary<T: Float>(op: UnaryOp, output: ElementType) -> Option<UnaryFn> {
    use UnaryOp::*;
    Some(match op {
        Abs => unary(|x: T| x.abs()),
        Ceil => unary(|x: T| x.ceil()),
        Floor => unary(|x: T| x.floor()),
        Cos => unary(|x: T| x.cos()),
        Sin => unary(|x: T| x.sin()),
        Tan => unary(|x: T| x.tan()),
        Tanh => unary(|x: T| x.tanh()),
        Exp => unary(|x: T| x.exp()),
        Expm1 => unary(|x: T| x.expm1()),
        Log => unary(|x: T| x.ln()),
        Log1p => unary(|x: T| x.ln1p()),
        Logistic => unary(|x: T| x.logistic()),
        Negate => unary(|x: T| x.neg()),
        Sqrt => unary(|x: T| x.sqrt()),
        Rsqrt => unary(|x: T| x.rsqrt()),
        Cbrt => unary(|x: T| x.cbrt()),
        Erf => unary(|x: T| x.erf()),
        RoundNearestAfz => unary(|x: T| x.round_afz()),
        RoundNearestEven => unary(|x: T| x.round_even()),
        Sign => unary(|x: T| x.sign()),
        IsFinite if output == ElementType::Pred => unary(|x: T| Pred::new(x.is_finite())),
        Real => unary(|x: T| x),
        Imag => unary(|_: T| T::ZERO),
        _ => return None,
    })
}

fn int_unary<T: Int>(op: UnaryOp) -> Option<UnaryFn> {
    use UnaryOp::*;
    Some(match op {
        Abs => unary(|x: T| x.wabs()),
        Negate => unary(|x: T| x.wneg()),
        Not => unary(|x: T| x.not()),
        Sign => unary(|x: T| x.sign()),
        Clz => unary(|x: T| x.clz()),
        PopCount => unary(|x: T| x.popcnt()),
        _ => return None,
    })
}

macro_rules! complex_unary {
    ($name:ident, $c:ty, $f:ty) => {
        fn $name(op: UnaryOp) -> Option<UnaryFn> {
            use UnaryOp::*;
            let zero = <$c>::new(0.0, 0.0);
            let one = <$c>::new(1.0, 0.0);
            Some(match op {
                Abs => unary(|z: $c| z.norm()),
                Real => unary(|z: $c| z.re),
                Imag => unary(|z: $c| z.im),
                Negate => unary(|z: $c| -z),
                Exp => unary(|z: $c| z.exp()),
                Expm1 => unary(move |z: $c| z.exp() - one),
                Log => unary(|z: $c| z.ln()),
                Log1p => unary(move |z: $c| (z + one).ln()),
                Sqrt => unary(|z: $c| z.sqrt()),
                Rsqrt => unary(move |z: $c| one / z.sqrt()),
                Cbrt => unary(|z: $c| z.cbrt()),
                Sin => unary(|z: $c| z.sin()),
                Cos => unary(|z: $c| z.cos()),
                Tan => unary(|z: $c| z.tan()),
                Tanh => unary(|z: $c| z.tanh()),
                Logistic => unary(move |z: $c| one / (one + (-z).exp())),
                Sign => unary(move |z: $c| {
                    if z == zero {
                        zero
                    } else {
                        z / z.norm()
                    }
                }),
                _ => return None,
            })
        }
    };
}
complex_unary!(complex64_unary, Complex32, f32);
complex_unary!(complex128_unary, Complex64, f64);

/// The kernel for a binary op on two `input` operands.
pub fn binary_fn(op: BinaryOp, input: ElementType, output: ElementType) -> Result<BinaryFn> {
    let bad = || unsupported(op, input);
    with_float!(input, T => return float_binary::<T>(op, output).ok_or_else(bad), _ => ());
    with_int!(input, T => return int_binary::<T>(op).ok_or_else(bad), _ => ());
    use BinaryOp::*;
    match input {
        ElementType::Pred => Ok(match op {
            And | Minimum | Multiply => binary(|a: Pred, b: Pred| Pred::new(a.get() & b.get())),
            Or | Maximum | Add => binary(|a: Pred, b: Pred| Pred::new(a.get() | b.get())),
            Xor | Subtract => binary(|a: Pred, b: Pred| Pred::new(a.get() ^ b.get())),
            _ => return Err(bad()),
        }),
        ElementType::C64 => complex64_binary(op).ok_or_else(bad),
        ElementType::C128 => complex128_binary(op).ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn float_binary<T: Float>(op: BinaryOp, output: ElementType) -> Option<BinaryFn> {
    use BinaryOp::*;
    Some(match op {
        Add => binary(|a: T, b: T| a.add(b)),
        Subtract => binary(|a: T, b: T| a.sub(b)),
        Multiply => binary(|a: T, b: T| a.mul(b)),
        Divide => binary(|a: T, b: T| a.div(b)),
        Remainder => binary(|a: T, b: T| a.rem(b)),
        Maximum => binary(|a: T, b: T| a.max_nan(b)),
        Minimum => binary(|a: T, b: T| a.min_nan(b)),
        Power => binary(|a: T, b: T| a.pow(b)),
        Atan2 => binary(|a: T, b: T| a.atan2(b)),
        Complex => match output {
            ElementType::C64 => {
                binary(|a: T, b: T| Complex32::new(a.widen() as f32, b.widen() as f32))
            }
            ElementType::C128 => binary(|a: T, b: T| Complex64::new(a.widen(), b.widen())),
            _ => return None,
        },
        _ => return None,
    })
}

fn int_binary<T: Int>(op: BinaryOp) -> Option<BinaryFn> {
    use BinaryOp::*;
    Some(match op {
        Add => binary(|a: T, b: T| a.wadd(b)),
        Subtract => binary(|a: T, b: T| a.wsub(b)),
        Multiply => binary(|a: T, b: T| a.wmul(b)),
        Divide => binary(|a: T, b: T| a.xla_div(b)),
        Remainder => binary(|a: T, b: T| a.xla_rem(b)),
        Maximum => binary(|a: T, b: T| a.max(b)),
        Minimum => binary(|a: T, b: T| a.min(b)),
        And => binary(|a: T, b: T| a.and(b)),
        Or => binary(|a: T, b: T| a.or(b)),
        Xor => binary(|a: T, b: T| a.xor(b)),
        ShiftLeft => binary(|a: T, b: T| a.shl(b)),
        ShiftRightLogical => binary(|a: T, b: T| a.shr_logical(b)),
        ShiftRightArithmetic => binary(|a: T, b: T| a.shr_arithmetic(b)),
        Power => binary(|a: T, b: T| a.xla_pow(b)),
        _ => return None,
    })
}

macro_rules! complex_binary {
    ($name:ident, $c:ty) => {
        fn $name(op: BinaryOp) -> Option<BinaryFn> {
            use BinaryOp::*;
            Some(match op {
                Add => binary(|a: $c, b: $c| a + b),
                Subtract => binary(|a: $c, b: $c| a - b),
                Multiply => binary(|a: $c, b: $c| a * b),
                Divide => binary(|a: $c, b: $c| a / b),
                Power => binary(|a: $c, b: $c| {
                    // 0^0 is 1 and 0^c is 0 for real c > 0 (Kahan), as XLA.
                    if a.re == 0.0 && a.im == 0.0 && b.im == 0.0 && b.re >= 0.0 {
                        <$c>::new(if b.re == 0.0 { 1.0 } else { 0.0 }, 0.0)
                    } else {
                        a.powc(b)
                    }
                }),
                _ => return None,
            })
        }
    };
}
complex_binary!(complex64_binary, Complex32);
complex_binary!(complex128_binary, Complex64);

fn compare_by<T: bytemuck::Pod, K: PartialOrd>(
    direction: ComparisonDirection,
    key: impl Fn(T) -> K + Copy + Send + Sync + 'static,
) -> BinaryFn {
    use ComparisonDirection::*;
    match direction {
        Eq => binary(move |a: T, b: T| Pred::new(key(a) == key(b))),
        Ne => binary(move |a: T, b: T| Pred::new(key(a) != key(b))),
        Lt => binary(move |a: T, b: T| Pred::new(key(a) < key(b))),
        Le => binary(move |a: T, b: T| Pred::new(key(a) <= key(b))),
        Gt => binary(move |a: T, b: T| Pred::new(key(a) > key(b))),
        Ge => binary(move |a: T, b: T| Pred::new(key(a) >= key(b))),
    }
}

/// The kernel for `compare` of two `input` operands (result: pred).
pub fn compare_fn(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    input: ElementType,
) -> Result<BinaryFn> {
    let total = compare_type == Some(ComparisonType::TotalOrder);
    with_float!(input, T => return Ok(if total {
        compare_by(direction, |x: T| x.total_order_key())
    } else {
        compare_by(direction, |x: T| x)
    }), _ => ());
    with_int!(input, T => return Ok(compare_by(direction, |x: T| x)), _ => ());
    use ComparisonDirection::*;
    match (input, direction) {
        (ElementType::Pred, _) => Ok(compare_by(direction, |x: Pred| x.get())),
        (ElementType::C64, Eq) => Ok(binary(|a: Complex32, b: Complex32| Pred::new(a == b))),
        (ElementType::C64, Ne) => Ok(binary(|a: Complex32, b: Complex32| Pred::new(a != b))),
        (ElementType::C128, Eq) => Ok(binary(|a: Complex64, b: Complex64| Pred::new(a == b))),
        (ElementType::C128, Ne) => Ok(binary(|a: Complex64, b: Complex64| Pred::new(a != b))),
        _ => Err(unsupported(format!("compare {direction}"), input)),
    }
}

/// The kernel for `convert` from one element type to another.
pub fn convert_fn(from: ElementType, to: ElementType) -> Result<UnaryFn> {
    let bad = || {
        Error::unimplemented(format!("convert from {from} to {to} is not supported"))
    };
    if from == to {
        return crate::with_width!(from.byte_size(), W => Ok(unary(|x: W| x)), _ => Err(bad()));
    }
    // Real to real: `as` semantics (saturating float to int, NaN to 0, rounding
    // to nearest even), f16/bf16 through f32.
    with_real!(from, S => {
        with_real!(to, D => return Ok(unary(|x: S| -> D { x.as_() })), _ => ());
        match to {
            ElementType::Pred => return Ok(unary(|x: S| {
                let wide: f64 = x.as_();
                Pred::new(wide != 0.0)
            })),
            ElementType::C64 => return Ok(unary(|x: S| Complex32::new(x.as_(), 0.0))),
            ElementType::C128 => return Ok(unary(|x: S| Complex64::new(x.as_(), 0.0))),
            _ => return Err(bad()),
        }
    }, _ => ());
    match from {
        ElementType::Pred => {
            with_real!(to, D => return Ok(unary(|x: Pred| -> D { (x.get() as u8).as_() })), _ => ());
            match to {
                ElementType::C64 => Ok(unary(|x: Pred| Complex32::new(x.get() as u8 as f32, 0.0))),
                ElementType::C128 => Ok(unary(|x: Pred| Complex64::new(x.get() as u8 as f64, 0.0))),
                _ => Err(bad()),
            }
        }
        ElementType::C64 => {
            with_real!(to, D => return Ok(unary(|z: Complex32| -> D { z.re.as_() })), _ => ());
            match to {
                ElementType::Pred => Ok(unary(|z: Complex32| Pred::new(z.re != 0.0 || z.im != 0.0))),
                ElementType::C128 => Ok(unary(|z: Complex32| Complex64::new(z.re as f64, z.im as f64))),
                _ => Err(bad()),
            }
        }
        ElementType::C128 => {
            with_real!(to, D => return Ok(unary(|z: Complex64| -> D { z.re.as_() })), _ => ());
            match to {
                ElementType::Pred => Ok(unary(|z: Complex64| Pred::new(z.re != 0.0 || z.im != 0.0))),
                ElementType::C64 => Ok(unary(|z: Complex64| Complex32::new(z.re as f32, z.im as f32))),
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

/// `reduce-precision` of a float type to `exponent_bits` and `mantissa_bits`,
/// bit for bit as XLA's emitter (round to nearest even, overflow to infinity,
/// underflow and denormals to zero, NaN kept).
pub fn reduce_precision_fn(ty: ElementType, exponent_bits: u32, mantissa_bits: u32) -> Result<UnaryFn> {
    let Some((src_exp, src_man)) = ty.float_bits() else {
        return Err(unsupported("reduce-precision", ty));
    };
    if exponent_bits < 1 {
        return Err(Error::invalid_argument(
            "reduce-precision needs at least one exponent bit",
        ));
    }
    let bits = ty.bit_width() as u32;
    let params = ReducePrecision::new(bits, src_exp, src_man, exponent_bits, mantissa_bits);
    Ok(match bits {
        16 => unary(move |x: u16| params.apply(x as u64) as u16),
        32 => unary(move |x: u32| params.apply(x as u64) as u32),
        _ => unary(move |x: u64| params.apply(x)),
    })
}

#[derive(Clone, Copy)]
struct ReducePrecision {
    sign_mask: u64,
    exp_mask: u64,
    value_mask: u64,
    round: Option<(u64, u32, u64, u64)>, // (last-bit mask, shift, base bias, truncation mask)
    exponent: Option<(u64, u64)>,        // (max exponent field, min exponent field)
    mantissa_bits: u32,
}

impl ReducePrecision {
    fn new(bits: u32, src_exp: u32, src_man: u32, dst_exp: u32, dst_man: u32) -> Self {
        let value_mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let sign_mask = 1u64 << (bits - 1);
        let exp_mask = ((1u64 << src_exp) - 1) << src_man;
        let round = (dst_man < src_man).then(|| {
            let shift = src_man - dst_man;
            let last = 1u64 << shift;
            let base_bias = (last >> 1).wrapping_sub(1);
            let truncation = !(last - 1) & value_mask;
            (last, shift, base_bias, truncation)
        });
        let exponent = (dst_exp < src_exp).then(|| {
            let bias = (1u64 << (src_exp - 1)) - 1;
            let reduced_bias = (1u64 << (dst_exp - 1)) - 1;
            (
                (bias + reduced_bias) << src_man,
                (bias - reduced_bias) << src_man,
            )
        });
        ReducePrecision {
            sign_mask,
            exp_mask,
            value_mask,
            round,
            exponent,
            mantissa_bits: dst_man,
        }
    }

    fn apply(&self, x: u64) -> u64 {
        let abs = x & !self.sign_mask & self.value_mask;
        let is_nan = abs > self.exp_mask;
        let mut v = x;
        if let Some((last, shift, base_bias, truncation)) = self.round {
            let bias = ((v & last) >> shift).wrapping_add(base_bias);
            v = v.wrapping_add(bias) & truncation & self.value_mask;
        }
        if let Some((max_exp, min_exp)) = self.exponent {
            let e = v & self.exp_mask;
            let signed_zero = v & self.sign_mask;
            let signed_inf = signed_zero | self.exp_mask;
            if e > max_exp {
                v = signed_inf;
            } else if e <= min_exp {
                v = signed_zero;
            }
        }
        if is_nan {
            if self.mantissa_bits > 0 {
                x
            } else {
                // No mantissa bits left: NaN can only become infinity.
                (x & self.sign_mask) | self.exp_mask
            }
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_unary<T: bytemuck::Pod, R: bytemuck::Pod + Default>(f: &UnaryFn, xs: &[T]) -> Vec<R> {
        let mut out = vec![R::default(); xs.len()];
        f(xs.as_ptr().cast(), out.as_mut_ptr().cast(), xs.len());
        out
    }

    fn run_binary<T: bytemuck::Pod, R: bytemuck::Pod + Default>(
        f: &BinaryFn,
        a: &[T],
        b: &[T],
    ) -> Vec<R> {
        let mut out = vec![R::default(); a.len()];
        f(a.as_ptr().cast(), b.as_ptr().cast(), out.as_mut_ptr().cast(), a.len());
        out
    }

    #[test]
    fn integer_division_edge_cases() {
        let f = binary_fn(BinaryOp::Divide, ElementType::S32, ElementType::S32).unwrap();
        let out: Vec<i32> = run_binary(&f, &[7, 7, i32::MIN, -7], &[2, 0, -1, 2]);
        assert_eq!(out, [3, -1, i32::MIN, -3]);
        let f = binary_fn(BinaryOp::Remainder, ElementType::S32, ElementType::S32).unwrap();
        let out: Vec<i32> = run_binary(&f, &[7, 7, i32::MIN, -7], &[2, 0, -1, 2]);
        assert_eq!(out, [1, 7, 0, -1]);
        let f = binary_fn(BinaryOp::Divide, ElementType::U8, ElementType::U8).unwrap();
        let out: Vec<u8> = run_binary(&f, &[9u8, 9], &[0, 4]);
        assert_eq!(out, [255, 2]);
    }

    #[test]
    fn shifts_past_the_width() {
        let shl = binary_fn(BinaryOp::ShiftLeft, ElementType::S8, ElementType::S8).unwrap();
        let out: Vec<i8> = run_binary(&shl, &[1i8, 1, 1], &[3, 8, -1]);
        assert_eq!(out, [8, 0, 0]);
        let sra =
            binary_fn(BinaryOp::ShiftRightArithmetic, ElementType::S8, ElementType::S8).unwrap();
        let out: Vec<i8> = run_binary(&sra, &[-16i8, -16, 16], &[2, 9, 9]);
        assert_eq!(out, [-4, -1, 0]);
        let srl = binary_fn(BinaryOp::ShiftRightLogical, ElementType::S8, ElementType::S8).unwrap();
        let out: Vec<i8> = run_binary(&srl, &[-16i8, -16], &[4, 8]);
        assert_eq!(out, [15, 0]);
    }

    #[test]
    fn integer_power() {
        let f = binary_fn(BinaryOp::Power, ElementType::S32, ElementType::S32).unwrap();
        let out: Vec<i32> = run_binary(&f, &[3, 2, 1, -1, 5, 0], &[4, 10, -3, -3, -1, 0]);
        // 3^4, 2^10, 1^-3 = 1, (-1)^-3 = 0 per XLA, 5^-1 = 0, 0^0 = 1.
        assert_eq!(out, [81, 1024, 1, 0, 0, 1]);
    }

    #[test]
    fn float_max_min_propagate_nan_and_sign() {
        let max = binary_fn(BinaryOp::Maximum, ElementType::F32, ElementType::F32).unwrap();
        let out: Vec<f32> = run_binary(&max, &[1.0, f32::NAN, 2.0], &[f32::NAN, 1.0, 3.0]);
        assert!(out[0].is_nan() && out[1].is_nan());
        assert_eq!(out[2], 3.0);
        let sign = unary_fn(UnaryOp::Sign, ElementType::F32, ElementType::F32).unwrap();
        let out: Vec<f32> = run_unary(&sign, &[-3.0f32, -0.0, 0.0, 2.5, f32::NAN]);
        assert_eq!(out[0], -1.0);
        assert!(out[1] == 0.0 && out[1].is_sign_negative());
        assert!(out[2] == 0.0 && out[2].is_sign_positive());
        assert_eq!(out[3], 1.0);
        assert!(out[4].is_nan());
    }

    #[test]
    fn total_order_compare() {
        let lt = compare_fn(
            ComparisonDirection::Lt,
            Some(ComparisonType::TotalOrder),
            ElementType::F32,
        )
        .unwrap();
        let a = [-0.0f32, -f32::NAN, 1.0, f32::NEG_INFINITY];
        let b = [0.0f32, f32::NEG_INFINITY, f32::NAN, -1.0];
        let out: Vec<Pred> = run_binary(&lt, &a, &b);
        assert_eq!(out, [Pred(1), Pred(1), Pred(1), Pred(1)]);
        let plain = compare_fn(ComparisonDirection::Lt, None, ElementType::F32).unwrap();
        let out: Vec<Pred> = run_binary(&plain, &a, &b);
        assert_eq!(out, [Pred(0), Pred(0), Pred(0), Pred(1)]);
    }

    #[test]
    fn conversions_saturate_and_round() {
        let f = convert_fn(ElementType::F32, ElementType::S8).unwrap();
        let out: Vec<i8> = run_unary(&f, &[300.0f32, -300.0, f32::NAN, 2.7, -2.7]);
        assert_eq!(out, [127, -128, 0, 2, -2]);
        let f = convert_fn(ElementType::F32, ElementType::Pred).unwrap();
        let out: Vec<Pred> = run_unary(&f, &[0.0f32, -0.0, f32::NAN, 0.5]);
        assert_eq!(out, [Pred(0), Pred(0), Pred(1), Pred(1)]);
        let f = convert_fn(ElementType::S32, ElementType::S8).unwrap();
        let out: Vec<i8> = run_unary(&f, &[300i32, -129]);
        assert_eq!(out, [44, 127]);
        let f = convert_fn(ElementType::F32, ElementType::F16).unwrap();
        let out: Vec<f16> = run_unary(&f, &[1.0f32 + 1.0 / 4096.0, 70000.0]);
        assert_eq!(out[0], f16::ONE);
        assert!(out[1].is_infinite());
        let f = convert_fn(ElementType::C64, ElementType::F32).unwrap();
        let out: Vec<f32> = run_unary(&f, &[Complex32::new(2.5, -1.0)]);
        assert_eq!(out, [2.5]);
    }

    #[test]
    fn reduce_precision_to_bf16_matches_rounding() {
        let f = reduce_precision_fn(ElementType::F32, 8, 7).unwrap();
        let xs = [1.0f32 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, f32::MAX, 1e-39, f32::NAN];
        let out: Vec<f32> = run_unary(&f, &xs);
        assert_eq!(out[0], 1.0); // tie to even
        assert_eq!(out[1], 1.0 + 4.0 / 256.0); // tie to even (up)
        assert!(out[2].is_infinite()); // rounds past the largest bf16
        // Same exponent width: denormals are rounded, not flushed.
        assert_eq!(out[3], bf16::from_f32(1e-39).to_f32());
        assert!(out[4].is_nan());
        for x in [0.1f32, -3.75, 1234.567] {
            let got: Vec<f32> = run_unary(&f, &[x]);
            assert_eq!(got[0], bf16::from_f32(x).to_f32());
        }
    }
}
