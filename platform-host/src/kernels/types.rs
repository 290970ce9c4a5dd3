//! Rust types for element types, and macros that pick one at compile time of a
//! thunk (never per element).
//!
//! * [`with_type!`] binds a type alias to the Rust type of an [`ElementType`]
//!   (`pred` is [`Pred`], a byte that is 0 or 1) and evaluates a body with it.
//! * [`with_width!`] binds a plain-old-data type of the element's byte width,
//!   for kernels that only move elements (transpose, slice, gather): one
//!   instantiation per width instead of per type.
//! * [`with_float!`], [`with_int!`], [`with_real!`] bind the real float, the
//!   integer, or either kind of type.
//! * [`Float`] and [`Int`]: the shared semantics as methods, for kernels with
//!   typed loops of their own (sort keys, integer GEMM). What an elementwise
//!   op computes is the op table's ([`crate::elementwise_ops`]).

use bytemuck::{Pod, Zeroable};
use platform_api::semantics::float::{self as fs, FloatSemantics};
use platform_api::semantics::int::{self as is, IntSemantics};

/// A `pred` element: one byte, 0 or 1 when written by a kernel (any non-zero
/// byte reads as true). The shared semantics' type, so conversions and
/// comparisons take it directly.
pub use platform_api::semantics::convert::Pred;

/// A 16-byte element (c128) moved as a unit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Bytes16(pub [u64; 2]);

/// Evaluates `$body` with `$T` bound to the Rust type of element type `$ty`.
#[macro_export]
macro_rules! with_type {
    ($ty:expr, $T:ident => $body:expr) => {{
        use platform_api::ElementType as __Et;
        match $ty {
            __Et::Pred => {
                #[allow(dead_code)]
                type $T = $crate::kernels::types::Pred;
                $body
            }
            __Et::S8 => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            __Et::S16 => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            __Et::S32 => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            __Et::S64 => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            __Et::U8 => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            __Et::U16 => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            __Et::U32 => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            __Et::U64 => {
                #[allow(dead_code)]
                type $T = u64;
                $body
            }
            __Et::F16 => {
                #[allow(dead_code)]
                type $T = half::f16;
                $body
            }
            __Et::BF16 => {
                #[allow(dead_code)]
                type $T = half::bf16;
                $body
            }
            __Et::F32 => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            __Et::F64 => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
            __Et::C64 => {
                #[allow(dead_code)]
                type $T = num_complex::Complex32;
                $body
            }
            __Et::C128 => {
                #[allow(dead_code)]
                type $T = num_complex::Complex64;
                $body
            }
        }
    }};
}

/// Evaluates `$body` with `$W` bound to a plain type of `$bytes` bytes (1, 2,
/// 4, 8 or 16); other widths evaluate `$other`.
#[macro_export]
macro_rules! with_width {
    ($bytes:expr, $W:ident => $body:expr, _ => $other:expr) => {{
        match $bytes {
            1 => {
                type $W = u8;
                $body
            }
            2 => {
                type $W = u16;
                $body
            }
            4 => {
                type $W = u32;
                $body
            }
            8 => {
                type $W = u64;
                $body
            }
            16 => {
                type $W = $crate::kernels::types::Bytes16;
                $body
            }
            _ => $other,
        }
    }};
}

/// Float element types, with the shared semantics as methods.
pub trait Float: FloatSemantics + Pod + Send + Sync + 'static {
    /// An integer whose order is IEEE totalOrder.
    #[inline(always)]
    fn total_order_key(self) -> i64 {
        fs::total_order_key(self)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        fs::is_nan(self)
    }
    /// Whether the value is ±0.
    #[inline(always)]
    fn is_zero(self) -> bool {
        fs::eq(self, Self::from_bits_u64(0))
    }
    /// +0.
    #[inline(always)]
    fn positive_zero() -> Self {
        Self::from_bits_u64(0)
    }
}
impl<T: FloatSemantics + Pod + Send + Sync + 'static> Float for T {}

/// Integer element types, with the shared semantics' wrapping arithmetic as
/// methods.
pub trait Int: IntSemantics + Pod + Ord + Send + Sync + 'static {
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        is::add(self, o)
    }
    #[inline(always)]
    fn wmul(self, o: Self) -> Self {
        is::multiply(self, o)
    }
}
impl<T: IntSemantics + Pod + Ord + Send + Sync + 'static> Int for T {}

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
