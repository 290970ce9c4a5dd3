//! Elementwise kernels as typed loops: for each (operation, element type) a
//! kernel function, chosen once when a thunk is compiled.
//!
//! What each op computes is `platform_api::semantics` (the rules every backend
//! shares, so the Host agrees with the interpreter bit for bit outside the
//! transcendental functions). How: f32, f64 and integer ops run the
//! multiversioned, vectorized slice kernels of [`crate::vmath`] (AVX2 or
//! AVX-512 when present); the other types (f16, bf16, complex, pred) and the
//! ops `vmath` lacks run the semantics' element functions in this module's
//! multiversioned loops ([`unary`], [`binary`]); conversions use the
//! semantics' generic conversion for every type pair.
//!
//! Kernel functions take raw pointers so a result may be written over an
//! operand (element `i` is read before it is written; the `vmath` adapters
//! pass such an operand as the destination itself); pointers must be aligned
//! for their element types and valid for `n` elements.

use super::types::Pred;
use crate::vmath;
use num_complex::{Complex32, Complex64};
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::semantics::complex::{self as cs, ComplexSemantics};
use platform_api::semantics::convert as conv;
use platform_api::semantics::float::{self as fs, FloatSemantics};
use platform_api::semantics::int::{self as is, IntSemantics};
use platform_api::semantics::kernels as sk;
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

/// Float element types, with the shared semantics (`platform_api::semantics`)
/// as methods for the typed loops of kernels (reductions, scatter combiners).
pub trait Float: FloatSemantics + bytemuck::Pod + Send + Sync + 'static {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        fs::add(self, o)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        fs::multiply(self, o)
    }
    /// XLA's `maximum`: NaN if either is NaN, `-0 < +0`.
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        fs::maximum(self, o)
    }
    /// XLA's `minimum`: NaN if either is NaN, `-0 < +0`.
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        fs::minimum(self, o)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        fs::is_nan(self)
    }
    /// An integer whose order is IEEE totalOrder.
    #[inline(always)]
    fn total_order_key(self) -> i64 {
        fs::total_order_key(self)
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
impl<T: FloatSemantics + bytemuck::Pod + Send + Sync + 'static> Float for T {}

/// Branch-free `maximum` / `minimum` for f32 and f64, bit for bit the shared
/// semantics' (NaN propagates as the first NaN operand, `-0 < +0`, ties give
/// the first operand) but written as selects so reductions vectorize.
macro_rules! fast_min_max {
    ($t:ty, $max:ident, $min:ident) => {
        #[inline(always)]
        pub fn $max(a: $t, b: $t) -> $t {
            let m = if a > b { a } else { b };
            // Equal values: identical bits, except ±0 where AND keeps +0.
            let m = if a == b {
                <$t>::from_bits(a.to_bits() & b.to_bits())
            } else {
                m
            };
            let m = if b.is_nan() { b } else { m };
            if a.is_nan() {
                a
            } else {
                m
            }
        }
        #[inline(always)]
        pub fn $min(a: $t, b: $t) -> $t {
            let m = if a < b { a } else { b };
            // Equal values: identical bits, except ±0 where OR keeps -0.
            let m = if a == b {
                <$t>::from_bits(a.to_bits() | b.to_bits())
            } else {
                m
            };
            let m = if b.is_nan() { b } else { m };
            if a.is_nan() {
                a
            } else {
                m
            }
        }
    };
}
fast_min_max!(f32, max_f32, min_f32);
fast_min_max!(f64, max_f64, min_f64);

/// Integer element types, with the shared semantics as methods.
pub trait Int: IntSemantics + bytemuck::Pod + Ord + Send + Sync + 'static {
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        is::add(self, o)
    }
    #[inline(always)]
    fn wmul(self, o: Self) -> Self {
        is::multiply(self, o)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        is::and(self, o)
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        is::or(self, o)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        is::xor(self, o)
    }
}
impl<T: IntSemantics + bytemuck::Pod + Ord + Send + Sync + 'static> Int for T {}

/// Receives the typed element function that [`typed_combiner`] chose.
pub(crate) trait CombinerVisitor {
    type Out;
    fn visit<T, F>(self, f: F) -> Self::Out
    where
        T: bytemuck::Pod + Send + Sync + 'static,
        F: Fn(T, T) -> T + Copy + Send + Sync + 'static;
}

/// The element function of a reducer or scatter combiner that is the single
/// binary op `op` on `ty`, handed to `visitor` with its Rust type; `None` when
/// there is no typed one (callers then run the combiner through the scalar
/// evaluator). One table for every kernel that combines values, so reduce,
/// reduce-window and scatter agree on what is fast and what it computes.
pub(crate) fn typed_combiner<V: CombinerVisitor>(
    op: BinaryOp,
    ty: ElementType,
    visitor: V,
) -> Option<V::Out> {
    use BinaryOp::*;
    macro_rules! go {
        ($T:ty, $f:expr) => {
            Some(visitor.visit::<$T, _>($f))
        };
    }
    match (op, ty) {
        (Maximum, ElementType::F32) => return go!(f32, max_f32),
        (Minimum, ElementType::F32) => return go!(f32, min_f32),
        (Maximum, ElementType::F64) => return go!(f64, max_f64),
        (Minimum, ElementType::F64) => return go!(f64, min_f64),
        _ => {}
    }
    crate::with_float!(ty, T => return match op {
        Add => go!(T, |a: T, b: T| a.add(b)),
        Multiply => go!(T, |a: T, b: T| a.mul(b)),
        Maximum => go!(T, |a: T, b: T| a.max_nan(b)),
        Minimum => go!(T, |a: T, b: T| a.min_nan(b)),
        _ => None,
    }, _ => ());
    crate::with_int!(ty, T => return match op {
        Add => go!(T, |a: T, b: T| a.wadd(b)),
        Multiply => go!(T, |a: T, b: T| a.wmul(b)),
        Maximum => go!(T, |a: T, b: T| Ord::max(a, b)),
        Minimum => go!(T, |a: T, b: T| Ord::min(a, b)),
        And => go!(T, |a: T, b: T| a.and(b)),
        Or => go!(T, |a: T, b: T| a.or(b)),
        Xor => go!(T, |a: T, b: T| a.xor(b)),
        _ => None,
    }, _ => ());
    if ty == ElementType::Pred {
        // As in XLA: `add` and `maximum` are `or`, `multiply` and `minimum` `and`.
        return match op {
            And | Minimum | Multiply => go!(Pred, |a: Pred, b: Pred| Pred(a.0 & b.0)),
            Or | Maximum | Add => go!(Pred, |a: Pred, b: Pred| Pred(a.0 | b.0)),
            Xor => go!(Pred, |a: Pred, b: Pred| Pred(a.0 ^ b.0)),
            _ => None,
        };
    }
    None
}

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

/// A slice of `n` elements at `p`.
///
/// # Safety
/// `p` must be valid and aligned for `n` elements, and not written while the
/// slice lives.
#[inline(always)]
unsafe fn view<'a, T>(p: *const T, n: usize) -> &'a [T] {
    // SAFETY: forwarded.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// A mutable slice of `n` elements at `p`.
///
/// # Safety
/// As [`view`], and nothing else may access the elements while it lives.
#[inline(always)]
unsafe fn view_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    // SAFETY: forwarded.
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

/// An input of a `vmath` kernel: the destination itself when the pointers are
/// equal (buffer assignment's in-place reuse), else a slice.
///
/// # Safety
/// As [`view`] for a distinct input.
#[inline(always)]
unsafe fn operand<'a, T>(p: *const T, out: *mut T, n: usize) -> vmath::Operand<'a, T> {
    if p == out.cast_const() {
        vmath::Operand::Dst
    } else {
        // SAFETY: a distinct input of `n` elements.
        vmath::Operand::Slice(unsafe { view(p, n) })
    }
}

macro_rules! vmath_float {
    ($T:ident) => {
        pub fn $T(
            op: Option<vmath::FloatUnary>,
            bin: Option<vmath::FloatBinary>,
        ) -> Option<(Option<UnaryFn>, Option<BinaryFn>)> {
            let u = op.map(|op| -> UnaryFn {
                Arc::new(move |a: *const u8, out: *mut u8, n: usize| {
                    let (a, out) = (a.cast::<$T>(), out.cast::<$T>());
                    // SAFETY: the caller passes `n`-element buffers; equal
                    // pointers take the in-place form.
                    unsafe {
                        if a == out.cast_const() {
                            vmath::$T::unary_inplace(op, view_mut(out, n));
                        } else {
                            let r = vmath::$T::unary(op, view(a, n), view_mut(out, n));
                            debug_assert!(r.is_ok());
                        }
                    }
                })
            });
            let b = bin.map(|op| -> BinaryFn {
                Arc::new(move |a: *const u8, b: *const u8, out: *mut u8, n: usize| {
                    let (a, b, out) = (a.cast::<$T>(), b.cast::<$T>(), out.cast::<$T>());
                    // SAFETY: as above.
                    unsafe {
                        let r = vmath::$T::binary(
                            op,
                            operand(a, out, n),
                            operand(b, out, n),
                            view_mut(out, n),
                        );
                        debug_assert!(r.is_ok());
                    }
                })
            });
            Some((u, b))
        }
    };
}

mod vm {
    use super::*;
    vmath_float!(f32);
    vmath_float!(f64);

    pub fn int_unary<T: vmath::int::VInt + bytemuck::Pod>(op: vmath::int::IntUnary) -> UnaryFn {
        Arc::new(move |a: *const u8, out: *mut u8, n: usize| {
            let (a, out) = (a.cast::<T>(), out.cast::<T>());
            // SAFETY: as for the float kernels.
            unsafe {
                let r = if a == out.cast_const() {
                    vmath::int::unary_inplace(op, view_mut(out, n))
                } else {
                    vmath::int::unary(op, view(a, n), view_mut(out, n))
                };
                debug_assert!(r.is_ok());
            }
        })
    }

    pub fn int_binary<T: vmath::int::VInt + bytemuck::Pod>(op: vmath::int::IntBinary) -> BinaryFn {
        Arc::new(move |a: *const u8, b: *const u8, out: *mut u8, n: usize| {
            let (a, b, out) = (a.cast::<T>(), b.cast::<T>(), out.cast::<T>());
            // SAFETY: as above.
            unsafe {
                let r = vmath::int::binary(
                    op,
                    operand(a, out, n),
                    operand(b, out, n),
                    view_mut(out, n),
                );
                debug_assert!(r.is_ok());
            }
        })
    }
}

/// The kernel for a unary op from `input` elements to `output` elements.
pub fn unary_fn(op: UnaryOp, input: ElementType, output: ElementType) -> Result<UnaryFn> {
    let bad = || unsupported(op, input);
    // Vectorized kernels first. Sine, cosine and tangent stay with the C
    // library (through the semantics): XLA CPU's results for them are the
    // correctly rounded ones, which chaotic programs (`fori_loop`) need bit for
    // bit; `vmath`'s polynomials are within an ulp but not always equal.
    if input == output {
        let fu = vmath::FloatUnary::from_hlo(op).filter(|u| {
            !matches!(
                u,
                vmath::FloatUnary::Sin | vmath::FloatUnary::Cos | vmath::FloatUnary::Tan
            )
        });
        match input {
            ElementType::F32 => {
                if let Some((Some(k), _)) = vm::f32(fu, None) {
                    return Ok(k);
                }
            }
            ElementType::F64 => {
                if let Some((Some(k), _)) = vm::f64(fu, None) {
                    return Ok(k);
                }
            }
            _ => {}
        }
        if let Some(iu) = vmath::int::IntUnary::from_hlo(op) {
            with_int!(input, T => return Ok(vm::int_unary::<T>(iu)), _ => ());
        }
    }
    // The shared semantics' element functions.
    with_float!(input, T => {
        if op == UnaryOp::IsFinite && output == ElementType::Pred {
            return Ok(unary(|x: T| Pred(fs::is_finite(x) as u8)));
        }
        let f = sk::float_unary_fn::<T>(op)?;
        return Ok(unary(move |x: T| f(x)));
    }, _ => ());
    with_int!(input, T => {
        let f = sk::int_unary_fn::<T>(op)?;
        return Ok(unary(move |x: T| f(x)));
    }, _ => ());
    match input {
        ElementType::Pred => {
            let f = sk::pred_unary_fn(op)?;
            Ok(unary(move |x: Pred| Pred(f(x.0))))
        }
        ElementType::C64 => complex_unary::<Complex32>(op, output),
        ElementType::C128 => complex_unary::<Complex64>(op, output),
        _ => Err(bad()),
    }
}

fn complex_unary<C: ComplexSemantics + bytemuck::Pod + Send + Sync>(
    op: UnaryOp,
    output: ElementType,
) -> Result<UnaryFn>
where
    C::Part: bytemuck::Pod + Send + Sync,
{
    if output.is_complex() {
        let f = sk::complex_unary_fn::<C>(op)?;
        return Ok(unary(move |z: C| f(z)));
    }
    Ok(match op {
        UnaryOp::Abs => unary(|z: C| cs::abs(z)),
        UnaryOp::Real => unary(|z: C| z.re()),
        UnaryOp::Imag => unary(|z: C| z.im()),
        _ => return Err(unsupported(op, C::TYPE)),
    })
}

/// The kernel for a binary op on two `input` operands.
pub fn binary_fn(op: BinaryOp, input: ElementType, output: ElementType) -> Result<BinaryFn> {
    if op == BinaryOp::Complex {
        return match (input, output) {
            (ElementType::F32, ElementType::C64) => {
                Ok(binary(|a: f32, b: f32| Complex32::new(a, b)))
            }
            (ElementType::F64, ElementType::C128) => {
                Ok(binary(|a: f64, b: f64| Complex64::new(a, b)))
            }
            _ => Err(unsupported(op, input)),
        };
    }
    let fb = vmath::FloatBinary::from_hlo(op);
    match input {
        ElementType::F32 => {
            if let Some((_, Some(k))) = vm::f32(None, fb) {
                return Ok(k);
            }
        }
        ElementType::F64 => {
            if let Some((_, Some(k))) = vm::f64(None, fb) {
                return Ok(k);
            }
        }
        _ => {}
    }
    if let Some(ib) = vmath::int::IntBinary::from_hlo(op) {
        with_int!(input, T => return Ok(vm::int_binary::<T>(ib)), _ => ());
    }
    with_float!(input, T => {
        let f = sk::float_binary_fn::<T>(op)?;
        return Ok(binary(move |a: T, b: T| f(a, b)));
    }, _ => ());
    with_int!(input, T => {
        let f = sk::int_binary_fn::<T>(op)?;
        return Ok(binary(move |a: T, b: T| f(a, b)));
    }, _ => ());
    match input {
        ElementType::Pred => {
            let f = sk::pred_binary_fn(op)?;
            Ok(binary(move |a: Pred, b: Pred| Pred(f(a.0, b.0))))
        }
        ElementType::C64 => {
            let f = sk::complex_binary_fn::<Complex32>(op)?;
            Ok(binary(move |a: Complex32, b: Complex32| f(a, b)))
        }
        ElementType::C128 => {
            let f = sk::complex_binary_fn::<Complex64>(op)?;
            Ok(binary(move |a: Complex64, b: Complex64| f(a, b)))
        }
        _ => Err(unsupported(op, input)),
    }
}

/// The kernel for `compare` of two `input` operands (result: pred).
pub fn compare_fn(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    input: ElementType,
) -> Result<BinaryFn> {
    let total = compare_type == Some(ComparisonType::TotalOrder);
    macro_rules! vmath_compare {
        ($T:ident, $call:expr) => {
            Ok(Arc::new(
                move |a: *const u8, b: *const u8, out: *mut u8, n: usize| {
                    let (a, b) = (a.cast::<$T>(), b.cast::<$T>());
                    // The result has another type: an input can only share its
                    // memory when both are bytes; then copy that input first.
                    let (ta, tb);
                    let a = if a.cast::<u8>() == out.cast_const() {
                        // SAFETY: `a` holds `n` elements.
                        ta = unsafe { view(a, n) }.to_vec();
                        ta.as_ptr()
                    } else {
                        a
                    };
                    let b = if b.cast::<u8>() == out.cast_const() {
                        // SAFETY: as above.
                        tb = unsafe { view(b, n) }.to_vec();
                        tb.as_ptr()
                    } else {
                        b
                    };
                    // SAFETY: `n`-element buffers, now distinct from `out`.
                    unsafe {
                        let r = $call(
                            vmath::Operand::Slice(view(a, n)),
                            vmath::Operand::Slice(view(b, n)),
                            view_mut(out, n),
                        );
                        debug_assert!(r.is_ok());
                    }
                },
            ))
        };
    }
    match input {
        ElementType::F32 => {
            return vmath_compare!(f32, |a, b, o| vmath::f32::compare(
                direction, total, a, b, o
            ))
        }
        ElementType::F64 => {
            return vmath_compare!(f64, |a, b, o| vmath::f64::compare(
                direction, total, a, b, o
            ))
        }
        _ => {}
    }
    with_int!(input, T => return vmath_compare!(T, |a, b, o| vmath::int::compare::<T>(direction, a, b, o)), _ => ());
    with_float!(input, T => {
        let f = sk::compare_float_fn::<T>(direction, total);
        return Ok(binary(move |a: T, b: T| Pred(f(a, b) as u8)));
    }, _ => ());
    use ComparisonDirection::*;
    match (input, direction) {
        (ElementType::Pred, _) => {
            let f = sk::compare_int_fn::<u8>(direction);
            Ok(binary(move |a: Pred, b: Pred| Pred(f(a.0, b.0) as u8)))
        }
        (ElementType::C64, Eq) => Ok(binary(
            |a: Complex32, b: Complex32| Pred(cs::eq(a, b) as u8),
        )),
        (ElementType::C64, Ne) => Ok(binary(
            |a: Complex32, b: Complex32| Pred(cs::ne(a, b) as u8),
        )),
        (ElementType::C128, Eq) => Ok(binary(
            |a: Complex64, b: Complex64| Pred(cs::eq(a, b) as u8),
        )),
        (ElementType::C128, Ne) => Ok(binary(
            |a: Complex64, b: Complex64| Pred(cs::ne(a, b) as u8),
        )),
        _ => Err(unsupported(format!("compare {direction}"), input)),
    }
}

/// The kernel for `convert` from one element type to another (the shared
/// semantics' conversion, for every pair of types).
pub fn convert_fn(from: ElementType, to: ElementType) -> Result<UnaryFn> {
    if from == to {
        return crate::with_width!(from.byte_size(), W => Ok(unary(|x: W| x)), _ => Err(unsupported("convert", from)));
    }
    Ok(
        crate::with_type!(from, S => crate::with_type!(to, D => unary(|x: S| -> D { conv::convert::<S, D>(x) }))),
    )
}

/// `reduce-precision` of a float type to `exponent_bits` and `mantissa_bits`
/// (the shared semantics: XLA's bit manipulation).
pub fn reduce_precision_fn(
    ty: ElementType,
    exponent_bits: u32,
    mantissa_bits: u32,
) -> Result<UnaryFn> {
    if exponent_bits < 1 {
        return Err(Error::invalid_argument(
            "reduce-precision needs at least one exponent bit",
        ));
    }
    with_float!(ty, T => Ok(unary(move |x: T| fs::reduce_precision(x, exponent_bits, mantissa_bits))),
        _ => Err(unsupported("reduce-precision", ty)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

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
        f(
            a.as_ptr().cast(),
            b.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            a.len(),
        );
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
        let sra = binary_fn(
            BinaryOp::ShiftRightArithmetic,
            ElementType::S8,
            ElementType::S8,
        )
        .unwrap();
        let out: Vec<i8> = run_binary(&sra, &[-16i8, -16, 16], &[2, 9, 9]);
        assert_eq!(out, [-4, -1, 0]);
        let srl = binary_fn(
            BinaryOp::ShiftRightLogical,
            ElementType::S8,
            ElementType::S8,
        )
        .unwrap();
        let out: Vec<i8> = run_binary(&srl, &[-16i8, -16], &[4, 8]);
        assert_eq!(out, [15, 0]);
    }

    #[test]
    fn integer_power() {
        let f = binary_fn(BinaryOp::Power, ElementType::S32, ElementType::S32).unwrap();
        let out: Vec<i32> = run_binary(&f, &[3, 2, 1, -1, 5, 0], &[4, 10, -3, -3, -1, 0]);
        // 3^4, 2^10, 1^-3 = 1, (-1)^-3 = -1, 5^-1 = 0, 0^0 = 1 (XLA CPU's answers).
        assert_eq!(out, [81, 1024, 1, -1, 0, 1]);
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
    fn fast_min_max_match_the_semantics_bit_for_bit() {
        let vals = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            1e-40,
            f32::MIN_POSITIVE,
        ];
        for &a in &vals {
            for &b in &vals {
                assert_eq!(
                    max_f32(a, b).to_bits(),
                    fs::maximum(a, b).to_bits(),
                    "max({a}, {b})"
                );
                assert_eq!(
                    min_f32(a, b).to_bits(),
                    fs::minimum(a, b).to_bits(),
                    "min({a}, {b})"
                );
                let (x, y) = (a as f64, b as f64);
                assert_eq!(max_f64(x, y).to_bits(), fs::maximum(x, y).to_bits());
                assert_eq!(min_f64(x, y).to_bits(), fs::minimum(x, y).to_bits());
            }
        }
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
        let xs = [
            1.0f32 + 1.0 / 256.0,
            1.0 + 3.0 / 256.0,
            f32::MAX,
            1e-39,
            f32::NAN,
        ];
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
