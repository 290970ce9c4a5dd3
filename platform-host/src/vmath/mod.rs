//! `vmath`: elementwise slice kernels for the host backend's fused loops.
//!
//! # Why slices, why blocks
//!
//! The host backend does not generate machine code. A fused elementwise
//! computation is run block by block: a block of a few hundred to a few
//! thousand elements is small enough that every intermediate stays in L1, and
//! each HLO instruction of the fusion becomes one call here over the whole
//! block (`exp(block_a) → block_b`, `block_b * block_c → block_a`, ...). The
//! per-call overhead (a match on the op and on the level) is paid once per
//! block, and each call is a tight loop the compiler has vectorised. This is
//! how the interpreter-free evaluator approaches what XLA's JIT gets from
//! emitting one fused loop.
//!
//! # Why multiversioning
//!
//! Rust compiles for baseline x86-64 (SSE2, 128-bit vectors, no FMA) unless told
//! otherwise, while the machines we run on usually have AVX2+FMA or AVX-512.
//! Every kernel body here is written once, generic over an [`isa::Isa`] marker,
//! and instantiated three times inside `#[target_feature]` trampolines
//! ([`Level::Baseline`], [`Level::Avx2`], [`Level::Avx512`]). The level is probed
//! once with `is_x86_feature_detected!` and cached in an atomic; each call does
//! one relaxed load and one match. `VMATH_LEVEL=baseline|avx2|avx512` (read
//! once) or [`set_level`] lowers it, and every kernel also has a form taking an
//! explicit [`Level`] for tests and benchmarks.
//!
//! # Semantics
//!
//! Everything but the transcendental functions is bit-exact with
//! `platform_api::semantics` (and so with the interpreter): the exact arithmetic
//! ops round once each (no `a * b + c` is ever contracted into an FMA: each
//! kernel is one HLO op), `maximum`/`minimum` propagate NaN and order `-0 < +0`,
//! comparisons (IEEE and `TOTALORDER`), `select`, `clamp`, rounding, `sign`,
//! `is-finite`, `remainder` (exact `fmod`), the integer ops (division by zero,
//! shifts past the width, ...) and every conversion (saturating float → int,
//! NaN → 0, round-to-nearest-even narrowing, f16/bf16 NaN quieting). Like the
//! shared semantics, and unlike XLA CPU (which sets FTZ/DAZ), subnormals are
//! kept: `exp(-100f32)` is `3.8e-44`, not 0.
//!
//! The transcendentals are vectorised polynomial approximations (coefficients
//! from `scripts/fit_vmath_poly.py`) with XLA's special values: ±0, ±inf, NaN,
//! overflow and underflow thresholds, `tanh`/`erf` saturating to ±1,
//! `logistic(x) = 1 / (1 + exp(-x))` (XLA's expansion, so `logistic(-89f32) = 0`),
//! `log` of a negative number is NaN. `pow(f32)` is computed in `f64`, trig
//! arguments beyond `2^17` (`f32`) / `2^20` (`f64`) fall back to the C library.
//! Measured maximum errors (`cargo test --release -p platform-host --test
//! vmath_accuracy -- --nocapture`, worst level; f32 against the C library's
//! f64 function, i.e. against the correctly rounded result; f64 against the C
//! library's f64 function, itself within about one ULP) and the largest
//! distance to XLA CPU's own output on `tests/data/vmath` (`cargo test -p platform-host --test suite vmath_xla::`):
//!
//! | function | f32 max ULP | f64 max ULP | f32 / f64 distance to XLA | notes |
//! | --- | --- | --- | --- | --- |
//! | exp | 1.01 | 1 | 4 / 1 | subnormal results rounded once |
//! | expm1 | 1.40 | 2 | 5 / 3 | |
//! | log | 0.92 | 1 | 1 / 1 | |
//! | log1p | 0.76 | 1 | 1 / 5 | f32: the C library's `log1pf`, bit for bit |
//! | tanh | 4.27 | 2 | 4 / 3 | f32: one rational function (5.2 ULP at most over every f32 below 9.1); XLA saturates to ±1 from 7.9 on, we from 9.01 (correctly) |
//! | logistic | 2.26 | 3 | 1 / 1 | `1/(1+exp(-x))`: 0 below -88.7 (f32), like XLA |
//! | erf | 2.29 | C library | 4 / 0 | f64 is scalar |
//! | sin, cos | 1.46 | 1 | 1 / 1 | `|x| <= 2^17` (f32), `2^20` (f64); C library beyond |
//! | tan | 3.16 | 2 | 2 / 1 | as sin/cos (`sin/cos` of the reduced argument) |
//! | cbrt | 0.50 | C library | 1 / 2 | f64 is scalar |
//! | pow | 0.50 | C library | 0 / 0 | f32 computed in f64; f64 is scalar |
//! | atan2 | 1.26 | C library | 1 / 0 | f64 is scalar |
//! | sqrt, div, rem | exact | exact | 0 | |
//! | rsqrt | exact `1/sqrt` | exact `1/sqrt` | 2 / 2 | two roundings, as the semantics define it |
//!
//! # Speed
//!
//! `cargo bench -p platform-host --bench vmath` prints ns/element per kernel and
//! level on a 1024-element block. On the 2-core AVX-512 development machine:
//! `f32` add/mul 0.045 ns (about 7 elements per cycle), `exp` 0.31, `log`
//! 0.45, `tanh` 0.46, `logistic` 0.43, `sin` 0.35-0.48, `erf` 0.98 (the
//! C library's scalar `expf` is 3.7 ns, `tanhf` 12). Not fast yet: `pow(f32)`
//! 3.2 ns (two `f64` transcendentals), `cbrt` 1.4 ns, `remainder` 1.5 ns, the
//! scalar `f64` `erf`/`cbrt`/`pow`/`atan2`, and integer division (no vector
//! division on x86, 2 ns).
//!
//! # API
//!
//! * [`f32`] and [`f64`]: `unary(op, src, dst)`, `unary_inplace(op, buf)`,
//!   `binary(op, a, b, dst)`, `compare`, `clamp`, `is_finite`, and one named
//!   function per op (`exp(src, dst)`, `add(a, b, dst)`, ...). Binary operands are
//!   [`Operand`]s: a slice, a scalar broadcast over the block, or
//!   [`Operand::Dst`], the destination's current contents (in-place update).
//!   `fused_multiply_add(how, a, b, c, dst)` is XLA CPU's contraction of a
//!   single-use multiply into an add/subtract (one rounding; see
//!   `platform_api::semantics::contraction`). The generic entry points also
//!   exist suffixed `_at`, taking an explicit [`Level`].
//! * [`int`]: the integer ops for `i8`..`i64`, `u8`..`u64`.
//! * [`select()`], [`convert()`] (any pair of `pred`/integer/`f32`/`f64` types),
//!   and the `f16`/`bf16` ↔ `f32` conversions on raw `u16` bits in [`convert`].
//!
//! Errors: a length mismatch, or [`Operand::Dst`] where the destination has
//! another type, is an `InvalidArgument` naming the kernel and the lengths.

mod blend;
mod float;
pub mod int;
pub mod isa;
mod kernels;
// The split constants in these are exact binary values written out in full.
#[allow(clippy::excessive_precision)]
pub(crate) mod math32;
#[allow(clippy::excessive_precision)]
mod math64;
pub(crate) mod poly;

pub mod convert;
pub use convert::convert;
pub use float::VFloat;
pub use isa::{detected_level, level, set_level, Level};
pub use platform_api::hlo::ComparisonDirection;
pub use platform_api::semantics::contraction::Contraction;

use platform_api::hlo::{BinaryOp, UnaryOp};
use platform_api::{Error, Result};

/// One input of a kernel.
#[derive(Clone, Copy, Debug)]
pub enum Operand<'a, T> {
    /// One element per destination element.
    Slice(&'a [T]),
    /// One value used for every element (a broadcast scalar).
    Scalar(T),
    /// The destination's own contents before the call (an in-place update).
    Dst,
}

impl<'a, T> From<&'a [T]> for Operand<'a, T> {
    fn from(s: &'a [T]) -> Self {
        Operand::Slice(s)
    }
}

impl<'a, T> From<&'a Vec<T>> for Operand<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        Operand::Slice(s)
    }
}

/// The float unary ops (`is-finite`, which gives `pred`, is a separate kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatUnary {
    Neg,
    Abs,
    Sign,
    Sqrt,
    Rsqrt,
    Cbrt,
    Exp,
    Expm1,
    Log,
    Log1p,
    Logistic,
    Tanh,
    Erf,
    Sin,
    Cos,
    Tan,
    Floor,
    Ceil,
    RoundNearestEven,
    RoundNearestAfz,
}

impl FloatUnary {
    pub const ALL: [FloatUnary; 20] = [
        FloatUnary::Neg,
        FloatUnary::Abs,
        FloatUnary::Sign,
        FloatUnary::Sqrt,
        FloatUnary::Rsqrt,
        FloatUnary::Cbrt,
        FloatUnary::Exp,
        FloatUnary::Expm1,
        FloatUnary::Log,
        FloatUnary::Log1p,
        FloatUnary::Logistic,
        FloatUnary::Tanh,
        FloatUnary::Erf,
        FloatUnary::Sin,
        FloatUnary::Cos,
        FloatUnary::Tan,
        FloatUnary::Floor,
        FloatUnary::Ceil,
        FloatUnary::RoundNearestEven,
        FloatUnary::RoundNearestAfz,
    ];

    /// The matching HLO op.
    pub fn hlo(self) -> UnaryOp {
        match self {
            FloatUnary::Neg => UnaryOp::Negate,
            FloatUnary::Abs => UnaryOp::Abs,
            FloatUnary::Sign => UnaryOp::Sign,
            FloatUnary::Sqrt => UnaryOp::Sqrt,
            FloatUnary::Rsqrt => UnaryOp::Rsqrt,
            FloatUnary::Cbrt => UnaryOp::Cbrt,
            FloatUnary::Exp => UnaryOp::Exp,
            FloatUnary::Expm1 => UnaryOp::Expm1,
            FloatUnary::Log => UnaryOp::Log,
            FloatUnary::Log1p => UnaryOp::Log1p,
            FloatUnary::Logistic => UnaryOp::Logistic,
            FloatUnary::Tanh => UnaryOp::Tanh,
            FloatUnary::Erf => UnaryOp::Erf,
            FloatUnary::Sin => UnaryOp::Sin,
            FloatUnary::Cos => UnaryOp::Cos,
            FloatUnary::Tan => UnaryOp::Tan,
            FloatUnary::Floor => UnaryOp::Floor,
            FloatUnary::Ceil => UnaryOp::Ceil,
            FloatUnary::RoundNearestEven => UnaryOp::RoundNearestEven,
            FloatUnary::RoundNearestAfz => UnaryOp::RoundNearestAfz,
        }
    }

    /// The kernel for an HLO unary op on floats, if it is one of these
    /// (`is-finite` has its own kernel; `real`/`imag` of a real are copies).
    pub fn from_hlo(op: UnaryOp) -> Option<FloatUnary> {
        FloatUnary::ALL.into_iter().find(|u| u.hlo() == op)
    }

    /// The HLO spelling (`exponential`, `log-plus-one`, ...).
    pub fn name(self) -> &'static str {
        self.hlo().name()
    }
}

/// The float binary ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatBinary {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
    Atan2,
    Rem,
}

impl FloatBinary {
    pub const ALL: [FloatBinary; 9] = [
        FloatBinary::Add,
        FloatBinary::Sub,
        FloatBinary::Mul,
        FloatBinary::Div,
        FloatBinary::Max,
        FloatBinary::Min,
        FloatBinary::Pow,
        FloatBinary::Atan2,
        FloatBinary::Rem,
    ];

    pub fn hlo(self) -> BinaryOp {
        match self {
            FloatBinary::Add => BinaryOp::Add,
            FloatBinary::Sub => BinaryOp::Subtract,
            FloatBinary::Mul => BinaryOp::Multiply,
            FloatBinary::Div => BinaryOp::Divide,
            FloatBinary::Max => BinaryOp::Maximum,
            FloatBinary::Min => BinaryOp::Minimum,
            FloatBinary::Pow => BinaryOp::Power,
            FloatBinary::Atan2 => BinaryOp::Atan2,
            FloatBinary::Rem => BinaryOp::Remainder,
        }
    }

    pub fn from_hlo(op: BinaryOp) -> Option<FloatBinary> {
        FloatBinary::ALL.into_iter().find(|b| b.hlo() == op)
    }

    pub fn name(self) -> &'static str {
        self.hlo().name()
    }
}

/// Generates the public API of one float type.
macro_rules! float_api {
    ($T:ident) => {
        use super::{float, Contraction, FloatBinary, FloatUnary, Level, Operand};
        use platform_api::hlo::ComparisonDirection;
        use platform_api::Result;

        /// `dst = op(src)` at the current level.
        #[inline]
        pub fn unary(op: FloatUnary, src: &[$T], dst: &mut [$T]) -> Result<()> {
            float::unary(super::level(), op, src, dst)
        }
        /// `dst = op(src)` at `level`.
        pub fn unary_at(level: Level, op: FloatUnary, src: &[$T], dst: &mut [$T]) -> Result<()> {
            float::unary(level, op, src, dst)
        }
        /// `buf = op(buf)` at the current level.
        #[inline]
        pub fn unary_inplace(op: FloatUnary, buf: &mut [$T]) {
            float::unary_inplace(super::level(), op, buf)
        }
        /// `buf = op(buf)` at `level`.
        pub fn unary_inplace_at(level: Level, op: FloatUnary, buf: &mut [$T]) {
            float::unary_inplace(level, op, buf)
        }
        /// `dst = op(a, b)` at the current level.
        #[inline]
        pub fn binary(op: FloatBinary, a: Operand<'_, $T>, b: Operand<'_, $T>, dst: &mut [$T]) -> Result<()> {
            float::binary(super::level(), op, a, b, dst)
        }
        /// `dst = op(a, b)` at `level`.
        pub fn binary_at(
            level: Level,
            op: FloatBinary,
            a: Operand<'_, $T>,
            b: Operand<'_, $T>,
            dst: &mut [$T],
        ) -> Result<()> {
            float::binary(level, op, a, b, dst)
        }
        /// `dst = clamp(lo, x, hi)` = `minimum(hi, maximum(lo, x))`.
        #[inline]
        pub fn clamp(lo: Operand<'_, $T>, x: Operand<'_, $T>, hi: Operand<'_, $T>, dst: &mut [$T]) -> Result<()> {
            float::clamp(super::level(), lo, x, hi, dst)
        }
        pub fn clamp_at(
            level: Level,
            lo: Operand<'_, $T>,
            x: Operand<'_, $T>,
            hi: Operand<'_, $T>,
            dst: &mut [$T],
        ) -> Result<()> {
            float::clamp(level, lo, x, hi, dst)
        }
        /// `dst = a * b + c` with one rounding, arranged as `how` says (XLA CPU's
        /// contraction of a multiply into an add/subtract).
        #[inline]
        pub fn fused_multiply_add(
            how: Contraction,
            a: Operand<'_, $T>,
            b: Operand<'_, $T>,
            c: Operand<'_, $T>,
            dst: &mut [$T],
        ) -> Result<()> {
            float::fused_multiply_add(super::level(), how, a, b, c, dst)
        }
        pub fn fused_multiply_add_at(
            level: Level,
            how: Contraction,
            a: Operand<'_, $T>,
            b: Operand<'_, $T>,
            c: Operand<'_, $T>,
            dst: &mut [$T],
        ) -> Result<()> {
            float::fused_multiply_add(level, how, a, b, c, dst)
        }
        /// `dst = (a <dir> b)` as 0/1 bytes; `total_order` picks `TOTALORDER`.
        #[inline]
        pub fn compare(
            dir: ComparisonDirection,
            total_order: bool,
            a: Operand<'_, $T>,
            b: Operand<'_, $T>,
            dst: &mut [u8],
        ) -> Result<()> {
            float::compare(super::level(), dir, total_order, a, b, dst)
        }
        pub fn compare_at(
            level: Level,
            dir: ComparisonDirection,
            total_order: bool,
            a: Operand<'_, $T>,
            b: Operand<'_, $T>,
            dst: &mut [u8],
        ) -> Result<()> {
            float::compare(level, dir, total_order, a, b, dst)
        }
        /// `dst = is_finite(src)` as 0/1 bytes.
        #[inline]
        pub fn is_finite(src: &[$T], dst: &mut [u8]) -> Result<()> {
            float::is_finite(super::level(), src, dst)
        }
        pub fn is_finite_at(level: Level, src: &[$T], dst: &mut [u8]) -> Result<()> {
            float::is_finite(level, src, dst)
        }

        float_api!(@unary $T, neg Neg, abs Abs, sign Sign, sqrt Sqrt, rsqrt Rsqrt, cbrt Cbrt,
            exp Exp, expm1 Expm1, log Log, log1p Log1p, logistic Logistic, tanh Tanh, erf Erf,
            sin Sin, cos Cos, tan Tan, floor Floor, ceil Ceil,
            round_nearest_even RoundNearestEven, round_nearest_afz RoundNearestAfz);
        float_api!(@binary $T, add Add, sub Sub, mul Mul, div Div, max Max, min Min, pow Pow,
            atan2 Atan2, rem Rem);
    };
    (@unary $T:ident, $($name:ident $op:ident),*) => {$(
        #[doc = concat!("`dst = ", stringify!($name), "(src)` at the current level.")]
        #[inline]
        pub fn $name(src: &[$T], dst: &mut [$T]) -> Result<()> {
            unary(FloatUnary::$op, src, dst)
        }
    )*};
    (@binary $T:ident, $($name:ident $op:ident),*) => {$(
        #[doc = concat!("`dst = ", stringify!($name), "(a, b)` at the current level.")]
        #[inline]
        pub fn $name(a: Operand<'_, $T>, b: Operand<'_, $T>, dst: &mut [$T]) -> Result<()> {
            binary(FloatBinary::$op, a, b, dst)
        }
    )*};
}

/// `f32` kernels.
pub mod f32 {
    float_api!(f32);
}

/// `f64` kernels.
pub mod f64 {
    float_api!(f64);
}

/// Element types [`select()`] moves (by size: the bits are copied unchanged).
pub trait SelectElem: Copy + Send + Sync + 'static {}
impl SelectElem for u8 {}
impl SelectElem for i8 {}
impl SelectElem for u16 {}
impl SelectElem for i16 {}
impl SelectElem for u32 {}
impl SelectElem for i32 {}
impl SelectElem for ::core::primitive::f32 {}
impl SelectElem for u64 {}
impl SelectElem for i64 {}
impl SelectElem for ::core::primitive::f64 {}

/// `dst[i] = if pred[i] != 0 { on_true[i] } else { on_false[i] }` at the
/// current level (a scalar `pred` picks one branch for the whole block).
#[inline]
pub fn select<T: SelectElem>(
    pred: Operand<'_, u8>,
    on_true: Operand<'_, T>,
    on_false: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    select_at(level(), pred, on_true, on_false, dst)
}

/// [`select()`] at `level`.
pub fn select_at<T: SelectElem>(
    level: Level,
    pred: Operand<'_, u8>,
    on_true: Operand<'_, T>,
    on_false: Operand<'_, T>,
    dst: &mut [T],
) -> Result<()> {
    let n = dst.len();
    kernels::check_lengths("select", &[&on_true, &on_false], n)?;
    kernels::check_lengths("select", &[&pred], n)?;
    match pred {
        Operand::Dst => Err(Error::invalid_argument(
            "vmath select: the predicate cannot be Operand::Dst (the destination is not pred)",
        )),
        Operand::Scalar(p) => {
            let branch = if p != 0 { on_true } else { on_false };
            match branch {
                Operand::Slice(s) => dst.copy_from_slice(s),
                Operand::Scalar(c) => dst.fill(c),
                Operand::Dst => {}
            }
            Ok(())
        }
        Operand::Slice(p) => {
            let p = &p[..n];
            #[cfg(target_arch = "x86_64")]
            if level.min(detected_level()) == Level::Avx2 {
                // SAFETY: the processor has AVX2 (the level is at most the
                // detected one); the lengths were checked above.
                if unsafe { blend::select_avx2(p, on_true, on_false, dst) } {
                    return Ok(());
                }
            }
            isa::dispatch!(level, I => kernels::with_lane!(on_true, n, lt => kernels::with_lane!(on_false, n, lf => {
                kernels::select_lanes(p, lt, lf, dst)
            })));
            Ok(())
        }
    }
}
