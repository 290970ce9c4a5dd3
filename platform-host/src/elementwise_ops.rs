//! The Host's single op table: how each elementwise HLO op computes, for
//! every element type it is defined on.
//!
//! Every path that evaluates an elementwise op takes its kernel from here:
//! standalone elementwise thunks (`kernels::elementwise`), fusion block
//! programs (`fusion::program`), scalar programs (reducers, comparators,
//! `map` bodies: `kernels::scalar_program`), all-reduce combiners
//! (`kernels::collectives`), the operand and result conversions of `dot` and
//! `convolution`, and the typed reducers of reduce, reduce-window and scatter
//! ([`typed_combiner`], [`fold`]). An op therefore gives the same bits
//! whether fusion grouped it or not (`tests/op_table.rs` checks this for every
//! op and element type).
//!
//! # What each op computes
//! The shared semantics (`platform_api::semantics`), as in the interpreter.
//! Where `crate::vmath` has a runtime-dispatched AVX-512 / AVX2 / baseline
//! kernel computing the same function (exact arithmetic, compares, clamps,
//! selects, conversions, integer ops, XLA's contracted multiply-add), that
//! kernel runs; the rest (`f16`/`bf16` arithmetic, complex numbers, `pred`
//! logic, `reduce-precision`) are tight loops over the semantics' typed
//! element functions.
//!
//! The transcendental functions of `f32`/`f64` are where a choice is made,
//! once, here (`vmath_unary_matches_xla`):
//! * `exp`, `log`, `tanh`, `logistic` run `vmath`'s vectorised polynomials,
//!   because XLA CPU replaces them by its own vectorised approximations as
//!   well (`exp` with arguments whose result is subnormal or zero clamped
//!   out of the vector kernel and given the C library's correctly rounded
//!   value: those take the CPU's slow microcode path).
//! * `sin`, `cos`, `tan`, `expm1`, `log1p` (`f64`), `cbrt`, `erf`, `power`
//!   and `atan2` come from the C library (through the semantics), because XLA
//!   CPU calls the C library for them: programs that amplify rounding (the
//!   conformance case `fori_loop`) then match XLA bit for bit. `vmath`'s
//!   polynomials for them are within a few ULP, not equal (about 7% of
//!   `expm1` and 20% of `erf` results differ), so taking them anywhere,
//!   even only for unfused ops, would make an op's bits depend on whether
//!   fusion grouped it.
//!
//! The 16-bit float types take what XLA CPU computes for them, which differs
//! by type (checked on all 65536 inputs against JAX 0.10.2:
//! `scripts/gen_half_cases.py --check`): XLA's float normalization computes a
//! `bf16` op in `f32` and rounds it, so a `bf16` function is its `f32` kernel
//! above rounded once (but `logistic`, which XLA expands into `bf16` steps
//! first); XLA keeps `f16` ops in `f16`, and LLVM computes an `f16`
//! math function as the C library's `f32` function rounded, so every `f16`
//! transcendental is the C library's (`logistic` and `expm1` are XLA's
//! expansions into `f16` steps). Where that definition is a C library
//! function, `vmath`'s approximation runs and is rounded, and the few
//! results that lie near a rounding boundary of the 16-bit type are computed
//! exactly (`half_transcendental`, `settle`): vectorised, and the definition
//! bit for bit.
//!
//! Row folds ([`Fold`]) are compiled per ISA level with `vmath`'s dispatcher.
//!
//! # Contract of every kernel
//! A [`Kernel`] is chosen once, when a thunk or a fusion is planned, for one
//! op and its element types; calling it runs the op over `n` elements:
//! operand `k` is read from `args[k]`, the result is written to `dst`. A
//! destination may be the very same memory as an operand (an accumulator
//! updated in place, an output written over the input it is computed from,
//! a `pred` result over a byte operand of a compare or a select's predicate),
//! but never a partial overlap; kernels read element `i` of every operand
//! before writing element `i`.
//!
//! [`Fold`] reduces a contiguous run to one value (row reductions); it may
//! reassociate (64 partial accumulators, so float sums vectorise), as XLA
//! leaves reduction order unspecified.

use crate::vmath::{self, FloatBinary, FloatUnary, Operand};
use crate::with_width as width_type;
use num_complex::{Complex32, Complex64};
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::semantics::contraction::Contraction;
use platform_api::semantics::convert::{convert as convert_one, ConvertSource, ConvertTarget};
use platform_api::semantics::{
    complex, float, int, ComplexSemantics, FloatSemantics, IntSemantics,
};
use platform_api::{
    with_any_type as any_type, with_complex_type as complex_type, with_float_type as float_type,
    with_int_type as int_type,
};
use platform_api::{ElementType, Error, Result};

/// One operand of a kernel call.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// `n` elements.
    Ptr(*const u8),
    /// One element, used for every position (a broadcast scalar).
    Scalar(*const u8),
}

type KernelFn = dyn Fn(&[Arg], *mut u8, usize) + Send + Sync;

/// One elementwise op over slices (see the module contract); cloning shares
/// the kernel.
#[derive(Clone)]
pub struct Kernel {
    arity: usize,
    f: std::sync::Arc<KernelFn>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kernel/{}", self.arity)
    }
}

impl Kernel {
    fn new(arity: usize, f: impl Fn(&[Arg], *mut u8, usize) + Send + Sync + 'static) -> Kernel {
        Kernel {
            arity,
            f: std::sync::Arc::new(f),
        }
    }

    /// Number of operands.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Runs the op over `n` elements.
    ///
    /// # Safety
    /// `args` holds [`Self::arity`] operands: an [`Arg::Ptr`] valid and
    /// aligned for `n` elements of its operand's type, an [`Arg::Scalar`] for
    /// one; `dst` is valid for `n` result elements and is either disjoint from
    /// every operand or exactly one of them.
    #[inline]
    pub unsafe fn call(&self, args: &[Arg], dst: *mut u8, n: usize) {
        debug_assert_eq!(args.len(), self.arity);
        // Nothing to do (and the pointers of an empty array need not be
        // valid at all).
        if n > 0 {
            (self.f)(args, dst, n)
        }
    }
}

/// Reads element `i` of an operand: from a slice, the one scalar, or the
/// destination's current element (`cur`, when the destination is that operand).
///
/// The loops first cut every slice lane to the destination's length
/// ([`Lane::fit`]): with the lengths unrelated, each `at` kept a bounds check
/// and LLVM vectorised all but the last 1..=lanes elements, leaving those to
/// a scalar loop that cost more than the vector part on a block of a few
/// thousand elements.
trait Lane<T, R>: Copy {
    fn at(self, i: usize, cur: R) -> T;
    /// This lane, reading no further than `n` elements.
    fn fit(self, n: usize) -> Self;
}

#[derive(Clone, Copy)]
struct P<'a, T>(&'a [T]);
#[derive(Clone, Copy)]
struct S<T>(T);
#[derive(Clone, Copy)]
struct D;

impl<T: Copy, R> Lane<T, R> for P<'_, T> {
    #[inline(always)]
    fn at(self, i: usize, _: R) -> T {
        self.0[i]
    }
    #[inline(always)]
    fn fit(self, n: usize) -> Self {
        P(&self.0[..n])
    }
}

impl<T: Copy, R> Lane<T, R> for S<T> {
    #[inline(always)]
    fn at(self, _: usize, _: R) -> T {
        self.0
    }
    #[inline(always)]
    fn fit(self, _: usize) -> Self {
        self
    }
}

impl<T: Copy, R: Copy> Lane<T, R> for D {
    #[inline(always)]
    fn at(self, _: usize, cur: R) -> T {
        // `D` is only used when the operand and the destination have the same
        // type (checked by `lane!`).
        // SAFETY: same size (checked), both plain data.
        unsafe { std::mem::transmute_copy::<R, T>(&cur) }
    }
    #[inline(always)]
    fn fit(self, _: usize) -> Self {
        self
    }
}

#[inline(always)]
unsafe fn fill_typed<T: Copy>(out: *mut T, n: usize, v: T) {
    // SAFETY: `n` writable elements.
    let out = unsafe { std::slice::from_raw_parts_mut(out, n) };
    out.fill(v);
}

#[inline(always)]
unsafe fn scalar<T: Copy>(p: *const u8) -> T {
    // SAFETY: the kernel's contract: one valid element.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// The loops: the destination is a slice and every operand lane reads a slice
/// that does not overlap it (or the destination itself), so LLVM vectorises
/// without runtime alias checks. They are compiled for AVX2 as well
/// ([`crate::multiversion!`]): the types `vmath` lacks (`f16`, `bf16`,
/// complex, `pred`) vectorise 8-wide there. They index the destination
/// rather than iterate over it: with lanes cut to its length ([`Lane::fit`])
/// that is the form LLVM vectorises to the end (the iterator form kept a
/// scalar tail).
///
/// # Safety
/// None beyond the types' (`unsafe` for `multiversion!`).
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn run1_loop<A: Copy, R: Copy, L: Lane<A, R>, F: Fn(A) -> R>(a: L, out: &mut [R], f: F) {
    let n = out.len();
    let a = a.fit(n);
    for i in 0..n {
        out[i] = f(a.at(i, out[i]));
    }
}

/// # Safety
/// As [`run1_loop`].
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn run2_loop<A: Copy, B: Copy, R: Copy, LA: Lane<A, R>, LB: Lane<B, R>, F: Fn(A, B) -> R>(
    a: LA,
    b: LB,
    out: &mut [R],
    f: F,
) {
    let n = out.len();
    let (a, b) = (a.fit(n), b.fit(n));
    for i in 0..n {
        let cur = out[i];
        out[i] = f(a.at(i, cur), b.at(i, cur));
    }
}

/// # Safety
/// As [`run1_loop`].
#[allow(clippy::needless_range_loop)]
#[inline(always)]
#[allow(clippy::many_single_char_names)]
unsafe fn run3_loop<
    A: Copy,
    B: Copy,
    C: Copy,
    R: Copy,
    LA: Lane<A, R>,
    LB: Lane<B, R>,
    LC: Lane<C, R>,
    F: Fn(A, B, C) -> R,
>(
    a: LA,
    b: LB,
    c: LC,
    out: &mut [R],
    f: F,
) {
    let n = out.len();
    let (a, b, c) = (a.fit(n), b.fit(n), c.fit(n));
    for i in 0..n {
        let cur = out[i];
        out[i] = f(a.at(i, cur), b.at(i, cur), c.at(i, cur));
    }
}

crate::multiversion!(unsafe fn run1<A: Copy, R: Copy, L: Lane<A, R>, F: Fn(A) -> R>(a: L, out: &mut [R], f: F) => run1_loop);
crate::multiversion!(unsafe fn run2<A: Copy, B: Copy, R: Copy, LA: Lane<A, R>, LB: Lane<B, R>, F: Fn(A, B) -> R>(a: LA, b: LB, out: &mut [R], f: F) => run2_loop);
crate::multiversion!(unsafe fn run3<A: Copy, B: Copy, C: Copy, R: Copy, LA: Lane<A, R>, LB: Lane<B, R>, LC: Lane<C, R>, F: Fn(A, B, C) -> R>(a: LA, b: LB, c: LC, out: &mut [R], f: F) => run3_loop);

/// The form of one operand of a call whose destination is `dst`.
#[derive(Clone, Copy)]
enum Form {
    Slice,
    Scalar,
    Dst,
}

fn form<T, R>(arg: Arg, dst: *mut u8) -> Form {
    match arg {
        Arg::Scalar(_) => Form::Scalar,
        Arg::Ptr(p)
            if std::ptr::eq(p, dst) && std::mem::size_of::<T>() == std::mem::size_of::<R>() =>
        {
            Form::Dst
        }
        Arg::Ptr(_) => Form::Slice,
    }
}

/// Binds `$l` to the lane of operand `$arg` (type `$T`) and evaluates `$body`.
macro_rules! lane {
    ($arg:expr, $T:ty, $R:ty, $dst:expr, $n:expr, $l:ident => $body:expr) => {{
        let arg = $arg;
        match form::<$T, $R>(arg, $dst) {
            Form::Dst => {
                let $l = D;
                $body
            }
            Form::Scalar => {
                let Arg::Scalar(p) = arg else { unreachable!() };
                // SAFETY: the kernel's contract: one element.
                let $l = S(unsafe { scalar::<$T>(p) });
                $body
            }
            Form::Slice => {
                let Arg::Ptr(p) = arg else { unreachable!() };
                // SAFETY: the kernel's contract: `n` elements, disjoint from
                // the destination (exact aliasing is `Form::Dst`).
                let $l = P(unsafe { std::slice::from_raw_parts(p.cast::<$T>(), $n) });
                $body
            }
        }
    }};
}

fn k1<A: Copy + 'static, R: Copy + 'static>(
    f: impl Fn(A) -> R + Copy + Send + Sync + 'static,
) -> Kernel {
    Kernel::new(1, move |args, dst, n| {
        if let Arg::Scalar(a) = args[0] {
            // SAFETY: `Kernel::call`'s contract.
            return unsafe { fill_typed(dst.cast::<R>(), n, f(scalar::<A>(a))) };
        }
        lane!(args[0], A, R, dst, n, a => {
            // SAFETY: `n` result elements.
            let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<R>(), n) };
            // SAFETY: no requirement beyond the types.
            unsafe { run1(a, out, f) }
        })
    })
}

fn k2<A: Copy + 'static, B: Copy + 'static, R: Copy + 'static>(
    f: impl Fn(A, B) -> R + Copy + Send + Sync + 'static,
) -> Kernel {
    Kernel::new(2, move |args, dst, n| {
        if let (Arg::Scalar(a), Arg::Scalar(b)) = (args[0], args[1]) {
            // SAFETY: `Kernel::call`'s contract.
            return unsafe { fill_typed(dst.cast::<R>(), n, f(scalar::<A>(a), scalar::<B>(b))) };
        }
        lane!(args[0], A, R, dst, n, a => lane!(args[1], B, R, dst, n, b => {
            // SAFETY: `n` result elements.
            let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<R>(), n) };
            // SAFETY: no requirement beyond the types.
            unsafe { run2(a, b, out, f) }
        }))
    })
}

fn k3<A: Copy + 'static, B: Copy + 'static, C: Copy + 'static, R: Copy + 'static>(
    f: impl Fn(A, B, C) -> R + Copy + Send + Sync + 'static,
) -> Kernel {
    Kernel::new(3, move |args, dst, n| {
        lane!(args[0], A, R, dst, n, a => lane!(args[1], B, R, dst, n, b => lane!(args[2], C, R, dst, n, c => {
            // SAFETY: `n` result elements.
            let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<R>(), n) };
            // SAFETY: no requirement beyond the types.
            unsafe { run3(a, b, c, out, f) }
        })))
    })
}

/// `maximum` of `f32`/`f64` as selects, so the loop vectorises: NaN if either
/// is NaN (the first NaN), `maximum(-0, +0) = +0` (equal values: the AND of
/// the bits). Bit-identical to `semantics::float::maximum`.
macro_rules! select_minmax {
    ($t:ty) => {
        (
            |a: $t, b: $t| -> $t {
                let r = if a > b { a } else { b };
                let r = if a == b {
                    <$t>::from_bits(a.to_bits() & b.to_bits())
                } else {
                    r
                };
                if a.is_nan() {
                    a
                } else {
                    r
                }
            },
            |a: $t, b: $t| -> $t {
                let r = if a < b { a } else { b };
                let r = if a == b {
                    <$t>::from_bits(a.to_bits() | b.to_bits())
                } else {
                    r
                };
                if a.is_nan() {
                    a
                } else {
                    r
                }
            },
        )
    };
}

/// The `vmath` operand for `arg` when the destination is `dst`.
///
/// # Safety
/// As [`Kernel::call`]; `T` is the operand's element type.
#[inline(always)]
unsafe fn operand<'a, T: Copy>(arg: Arg, dst: *mut u8, n: usize) -> Operand<'a, T> {
    match arg {
        // SAFETY: one element.
        Arg::Scalar(p) => Operand::Scalar(unsafe { scalar::<T>(p) }),
        Arg::Ptr(p) if std::ptr::eq(p, dst) => Operand::Dst,
        // SAFETY: `n` elements, not overlapping the destination.
        Arg::Ptr(p) => Operand::Slice(unsafe { std::slice::from_raw_parts(p.cast::<T>(), n) }),
    }
}

/// The destination slice.
///
/// # Safety
/// `dst` valid for `n` elements of `T`.
#[inline(always)]
unsafe fn out<'a, T>(dst: *mut u8, n: usize) -> &'a mut [T] {
    // SAFETY: forwarded.
    unsafe { std::slice::from_raw_parts_mut(dst.cast::<T>(), n) }
}

/// `vmath` reports only length mismatches and misuse of `Operand::Dst`,
/// which the block program rules out by construction.
#[inline(always)]
fn checked(r: Result<()>) {
    debug_assert!(r.is_ok(), "vmath kernel: {r:?}");
}

/// A `vmath` float kernel for `f32` and `f64`, bound to `$V` (the module
/// `vmath::f32` or `vmath::f64`) and `$T`.
macro_rules! vfloat {
    ($ty:expr, $V:ident, $T:ident => $body:expr) => {
        match $ty {
            ElementType::F32 => {
                use vmath::f32 as $V;
                type $T = f32;
                Some($body)
            }
            ElementType::F64 => {
                use vmath::f64 as $V;
                type $T = f64;
                Some($body)
            }
            _ => None,
        }
    };
}

/// A `vmath` integer kernel, `$T` bound to the integer type.
macro_rules! vint {
    ($ty:expr, $T:ident => $body:expr) => {
        int_type!($ty, $T => Some($body), _ => None)
    };
}

/// Whether `vmath`'s kernel for `op` on `ty` is the function XLA CPU
/// computes, up to the differences already present between XLA and the C
/// library: exact operations, and `exp`, `log`, `tanh` and `logistic`, which
/// XLA CPU replaces by its own vectorised approximations too. The functions
/// XLA CPU takes from the C library (`sin`, `cos`, `tan`, `expm1`, `cbrt`,
/// `erf`, `power`, `atan2`, and `log1p` on `f64`) are taken from it here as
/// well: programs that amplify rounding (the conformance case `fori_loop`)
/// then match XLA bit for bit. `vmath`'s `f32` `log1p` is the C library's
/// algorithm itself, bit for bit, so it runs vectorised.
fn vmath_unary_matches_xla(op: FloatUnary, ty: ElementType) -> bool {
    match op {
        FloatUnary::Log1p => ty == ElementType::F32,
        FloatUnary::Sin
        | FloatUnary::Cos
        | FloatUnary::Tan
        | FloatUnary::Expm1
        | FloatUnary::Cbrt
        | FloatUnary::Erf => false,
        _ => true,
    }
}

/// `exp` whose result would be subnormal or zero takes the CPU's microcode
/// assists (a hundred cycles per element) in `vmath`'s formula: a masked
/// softmax feeds `exp` millions of `-1e9`s. Arguments are clamped to where
/// `exp` is still normal before the vector kernel, and the few below are fixed
/// up after it by `$below` ([`exp_f32_below_normal`]).
macro_rules! exp_clamped {
    ($V:ident, $T:ty, $normal_from:expr, $below:expr) => {
        Kernel::new(1, move |args, dst, n| {
            const CHUNK: usize = 256;
            // SAFETY: `Kernel::call`'s contract.
            unsafe {
                if let Arg::Scalar(p) = args[0] {
                    return fill_typed(dst.cast::<$T>(), n, float::exp(scalar::<$T>(p)));
                }
                let Arg::Ptr(src) = args[0] else { return };
                let (src, dst) = (src.cast::<$T>(), dst.cast::<$T>());
                // The common case first: nothing below the threshold (one
                // vectorised pass over the source), then the kernel reads the
                // source directly.
                let all = std::slice::from_raw_parts(src, n);
                let low = all.iter().fold(false, |low, &v| low | (v < $normal_from));
                if !low {
                    if std::ptr::eq(src, dst) {
                        $V::unary_inplace(FloatUnary::Exp, out::<$T>(dst.cast(), n));
                    } else {
                        checked($V::unary(FloatUnary::Exp, all, out::<$T>(dst.cast(), n)));
                    }
                    return;
                }
                let mut orig = [0.0 as $T; CHUNK];
                let mut clamped = [0.0 as $T; CHUNK];
                let mut start = 0;
                while start < n {
                    let len = CHUNK.min(n - start);
                    // Read the chunk first: the destination may be the source.
                    let x = std::slice::from_raw_parts(src.add(start), len);
                    orig[..len].copy_from_slice(x);
                    let mut low = false;
                    for (c, &v) in clamped[..len].iter_mut().zip(&orig[..len]) {
                        low |= v < $normal_from;
                        *c = if v < $normal_from { $normal_from } else { v };
                    }
                    let out = out::<$T>(dst.add(start).cast(), len);
                    checked($V::unary(FloatUnary::Exp, &clamped[..len], out));
                    if low {
                        for (o, &v) in out.iter_mut().zip(&orig[..len]) {
                            if v < $normal_from {
                                *o = $below(v);
                            }
                        }
                    }
                    start += len;
                }
            }
        })
    };
}

/// `f32` `exp`: from here down the result is subnormal or zero, and
/// [`exp_f32_below_normal`] gives it.
pub(crate) const EXP_F32_NORMAL_FROM: f32 = -87.0;
/// `f32` `exp` rounds to zero below this.
const EXP_F32_ZERO_BELOW: f32 = -103.98;

/// `exp(x)` for `x < EXP_F32_NORMAL_FROM`, as the `exp` kernel fixes such
/// elements up (and generated code calls out for): zero where `exp` rounds
/// to zero, the C library's (correctly rounded) `exp` in the narrow
/// subnormal band.
pub(crate) fn exp_f32_below_normal(x: f32) -> f32 {
    if x < EXP_F32_ZERO_BELOW {
        0.0
    } else {
        float::exp(x)
    }
}

/// As [`exp_f32_below_normal`], for `f64` below -708.
fn exp_f64_below_normal(x: f64) -> f64 {
    if x < -745.2 {
        0.0
    } else {
        float::exp(x)
    }
}

fn vfloat_unary(op: FloatUnary, ty: ElementType) -> Option<Kernel> {
    if op == FloatUnary::Exp {
        return match ty {
            ElementType::F32 => {
                use vmath::f32 as V;
                Some(exp_clamped!(
                    V,
                    f32,
                    EXP_F32_NORMAL_FROM,
                    exp_f32_below_normal
                ))
            }
            ElementType::F64 => {
                use vmath::f64 as V;
                Some(exp_clamped!(V, f64, -708.0f64, exp_f64_below_normal))
            }
            _ => None,
        };
    }
    vfloat!(ty, V, T => Kernel::new(1, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            match args[0] {
                Arg::Scalar(p) => {
                    let x = [scalar::<T>(p)];
                    let mut y = [T::default()];
                    checked(V::unary(op, &x, &mut y));
                    fill_typed(dst.cast::<T>(), n, y[0]);
                }
                Arg::Ptr(p) if std::ptr::eq(p, dst) => V::unary_inplace(op, out::<T>(dst, n)),
                Arg::Ptr(p) => checked(V::unary(op, std::slice::from_raw_parts(p.cast::<T>(), n), out::<T>(dst, n))),
            }
        }
    }))
}

fn vfloat_binary(op: FloatBinary, ty: ElementType) -> Option<Kernel> {
    vfloat!(ty, V, T => Kernel::new(2, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            let (a, b) = (operand::<T>(args[0], dst, n), operand::<T>(args[1], dst, n));
            checked(V::binary(op, a, b, out::<T>(dst, n)))
        }
    }))
}

fn vint_unary(op: vmath::int::IntUnary, ty: ElementType) -> Option<Kernel> {
    vint!(ty, T => Kernel::new(1, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            match args[0] {
                Arg::Scalar(p) => {
                    let x = [scalar::<T>(p)];
                    let mut y = [T::default()];
                    checked(vmath::int::unary(op, &x, &mut y));
                    fill_typed(dst.cast::<T>(), n, y[0]);
                }
                Arg::Ptr(p) if std::ptr::eq(p, dst) => checked(vmath::int::unary_inplace(op, out::<T>(dst, n))),
                Arg::Ptr(p) => checked(vmath::int::unary(op, std::slice::from_raw_parts(p.cast::<T>(), n), out::<T>(dst, n))),
            }
        }
    }))
}

fn vint_binary(op: vmath::int::IntBinary, ty: ElementType) -> Option<Kernel> {
    vint!(ty, T => Kernel::new(2, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            let (a, b) = (operand::<T>(args[0], dst, n), operand::<T>(args[1], dst, n));
            checked(vmath::int::binary(op, a, b, out::<T>(dst, n)))
        }
    }))
}

/// XLA CPU's contraction of a multiply into an add or subtract (one
/// rounding), `f32`/`f64` only: `how` as `platform_api::semantics::contraction`.
pub fn fused_multiply_add(how: Contraction, ty: ElementType) -> Result<Kernel> {
    vfloat!(ty, V, T => Kernel::new(3, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            let (a, b, c) = (
                operand::<T>(args[0], dst, n),
                operand::<T>(args[1], dst, n),
                operand::<T>(args[2], dst, n),
            );
            checked(V::fused_multiply_add(how, a, b, c, out::<T>(dst, n)))
        }
    }))
    .ok_or_else(|| undefined("fused multiply-add", ty))
}

fn undefined(op: &str, ty: ElementType) -> Error {
    Error::unimplemented(format!("fused {op} of {ty} operands"))
}

/// `op(x)`: operand of type `ty`, result of type `result`.
pub fn unary(op: UnaryOp, ty: ElementType, result: ElementType) -> Result<Kernel> {
    let expected = platform_api::semantics::unary_result_type(op, ty)?;
    if expected != result {
        return Err(Error::invalid_argument(format!(
            "{} of {ty} gives {expected}, not {result}",
            op.name()
        )));
    }
    use UnaryOp::*;
    if let Some(f) = FloatUnary::from_hlo(op).filter(|&f| vmath_unary_matches_xla(f, ty)) {
        if let Some(k) = vfloat_unary(f, ty) {
            return Ok(k);
        }
    }
    if op == IsFinite && matches!(ty, ElementType::F32 | ElementType::F64) {
        if let Some(k) = vfloat!(ty, V, T => Kernel::new(1, move |args, dst, n| {
            // SAFETY: `Kernel::call`'s contract.
            unsafe {
                match args[0] {
                    Arg::Scalar(p) => fill_typed(dst, n, float::is_finite(scalar::<T>(p)) as u8),
                    Arg::Ptr(p) => checked(V::is_finite(std::slice::from_raw_parts(p.cast::<T>(), n), out::<u8>(dst, n))),
                }
            }
        })) {
            return Ok(k);
        }
    }
    if let Some(k) = vmath::int::IntUnary::from_hlo(op).and_then(|u| vint_unary(u, ty)) {
        return Ok(k);
    }
    if let Some(k) = half_transcendental(op, ty, result) {
        return Ok(k);
    }
    if let Some(k) = half_via_f32(ty, result, |inner| unary(op, inner, inner))? {
        return Ok(k);
    }
    if ty == ElementType::Pred {
        return match op {
            Not => Ok(k1::<u8, u8>(|v| (v == 0) as u8)),
            _ => Err(undefined(op.name(), ty)),
        };
    }
    float_type!(ty, T => Ok(match op {
        Abs => k1::<T, T>(float::abs),
        Cbrt => k1::<T, T>(float::cbrt),
        Ceil => k1::<T, T>(float::ceil),
        Cos => k1::<T, T>(float::cos),
        Erf => k1::<T, T>(float::erf),
        Exp => k1::<T, T>(float::exp),
        Expm1 => k1::<T, T>(float::exponential_minus_one),
        Floor => k1::<T, T>(float::floor),
        Imag => k1::<T, T>(|_| T::from_bits_u64(0)),
        IsFinite => k1::<T, u8>(|v| float::is_finite(v) as u8),
        Log => k1::<T, T>(float::log),
        Log1p => k1::<T, T>(float::log_plus_one),
        Logistic => k1::<T, T>(float::logistic),
        Negate => k1::<T, T>(float::negate),
        Real => k1::<T, T>(|v| v),
        RoundNearestAfz => k1::<T, T>(float::round_nearest_afz),
        RoundNearestEven => k1::<T, T>(float::round_nearest_even),
        Rsqrt => k1::<T, T>(float::rsqrt),
        Sign => k1::<T, T>(float::sign),
        Sin => k1::<T, T>(float::sin),
        Sqrt => k1::<T, T>(float::sqrt),
        Tan => k1::<T, T>(float::tan),
        Tanh => k1::<T, T>(float::tanh),
        Not | PopCount | Clz => return Err(undefined(op.name(), ty)),
    }), _ => int_type!(ty, T => Ok(match op {
        Abs => k1::<T, T>(int::abs),
        Negate => k1::<T, T>(int::negate),
        Not => k1::<T, T>(int::not),
        PopCount => k1::<T, T>(int::popcnt),
        Clz => k1::<T, T>(int::count_leading_zeros),
        Sign if T::SIGNED => k1::<T, T>(int::sign),
        _ => return Err(undefined(op.name(), ty)),
    }), _ => complex_type!(ty, T => Ok(match op {
        Abs => k1::<T, <T as ComplexSemantics>::Part>(complex::abs),
        Real => k1::<T, <T as ComplexSemantics>::Part>(|z: T| z.re()),
        Imag => k1::<T, <T as ComplexSemantics>::Part>(|z: T| z.im()),
        Cos => k1::<T, T>(complex::cos),
        Exp => k1::<T, T>(complex::exp),
        Expm1 => k1::<T, T>(complex::exponential_minus_one),
        Log => k1::<T, T>(complex::log),
        Log1p => k1::<T, T>(complex::log_plus_one),
        Logistic => k1::<T, T>(complex::logistic),
        Negate => k1::<T, T>(complex::negate),
        Rsqrt => k1::<T, T>(complex::rsqrt),
        Sign => k1::<T, T>(complex::sign),
        Sin => k1::<T, T>(complex::sin),
        Sqrt => k1::<T, T>(complex::sqrt),
        Tan => k1::<T, T>(complex::tan),
        Tanh => k1::<T, T>(complex::tanh),
        _ => return Err(undefined(op.name(), ty)),
    }), _ => Err(undefined(op.name(), ty)))))
}

/// The conversions of a 16-bit float type over slices: its bits to `f32`
/// (exact) and `f32` to its bits (nearest-even), with the hardware
/// conversion where the processor has one.
#[derive(Clone, Copy)]
struct Half {
    up: fn(&[u16], &mut [f32]) -> Result<()>,
    down: fn(&[f32], &mut [u16]) -> Result<()>,
}

impl Half {
    fn of(ty: ElementType) -> Option<Half> {
        match ty {
            ElementType::BF16 => Some(Half {
                up: vmath::convert::bf16_to_f32,
                down: vmath::convert::f32_to_bf16,
            }),
            ElementType::F16 => Some(Half {
                up: vmath::convert::f16_to_f32,
                down: vmath::convert::f32_to_f16,
            }),
            _ => None,
        }
    }

    /// Rounds every value of `v` to the type, in place (`bits` is scratch
    /// of the same length): one op's result in a chain of 16-bit ops.
    fn round(self, v: &mut [f32], bits: &mut [u16]) {
        checked((self.down)(v, bits));
        checked((self.up)(bits, v));
    }
}

/// Elements per chunk of a 16-bit op computed through `f32`.
const HALF_CHUNK: usize = 512;

/// The buffers of [`Settled::run`].
struct SettleScratch {
    approx: [f32; HALF_CHUNK],
    upper: [f32; HALF_CHUNK],
    high: [u16; HALF_CHUNK],
}

/// The chunk buffers of the 16-bit kernels, one set per thread: arrays on
/// the stack would be zeroed on every call, 6 KiB per 1024-element block and
/// op, an eighth of a bf16 gelu's time.
struct HalfScratch {
    /// The widened operands.
    wide: [[f32; HALF_CHUNK]; 2],
    work: HalfWork,
}

/// Intermediate values of one chunk.
struct HalfWork {
    f: [[f32; HALF_CHUNK]; 3],
    bits: [u16; HALF_CHUNK],
    settle: SettleScratch,
}

thread_local! {
    static HALF_SCRATCH: std::cell::RefCell<HalfScratch> = const {
        std::cell::RefCell::new(HalfScratch {
            wide: [[0.0; HALF_CHUNK]; 2],
            work: HalfWork {
                f: [[0.0; HALF_CHUNK]; 3],
                bits: [0; HALF_CHUNK],
                settle: SettleScratch {
                    approx: [0.0; HALF_CHUNK],
                    upper: [0.0; HALF_CHUNK],
                    high: [0; HALF_CHUNK],
                },
            },
        })
    };
}

/// Runs `f` with this thread's [`HalfScratch`]. The 16-bit kernels call
/// only `f32` kernels inside, never another 16-bit one, so it is never
/// borrowed twice.
fn with_half_scratch<R>(f: impl FnOnce(&mut HalfScratch) -> R) -> R {
    HALF_SCRATCH.with(|s| f(&mut s.borrow_mut()))
}

/// How far, in `f32` units in the last place, a `vmath` approximation may
/// be from the C library's `f32` function for [`settle`] to take its
/// rounding: the approximations are within 5.2 ULP of the correctly rounded
/// result and the C library's within about 2 (`vmath`'s module doc), so 16
/// leaves room, and only about one result in 250 (`f16`) or 2000 (`bf16`)
/// lies that close to a rounding boundary and is computed again exactly.
const SETTLE_ULPS: u32 = 16;

/// A 16-bit function defined as the C library's `f32` function rounded
/// once, computed with `vmath`'s vectorised approximation of it and made
/// exact by [`settle`].
struct Settled {
    half: Half,
    /// The `f32` kernel of `vmath`'s approximation.
    fast: Kernel,
    /// The definition, on a widened 16-bit value: the semantics' element
    /// function, giving the 16-bit result's bits.
    exact: fn(f32) -> u16,
}

impl Settled {
    fn new(op: UnaryOp, ty: ElementType) -> Option<Settled> {
        let f = FloatUnary::from_hlo(op)?;
        let exact = match ty {
            ElementType::F16 => semantic_half::<half::f16>(op)?,
            ElementType::BF16 => semantic_half::<half::bf16>(op)?,
            _ => return None,
        };
        Some(Settled {
            half: Half::of(ty)?,
            fast: vfloat_unary(f, ElementType::F32)?,
            exact,
        })
    }

    /// The function of every widened value of `x` (at most [`HALF_CHUNK`]),
    /// as 16-bit bits into `out`.
    fn run(&self, x: &[f32], out: &mut [u16], scratch: &mut SettleScratch) {
        let n = x.len();
        let approx = &mut scratch.approx[..n];
        // SAFETY: `x` and `approx` hold `n` f32 each and do not overlap.
        unsafe {
            self.fast.call(
                &[Arg::Ptr(x.as_ptr().cast())],
                approx.as_mut_ptr().cast(),
                n,
            )
        };
        let (upper, high) = (&mut scratch.upper[..n], &mut scratch.high[..n]);
        settle(self.half, self.exact, x, approx, upper, high, out);
    }
}

/// The semantics' element function of a transcendental `op` on the 16-bit
/// type `T`, taking the widened value and giving the result's bits.
fn semantic_half<T: FloatSemantics<Wide = f32>>(op: UnaryOp) -> Option<fn(f32) -> u16> {
    use UnaryOp::*;
    fn bits<T: FloatSemantics>(v: T) -> u16 {
        v.to_bits_u64() as u16
    }
    Some(match op {
        Exp => |x| bits(float::exp(T::narrow(x))),
        Log => |x| bits(float::log(T::narrow(x))),
        Tanh => |x| bits(float::tanh(T::narrow(x))),
        Sin => |x| bits(float::sin(T::narrow(x))),
        Cos => |x| bits(float::cos(T::narrow(x))),
        Tan => |x| bits(float::tan(T::narrow(x))),
        Expm1 => |x| bits(float::exponential_minus_one(T::narrow(x))),
        Cbrt => |x| bits(float::cbrt(T::narrow(x))),
        Erf => |x| bits(float::erf(T::narrow(x))),
        _ => return None,
    })
}

/// Rounds `approx`, approximations of an `f32` function at the widened
/// 16-bit values `x`, to the 16-bit type into `out`, giving exactly
/// `exact(x)`: where every value within [`SETTLE_ULPS`] of an approximation
/// rounds to the same 16-bit value, the exact `f32` result (that close)
/// rounds to it too; the few others, and NaNs (whose bits the approximation
/// need not share), are computed by `exact`. Rounding is monotonic in the
/// magnitude, so the two ends of that interval decide. `approx`, `upper` and
/// `high` (as long as `x`) are scratch.
fn settle(
    half: Half,
    exact: fn(f32) -> u16,
    x: &[f32],
    approx: &mut [f32],
    upper: &mut [f32],
    high: &mut [u16],
    out: &mut [u16],
) {
    checked(vmath::convert::ulp_bounds(approx, SETTLE_ULPS, upper));
    checked((half.down)(approx, out));
    checked((half.down)(upper, high));
    if out == high {
        return;
    }
    // Groups of 32, so that the scan for the few to redo is vectorised.
    for ((o, h), x) in out.chunks_mut(32).zip(high.chunks(32)).zip(x.chunks(32)) {
        if o.iter().zip(h).fold(0, |d, (a, b)| d | (a ^ b)) != 0 {
            for ((o, &h), &x) in o.iter_mut().zip(h).zip(x) {
                if *o != h {
                    *o = exact(x);
                }
            }
        }
    }
}

/// A unary op on a 16-bit float type computed chunk by chunk through `f32`:
/// `body(x, out, work)` writes the results' bits for the widened operand
/// chunk `x`.
fn half_chunks(
    half: Half,
    body: impl Fn(&[f32], &mut [u16], &mut HalfWork) + Send + Sync + 'static,
) -> Kernel {
    Kernel::new(1, move |args, dst, n| {
        with_half_scratch(|s| {
            let HalfScratch {
                wide: [wide, _],
                work,
            } = s;
            // SAFETY (whole body): `Kernel::call`'s contract; every chunk of
            // the operand is widened before its destination is written, so
            // the operand may be the destination.
            unsafe {
                let src = match args[0] {
                    Arg::Scalar(p) => {
                        checked((half.up)(&[scalar::<u16>(p)], &mut wide[..1]));
                        let mut r = [0u16];
                        body(&wide[..1], &mut r, work);
                        return fill_typed(dst.cast::<u16>(), n, r[0]);
                    }
                    Arg::Ptr(p) => p.cast::<u16>(),
                };
                let mut start = 0;
                while start < n {
                    let len = HALF_CHUNK.min(n - start);
                    let x = std::slice::from_raw_parts(src.add(start), len);
                    checked((half.up)(x, &mut wide[..len]));
                    let out = std::slice::from_raw_parts_mut(dst.cast::<u16>().add(start), len);
                    body(&wide[..len], out, work);
                    start += len;
                }
            }
        })
    })
}

/// The transcendental functions of `f16` and `bf16`, vectorised and equal
/// bit for bit to the semantics' definitions, which are XLA CPU's (checked
/// on every 16-bit input against JAX 0.10.2's CPU results; see the test
/// `half_transcendentals_are_the_semantics_on_every_input`):
/// * `bf16`: XLA CPU's float normalization computes each `bf16` op in `f32`
///   and rounds it, so a `bf16` op is its `f32` kernel rounded once. Where
///   the `f32` kernel is the C library's scalar function (`sin`, `cos`,
///   `tan`, `expm1`, `cbrt`, `erf`), [`Settled`] gives its rounding from
///   `vmath`'s approximation; the others (`exp`, `log`, `tanh`, `logistic`,
///   `log1p`) take [`half_via_f32`] in the caller. (XLA expands `logistic`
///   into `bf16` steps before it normalizes, each rounded: that differs from
///   the one rounding the semantics define on about 1.7% of inputs.)
/// * `f16`: XLA CPU keeps `f16` ops in `f16`, and LLVM computes an `f16`
///   math function as the C library's `f32` function rounded to `f16` (not
///   XLA's `f32` approximations): [`Settled`] for `exp`, `log`, `tanh`,
///   `sin`, `cos`, `tan`, `cbrt` and `erf` (`log1p`'s `f32` kernel is the C
///   library's algorithm already). `logistic` and `expm1` are expanded by
///   XLA into `f16` ops, each rounded to `f16`: the same steps here, with
///   the settled `exp` and `tanh`.
///
/// `None` for the other ops and types.
fn half_transcendental(op: UnaryOp, ty: ElementType, result: ElementType) -> Option<Kernel> {
    use UnaryOp::*;
    let half = Half::of(ty).filter(|_| result == ty)?;
    let f16 = ty == ElementType::F16;
    match op {
        Logistic if f16 => {
            let exp = Settled::new(Exp, ty)?;
            Some(half_chunks(half, move |x, out, work| {
                let n = x.len();
                let HalfWork {
                    f: [v, ..],
                    bits,
                    settle,
                } = work;
                let (v, bits) = (&mut v[..n], &mut bits[..n]);
                // 1 / (1 + exp(-x)), every step rounded to f16.
                for (v, &x) in v.iter_mut().zip(x) {
                    *v = -x;
                }
                exp.run(v, bits, settle);
                checked((half.up)(bits, v));
                for v in v.iter_mut() {
                    *v += 1.0;
                }
                half.round(v, bits);
                for v in v.iter_mut() {
                    *v = 1.0 / *v;
                }
                checked((half.down)(v, out));
            }))
        }
        Expm1 if f16 => {
            let (exp, tanh) = (Settled::new(Exp, ty)?, Settled::new(Tanh, ty)?);
            Some(half_chunks(half, move |x, out, work| {
                let n = x.len();
                let HalfWork {
                    f: [half_x, exp_x, t],
                    bits,
                    settle,
                } = work;
                let (half_x, exp_x, t) = (&mut half_x[..n], &mut exp_x[..n], &mut t[..n]);
                let bits = &mut bits[..n];
                // XLA's expansion, every step rounded to f16: x where x/2
                // underflows, exp(x) - 1 where |x| > 0.5, otherwise
                // tanh(x/2) * (exp(x) + 1).
                for (h, &x) in half_x.iter_mut().zip(x) {
                    *h = x * 0.5;
                }
                half.round(half_x, bits);
                exp.run(x, bits, settle);
                checked((half.up)(bits, exp_x));
                for (t, &e) in t.iter_mut().zip(exp_x.iter()) {
                    *t = e + 1.0;
                }
                half.round(t, bits);
                tanh.run(half_x, bits, settle);
                // t becomes tanh(x/2) * (exp(x) + 1), then the result.
                checked((half.up)(bits, &mut settle.approx[..n]));
                for i in 0..n {
                    t[i] = if half_x[i] == 0.0 {
                        x[i]
                    } else if x[i].abs() > 0.5 {
                        exp_x[i] - 1.0
                    } else {
                        settle.approx[i] * t[i]
                    };
                }
                checked((half.down)(t, out));
            }))
        }
        Exp | Log | Tanh if f16 => settled(op, ty, half),
        Sin | Cos | Tan | Expm1 | Cbrt | Erf => settled(op, ty, half),
        _ => None,
    }
}

/// The kernel of a [`Settled`] function.
fn settled(op: UnaryOp, ty: ElementType, half: Half) -> Option<Kernel> {
    let s = Settled::new(op, ty)?;
    Some(half_chunks(half, move |x, out, work| {
        s.run(x, out, &mut work.settle)
    }))
}

/// An `f16` or `bf16` op whose result has its operands' type, as the
/// semantics define it (widened to `f32`, computed, rounded once): chunks of
/// the operands widened with the hardware conversion, the `f32` kernel
/// `make_inner(F32)` gives, and the result rounded back. This is what makes
/// 16-bit float arithmetic run at `f32`'s speed: the element functions of
/// the 16-bit types convert one value at a time. `None` for other types.
fn half_via_f32(
    ty: ElementType,
    result: ElementType,
    make_inner: impl FnOnce(ElementType) -> Result<Kernel>,
) -> Result<Option<Kernel>> {
    let Some(Half { up, down }) = Half::of(ty).filter(|_| result == ty) else {
        return Ok(None);
    };
    let inner = make_inner(ElementType::F32)?;
    let arity = inner.arity;
    Ok(Some(Kernel::new(arity, move |args, dst, n| {
        with_half_scratch(|s| {
            let HalfScratch { wide, work } = s;
            let res = &mut work.f[0];
            let mut scalars = [0f32; 2];
            let mut chunk = [Arg::Scalar(std::ptr::null()); 2];
            // SAFETY (whole body): `Kernel::call`'s contract; every chunk is
            // read whole before its destination is written, so an operand may
            // be the destination.
            unsafe {
                for (k, &arg) in args.iter().enumerate() {
                    if let Arg::Scalar(p) = arg {
                        checked(up(&[scalar::<u16>(p)], &mut scalars[k..k + 1]));
                    }
                }
                let mut start = 0;
                while start < n {
                    let len = HALF_CHUNK.min(n - start);
                    for (k, (&arg, w)) in args.iter().zip(wide.iter_mut()).enumerate() {
                        chunk[k] = match arg {
                            Arg::Ptr(p) => {
                                let src =
                                    std::slice::from_raw_parts(p.cast::<u16>().add(start), len);
                                checked(up(src, &mut w[..len]));
                                Arg::Ptr(w.as_ptr().cast())
                            }
                            Arg::Scalar(_) => Arg::Scalar((&scalars[k] as *const f32).cast()),
                        };
                    }
                    (inner.f)(&chunk[..arity], res.as_mut_ptr().cast(), len);
                    let out = std::slice::from_raw_parts_mut(dst.cast::<u16>().add(start), len);
                    checked(down(&res[..len], out));
                    start += len;
                }
            }
        })
    })))
}

/// Receives the typed element function of a binary op whose result has its
/// operands' type (everything but `complex`): a builder generic over it.
pub(crate) trait CombinerVisitor {
    type Out;
    fn visit<T, F>(self, f: F) -> Self::Out
    where
        T: bytemuck::Pod + Send + Sync + 'static,
        F: Fn(T, T) -> T + Copy + Send + Sync + 'static;
}

/// `maximum` (`MAX`) or `minimum` of two 16-bit floats whose exponent
/// field is `EXP` (`f16` or `bf16`), on their bits: the semantics'
/// `maximum`/`minimum` (NaN if either is, the first NaN; `-0 < +0`; a tie
/// of equal bits is either) without widening, so a fold over `f16` rows
/// vectorises. Flipping the magnitude bits of negative values makes the
/// signed order of the bits the numbers' order, `-0` just below `+0`.
#[inline(always)]
fn half_minmax<const EXP: u16, const MAX: bool>(a: u16, b: u16) -> u16 {
    let key = |x: u16| {
        let s = x as i16;
        s ^ ((s >> 15) & 0x7fff)
    };
    let first = if MAX {
        key(a) >= key(b)
    } else {
        key(a) <= key(b)
    };
    let r = if first { a } else { b };
    let r = if (b & 0x7fff) > EXP { b } else { r };
    if (a & 0x7fff) > EXP {
        a
    } else {
        r
    }
}

fn with_same_type_binary<B: CombinerVisitor>(
    op: BinaryOp,
    ty: ElementType,
    b: B,
) -> Result<B::Out> {
    use BinaryOp::*;
    if ty == ElementType::Pred {
        return match op {
            And | Multiply | Minimum => Ok(b.visit::<u8, _>(|x, y| x & y)),
            Or | Add | Maximum => Ok(b.visit::<u8, _>(|x, y| x | y)),
            Xor => Ok(b.visit::<u8, _>(|x, y| x ^ y)),
            _ => Err(undefined(op.name(), ty)),
        };
    }
    match (ty, op) {
        (ElementType::F32, Maximum) => return Ok(b.visit::<f32, _>(select_minmax!(f32).0)),
        (ElementType::F32, Minimum) => return Ok(b.visit::<f32, _>(select_minmax!(f32).1)),
        (ElementType::F64, Maximum) => return Ok(b.visit::<f64, _>(select_minmax!(f64).0)),
        (ElementType::F64, Minimum) => return Ok(b.visit::<f64, _>(select_minmax!(f64).1)),
        (ElementType::F16 | ElementType::BF16, Maximum | Minimum) => {
            let max = op == Maximum;
            return Ok(match (ty, max) {
                (ElementType::F16, true) => b.visit::<u16, _>(half_minmax::<0x7c00, true>),
                (ElementType::F16, false) => b.visit::<u16, _>(half_minmax::<0x7c00, false>),
                (_, true) => b.visit::<u16, _>(half_minmax::<0x7f80, true>),
                (_, false) => b.visit::<u16, _>(half_minmax::<0x7f80, false>),
            });
        }
        _ => {}
    }
    float_type!(ty, T => Ok(match op {
        Add => b.visit::<T, _>(float::add),
        Subtract => b.visit::<T, _>(float::subtract),
        Multiply => b.visit::<T, _>(float::multiply),
        Divide => b.visit::<T, _>(float::divide),
        Remainder => b.visit::<T, _>(float::remainder),
        Maximum => b.visit::<T, _>(float::maximum),
        Minimum => b.visit::<T, _>(float::minimum),
        Power => b.visit::<T, _>(float::power),
        Atan2 => b.visit::<T, _>(float::atan2),
        _ => return Err(undefined(op.name(), ty)),
    }), _ => int_type!(ty, T => Ok(match op {
        Add => b.visit::<T, _>(int::add),
        Subtract => b.visit::<T, _>(int::subtract),
        Multiply => b.visit::<T, _>(int::multiply),
        Divide => b.visit::<T, _>(int::divide),
        Remainder => b.visit::<T, _>(int::remainder),
        Maximum => b.visit::<T, _>(int::maximum),
        Minimum => b.visit::<T, _>(int::minimum),
        And => b.visit::<T, _>(int::and),
        Or => b.visit::<T, _>(int::or),
        Xor => b.visit::<T, _>(int::xor),
        ShiftLeft => b.visit::<T, _>(int::shift_left),
        ShiftRightLogical => b.visit::<T, _>(int::shift_right_logical),
        ShiftRightArithmetic => b.visit::<T, _>(int::shift_right_arithmetic),
        Power => b.visit::<T, _>(int::power),
        Atan2 | Complex => return Err(undefined(op.name(), ty)),
    }), _ => complex_type!(ty, T => Ok(match op {
        Add => b.visit::<T, _>(complex::add),
        Subtract => b.visit::<T, _>(complex::subtract),
        Multiply => b.visit::<T, _>(complex::multiply),
        Divide => b.visit::<T, _>(complex::divide),
        Power => b.visit::<T, _>(complex::power),
        Atan2 => b.visit::<T, _>(complex::atan2),
        _ => return Err(undefined(op.name(), ty)),
    }), _ => Err(undefined(op.name(), ty)))))
}

/// The element function of a reducer or scatter combiner that is the single
/// binary op `op` on `ty`, handed to `visitor` with its Rust type; `None` when
/// the typed reduction kernels must not take it (they reorder: only `add`,
/// `multiply`, `maximum`, `minimum` and the bitwise ops, on real and `pred`
/// types), and callers run the combiner through the scalar evaluator. The
/// functions are [`binary`]'s, so reduce, reduce-window, scatter and fused
/// reductions compute what the elementwise op does.
pub(crate) fn typed_combiner<V: CombinerVisitor>(
    op: BinaryOp,
    ty: ElementType,
    visitor: V,
) -> Option<V::Out> {
    use BinaryOp::*;
    if ty.is_complex() || !matches!(op, Add | Multiply | Maximum | Minimum | And | Or | Xor) {
        return None;
    }
    with_same_type_binary(op, ty, visitor).ok()
}

struct MapBuilder;
impl CombinerVisitor for MapBuilder {
    type Out = Kernel;
    fn visit<T, F>(self, f: F) -> Kernel
    where
        T: bytemuck::Pod + Send + Sync + 'static,
        F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
    {
        k2::<T, T, T>(f)
    }
}

/// `op(a, b)` on operands of type `ty` giving `result`.
pub fn binary(op: BinaryOp, ty: ElementType, result: ElementType) -> Result<Kernel> {
    let expected = platform_api::semantics::binary_result_type(op, ty)?;
    if expected != result {
        return Err(Error::invalid_argument(format!(
            "{} of {ty} gives {expected}, not {result}",
            op.name()
        )));
    }
    if let Some(k) = FloatBinary::from_hlo(op)
        .filter(|b| !matches!(b, FloatBinary::Pow | FloatBinary::Atan2))
        .and_then(|b| vfloat_binary(b, ty))
    {
        return Ok(k);
    }
    if let Some(k) = vmath::int::IntBinary::from_hlo(op).and_then(|b| vint_binary(b, ty)) {
        return Ok(k);
    }
    if let Some(k) = half_via_f32(ty, result, |inner| binary(op, inner, inner))? {
        return Ok(k);
    }
    if op == BinaryOp::Complex {
        return match ty {
            ElementType::F32 => Ok(k2::<f32, f32, Complex32>(Complex32::new)),
            ElementType::F64 => Ok(k2::<f64, f64, Complex64>(Complex64::new)),
            _ => Err(undefined(op.name(), ty)),
        };
    }
    with_same_type_binary(op, ty, MapBuilder)
}

/// `k` (whose operands and result are all one byte wide), with every operand
/// that is exactly the destination copied aside first, chunk by chunk: a
/// compare of byte operands and a select's predicate read their operands as
/// slices of another type than the destination's (`i8` into `pred`, `pred`
/// into `u8`), which the vectorised kernels take only when distinct from it.
fn bytewise_detached(k: Kernel) -> Kernel {
    const CHUNK: usize = 1024;
    let arity = k.arity;
    Kernel::new(arity, move |args, dst, n| {
        let aliased = |a: &Arg| matches!(a, Arg::Ptr(p) if std::ptr::eq(*p, dst));
        if !args.iter().any(aliased) {
            return (k.f)(args, dst, n);
        }
        let mut copies = [[0u8; CHUNK]; 3];
        let mut chunk = [Arg::Scalar(std::ptr::null()); 3];
        let mut start = 0;
        while start < n {
            let len = CHUNK.min(n - start);
            for ((slot, copy), &arg) in chunk.iter_mut().zip(&mut copies).zip(args) {
                *slot = match arg {
                    Arg::Ptr(p) if std::ptr::eq(p, dst) => {
                        // SAFETY: `Kernel::call`'s contract: `n` bytes at `p`.
                        unsafe {
                            std::ptr::copy_nonoverlapping(p.add(start), copy.as_mut_ptr(), len)
                        };
                        Arg::Ptr(copy.as_ptr())
                    }
                    // SAFETY: as above (one byte per element).
                    Arg::Ptr(p) => Arg::Ptr(unsafe { p.add(start) }),
                    scalar => scalar,
                };
            }
            // SAFETY: as above.
            (k.f)(&chunk[..arity], unsafe { dst.add(start) }, len);
            start += len;
        }
    })
}

/// `compare(a, b)` into `pred` bytes.
pub fn compare(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    ty: ElementType,
) -> Result<Kernel> {
    let k = compare_kernel(direction, compare_type, ty)?;
    Ok(if ty.byte_size() == 1 {
        bytewise_detached(k)
    } else {
        k
    })
}

fn compare_kernel(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    ty: ElementType,
) -> Result<Kernel> {
    use ComparisonDirection::*;
    macro_rules! ordered {
        ($T:ty, $eq:expr, $ne:expr, $lt:expr, $le:expr, $gt:expr, $ge:expr) => {
            match direction {
                Eq => k2::<$T, $T, u8>(move |a, b| $eq(a, b) as u8),
                Ne => k2::<$T, $T, u8>(move |a, b| $ne(a, b) as u8),
                Lt => k2::<$T, $T, u8>(move |a, b| $lt(a, b) as u8),
                Le => k2::<$T, $T, u8>(move |a, b| $le(a, b) as u8),
                Gt => k2::<$T, $T, u8>(move |a, b| $gt(a, b) as u8),
                Ge => k2::<$T, $T, u8>(move |a, b| $ge(a, b) as u8),
            }
        };
    }
    let total_order = compare_type == Some(ComparisonType::TotalOrder);
    let fast = vfloat!(ty, V, T => Kernel::new(2, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract; a `pred` destination never
        // aliases a float operand, nor a byte operand (`bytewise_detached`).
        unsafe {
            let (a, b) = (operand::<T>(args[0], std::ptr::null_mut(), n), operand::<T>(args[1], std::ptr::null_mut(), n));
            checked(V::compare(direction, total_order, a, b, out::<u8>(dst, n)))
        }
    }))
    .or_else(|| vint!(ty, T => Kernel::new(2, move |args, dst, n| {
        // SAFETY: as above.
        unsafe {
            let (a, b) = (operand::<T>(args[0], std::ptr::null_mut(), n), operand::<T>(args[1], std::ptr::null_mut(), n));
            checked(vmath::int::compare(direction, a, b, out::<u8>(dst, n)))
        }
    })));
    if let Some(k) = fast {
        return Ok(k);
    }
    if ty == ElementType::Pred {
        return Ok(ordered!(
            u8,
            |a, b| a == b,
            |a, b| a != b,
            |a, b| a < b,
            |a, b| a <= b,
            |a, b| a > b,
            |a, b| a >= b
        ));
    }
    let total = compare_type == Some(ComparisonType::TotalOrder);
    float_type!(ty, T => Ok(if total {
        let key = float::total_order_key::<T>;
        ordered!(T,
            move |a, b| key(a) == key(b), move |a, b| key(a) != key(b),
            move |a, b| key(a) < key(b), move |a, b| key(a) <= key(b),
            move |a, b| key(a) > key(b), move |a, b| key(a) >= key(b))
    } else {
        ordered!(T, float::eq::<T>, float::ne::<T>, float::lt::<T>, float::le::<T>, float::gt::<T>, float::ge::<T>)
    }), _ => int_type!(ty, T => Ok(ordered!(T,
        |a, b| a == b, |a, b| a != b, |a, b| a < b, |a, b| a <= b, |a, b| a > b, |a, b| a >= b)),
    _ => complex_type!(ty, T => {
        let key = |z: T| {
            (
                float::total_order_key(z.re()),
                float::total_order_key(z.im()),
            )
        };
        Ok(match (direction, total) {
            (Eq, false) => k2::<T, T, u8>(|a, b| complex::eq(a, b) as u8),
            (Ne, false) => k2::<T, T, u8>(|a, b| complex::ne(a, b) as u8),
            (Eq, true) => k2::<T, T, u8>(move |a, b| (key(a) == key(b)) as u8),
            (Ne, true) => k2::<T, T, u8>(move |a, b| (key(a) != key(b)) as u8),
            _ => return Err(undefined(&format!("compare {direction}"), ty)),
        })
    }, _ => Err(undefined("compare", ty)))))
}

type IndexFn = dyn Fn(isize, isize, usize, *mut u8) + Send + Sync;

/// Writes index values (an iota's elements) converted to an element type.
pub struct IndexGen {
    f: Box<IndexFn>,
}

impl IndexGen {
    /// Writes `start + k·step` for `k < len`, converted with XLA's rules.
    ///
    /// # Safety
    /// `dst` valid for `len` elements.
    #[inline]
    pub unsafe fn call(&self, start: isize, step: isize, len: usize, dst: *mut u8) {
        if len > 0 {
            (self.f)(start, step, len, dst)
        }
    }
}

/// The index writer for element type `ty`.
pub fn index_gen(ty: ElementType) -> IndexGen {
    fn make<T: ConvertTarget + 'static>() -> IndexGen {
        IndexGen {
            f: Box::new(|start, step, len, dst| {
                // SAFETY: `IndexGen::call`'s contract.
                let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<T>(), len) };
                for (k, o) in out.iter_mut().enumerate() {
                    *o = convert_one::<i64, T>((start + k as isize * step) as i64);
                }
            }),
        }
    }
    any_type!(ty, T => make::<T>())
}

/// `select(pred, on_true, on_false)` on elements of type `ty`.
pub fn select(ty: ElementType) -> Result<Kernel> {
    let k = select_kernel(ty)?;
    Ok(if ty.byte_size() == 1 {
        bytewise_detached(k)
    } else {
        k
    })
}

fn select_kernel(ty: ElementType) -> Result<Kernel> {
    macro_rules! vselect {
        ($W:ty) => {
            Ok(Kernel::new(3, move |args, dst, n| {
                // SAFETY: `Kernel::call`'s contract; the predicate never
                // aliases the destination (`bytewise_detached`).
                unsafe {
                    let p = operand::<u8>(args[0], std::ptr::null_mut(), n);
                    let (t, f) = (
                        operand::<$W>(args[1], dst, n),
                        operand::<$W>(args[2], dst, n),
                    );
                    checked(vmath::select(p, t, f, out::<$W>(dst, n)))
                }
            }))
        };
    }
    match ty.byte_size() {
        1 => return vselect!(u8),
        2 => return vselect!(u16),
        4 => return vselect!(u32),
        8 => return vselect!(u64),
        _ => {}
    }
    width_type!(ty.byte_size(), W => Ok(k3::<u8, W, W, W>(|p, t, f| if p != 0 { t } else { f })),
        _ => Err(undefined("select", ty)))
}

/// `clamp(lo, x, hi)`.
pub fn clamp(ty: ElementType) -> Result<Kernel> {
    let fast = vfloat!(ty, V, T => Kernel::new(3, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            let (lo, x, hi) = (operand::<T>(args[0], dst, n), operand::<T>(args[1], dst, n), operand::<T>(args[2], dst, n));
            checked(V::clamp(lo, x, hi, out::<T>(dst, n)))
        }
    }))
    .or_else(|| vint!(ty, T => Kernel::new(3, move |args, dst, n| {
        // SAFETY: as above.
        unsafe {
            let (lo, x, hi) = (operand::<T>(args[0], dst, n), operand::<T>(args[1], dst, n), operand::<T>(args[2], dst, n));
            checked(vmath::int::clamp(lo, x, hi, out::<T>(dst, n)))
        }
    })));
    if let Some(k) = fast {
        return Ok(k);
    }
    if ty == ElementType::Pred {
        return Ok(k3::<u8, u8, u8, u8>(|lo, x, hi| hi.min(lo.max(x))));
    }
    float_type!(ty, T => Ok(k3::<T, T, T, T>(float::clamp)),
        _ => int_type!(ty, T => Ok(k3::<T, T, T, T>(|lo, x, hi| int::minimum(hi, int::maximum(lo, x)))),
            _ => Err(undefined("clamp", ty))))
}

/// `or(shift-left(x, left), shift-right-logical(x, right))` of an integer
/// type in one pass (the block evaluator's form of a rotate; operands `x`,
/// `left`, `right`).
pub fn shift_pair_or(ty: ElementType) -> Result<Kernel> {
    vint!(ty, T => Kernel::new(3, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract.
        unsafe {
            let (x, l, r) = (operand::<T>(args[0], dst, n), operand::<T>(args[1], dst, n), operand::<T>(args[2], dst, n));
            checked(vmath::int::shift_pair_or(x, l, r, out::<T>(dst, n)))
        }
    }))
    .ok_or_else(|| undefined("shift pair", ty))
}

fn convert_to<F: ConvertSource + 'static>(to: ElementType) -> Kernel {
    fn make<F: ConvertSource + 'static, T: ConvertTarget + 'static>() -> Kernel {
        Kernel::new(1, |args, dst, n| {
            // SAFETY: `Kernel::call`'s contract; a conversion's destination
            // is a different register than its operand.
            unsafe {
                match args[0] {
                    Arg::Scalar(p) => {
                        fill_typed(dst.cast::<T>(), n, convert_one::<F, T>(scalar::<F>(p)))
                    }
                    Arg::Ptr(p) if std::ptr::eq(p, dst) => {
                        run1(D, out::<T>(dst, n), convert_one::<F, T>)
                    }
                    Arg::Ptr(p) => checked(vmath::convert(
                        std::slice::from_raw_parts(p.cast::<F>(), n),
                        out::<T>(dst, n),
                    )),
                }
            }
        })
    }
    any_type!(to, T => make::<F, T>())
}

/// `convert` from `from` to `to` (XLA's rules, see `semantics::convert`).
pub fn convert(from: ElementType, to: ElementType) -> Result<Kernel> {
    if from.is_narrow() || to.is_narrow() {
        return Ok(convert_narrow(from, to));
    }
    // The 16-bit floats have hardware conversions to and from f32.
    type Bits = fn(&[u16], &mut [f32]) -> Result<()>;
    type ToBits = fn(&[f32], &mut [u16]) -> Result<()>;
    let widen: Option<Bits> = match (from, to) {
        (ElementType::F16, ElementType::F32) => Some(vmath::convert::f16_to_f32),
        (ElementType::BF16, ElementType::F32) => Some(vmath::convert::bf16_to_f32),
        _ => None,
    };
    if let Some(f) = widen {
        return Ok(Kernel::new(1, move |args, dst, n| {
            // SAFETY: `Kernel::call`'s contract (widening: never in place).
            unsafe {
                match args[0] {
                    Arg::Scalar(p) => {
                        let mut y = [0f32];
                        checked(f(&[scalar::<u16>(p)], &mut y));
                        fill_typed(dst.cast::<f32>(), n, y[0]);
                    }
                    Arg::Ptr(p) => checked(f(
                        std::slice::from_raw_parts(p.cast::<u16>(), n),
                        out::<f32>(dst, n),
                    )),
                }
            }
        }));
    }
    let narrow: Option<ToBits> = match (from, to) {
        (ElementType::F32, ElementType::F16) => Some(vmath::convert::f32_to_f16),
        (ElementType::F32, ElementType::BF16) => Some(vmath::convert::f32_to_bf16),
        _ => None,
    };
    if let Some(f) = narrow {
        return Ok(Kernel::new(1, move |args, dst, n| {
            // SAFETY: `Kernel::call`'s contract (narrowing: never in place).
            unsafe {
                match args[0] {
                    Arg::Scalar(p) => {
                        let mut y = [0u16];
                        checked(f(&[scalar::<f32>(p)], &mut y));
                        fill_typed(dst.cast::<u16>(), n, y[0]);
                    }
                    Arg::Ptr(p) => checked(f(
                        std::slice::from_raw_parts(p.cast::<f32>(), n),
                        out::<u16>(dst, n),
                    )),
                }
            }
        }));
    }
    Ok(any_type!(from, F => convert_to::<F>(to)))
}

/// `convert` to or from a narrow type (`s4`, `f8e4m3fn`, ...; one byte per
/// element): element by element through the semantics' narrow codec. Only the
/// converts `legalize::narrow` leaves at the edges of a computation run this.
fn convert_narrow(from: ElementType, to: ElementType) -> Kernel {
    let (fs, ts) = (from.byte_size(), to.byte_size());
    Kernel::new(1, move |args, dst, n| {
        // SAFETY: `Kernel::call`'s contract: `n` elements at each pointer (one
        // for a scalar), `n` writable at `dst`. The input is copied first, so
        // converting in place is fine.
        unsafe {
            let input: Vec<u8> = match args[0] {
                Arg::Scalar(p) => std::slice::from_raw_parts(p, fs).repeat(n),
                Arg::Ptr(p) => std::slice::from_raw_parts(p, n * fs).to_vec(),
            };
            let output = std::slice::from_raw_parts_mut(dst, n * ts);
            checked(platform_api::semantics::convert::convert_narrow(
                from, &input, to, output,
            ));
        }
    })
}

/// Copies elements of `width` bytes (`bitcast-convert` between equal widths,
/// or an identity).
pub fn copy(width: usize) -> Result<Kernel> {
    width_type!(width, W => Ok(k1::<W, W>(|v| v)),
        _ => Err(Error::unimplemented(format!("fused copy of {width}-byte elements"))))
}

/// `reduce-precision` to the given widths.
pub fn reduce_precision(ty: ElementType, exponent_bits: u32, mantissa_bits: u32) -> Result<Kernel> {
    if exponent_bits < 1 {
        return Err(Error::invalid_argument(
            "reduce-precision needs at least one exponent bit",
        ));
    }
    float_type!(ty, T => Ok(k1::<T, T>(move |v| float::reduce_precision(v, exponent_bits, mantissa_bits))),
        _ => Err(undefined("reduce-precision", ty)))
}

/// `(xs, rows, len, init, out)`: see [`Fold::call_rows`].
type FoldFn = dyn Fn(*const u8, usize, usize, *const u8, *mut u8) + Send + Sync;

/// Reduces a contiguous run with a binary reducer.
pub struct Fold {
    f: Box<FoldFn>,
    width: usize,
}

impl Fold {
    /// Writes `init ⊕ xs[0] ⊕ ... ⊕ xs[n-1]` to `out`, or the same without
    /// `init` when `init` is null (then `n >= 1`).
    ///
    /// # Safety
    /// `xs` valid for `n` elements, `init` null or valid for one, `out` for one.
    #[inline]
    pub unsafe fn call(&self, xs: *const u8, n: usize, init: *const u8, out: *mut u8) {
        if n == 0 {
            if !init.is_null() {
                // SAFETY: one element each (`init` and `out` are registers).
                unsafe { std::ptr::copy(init, out, self.width) };
            }
            return;
        }
        (self.f)(xs, 1, n, init, out)
    }

    /// Folds each of `rows` contiguous rows of `len` elements at `xs` into
    /// `out[i]` as [`Fold::call`] would, one row after another, in one call:
    /// rows of a few elements (a norm over x, y and z) would otherwise pay a
    /// call and an instruction-set dispatch per row, several times the fold.
    ///
    /// # Safety
    /// `xs` valid for `rows * len` elements, `init` null (then `len >= 1`)
    /// or valid for one, `out` for `rows`.
    #[inline]
    pub unsafe fn call_rows(
        &self,
        xs: *const u8,
        rows: usize,
        len: usize,
        init: *const u8,
        out: *mut u8,
    ) {
        if rows == 0 {
            return;
        }
        if len == 0 {
            for i in 0..rows {
                // SAFETY: as in `call`, for element `i` of `out`.
                unsafe { self.call(xs, 0, init, out.add(i * self.width)) };
            }
            return;
        }
        (self.f)(xs, rows, len, init, out)
    }
}

/// Lanes of the partial accumulators a fold keeps (64: four AVX-512 vectors of
/// `f32`, enough independent chains to hide the add latency; LLVM vectorises
/// this width with its loop vectoriser).
const LANES: usize = 64;

/// Lanes of a short run's accumulators (one AVX2 vector of `f32`): a run
/// of 16 to 127 elements folded one element after another waited on the
/// add's latency at every element.
const SHORT_LANES: usize = 8;

#[inline(always)]
unsafe fn fold_run<T: Copy>(xs: *const T, n: usize, init: Option<T>, f: impl Fn(T, T) -> T) -> T {
    // SAFETY: the caller's contract: `n` readable elements.
    let xs = unsafe { std::slice::from_raw_parts(xs, n) };
    if n >= 2 * LANES {
        fold_lanes::<T, LANES>(xs, init, f)
    } else if n >= 2 * SHORT_LANES {
        fold_lanes::<T, SHORT_LANES>(xs, init, f)
    } else {
        let mut iter = xs.iter().copied();
        let first = match init {
            Some(v) => v,
            // `n >= 1` when there is no init.
            None => iter
                .next()
                .unwrap_or_else(|| unreachable!("a fold without init of no elements")),
        };
        iter.fold(first, f)
    }
}

/// Folds `xs` (at least `L` elements) into `L` partial accumulators, then
/// those pairwise, then `init` with that, then the elements left over.
#[inline(always)]
fn fold_lanes<T: Copy, const L: usize>(xs: &[T], init: Option<T>, f: impl Fn(T, T) -> T) -> T {
    let (head, body) = xs.split_at(L);
    let mut acc: [T; L] = head
        .try_into()
        .unwrap_or_else(|_| unreachable!("L elements"));
    let chunks = body.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        // A new array each step, not `acc[k] = f(acc[k], c[k])` in place:
        // with the in-place form LLVM kept the accumulators in memory where
        // the fold is built behind a boxed closure (a NaN-propagating `max`
        // became masked stores to the stack, 5x slower on AVX2).
        acc = crate::kernels::reduce::combine_lanes(&acc, c, &f);
    }
    let mut width = L;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            acc[k] = f(acc[k], acc[k + width]);
        }
    }
    let mut r = match init {
        Some(v) => f(v, acc[0]),
        None => acc[0],
    };
    for &x in rest {
        r = f(r, x);
    }
    r
}

/// Rows folded side by side by [`fold_short_rows`].
const SHORT_ROWS: usize = 16;

/// Folds whole groups of [`SHORT_ROWS`] rows of `n` elements (too short for
/// lanes within a row) side by side, each row in [`fold_run`]'s order for
/// its length (`init` or the first element, then the rest in turn), so the
/// rows' chains of dependent combines overlap instead of waiting on each
/// other. Returns the rows folded; the caller folds the rest.
///
/// # Safety
/// As [`Fold::call_rows`]; `n >= 1` when `init` is `None`.
#[inline(always)]
unsafe fn fold_short_rows<T: Copy>(
    xs: *const T,
    rows: usize,
    n: usize,
    init: Option<T>,
    f: impl Fn(T, T) -> T,
    out: *mut T,
) -> usize {
    let groups = rows / SHORT_ROWS;
    let first = usize::from(init.is_none());
    for g in 0..groups {
        // SAFETY: rows `g·SHORT_ROWS ..` lie in `xs`, their results in `out`.
        unsafe {
            let x = xs.add(g * SHORT_ROWS * n);
            let mut acc: [T; SHORT_ROWS] =
                std::array::from_fn(|r| init.unwrap_or_else(|| x.add(r * n).read()));
            for c in first..n {
                acc = std::array::from_fn(|r| f(acc[r], x.add(r * n + c).read()));
            }
            for (r, &a) in acc.iter().enumerate() {
                out.add(g * SHORT_ROWS + r).write(a);
            }
        }
    }
    groups * SHORT_ROWS
}

struct FoldBuilder;
impl CombinerVisitor for FoldBuilder {
    type Out = Fold;
    fn visit<T, F>(self, f: F) -> Fold
    where
        T: bytemuck::Pod + Send + Sync + 'static,
        F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
    {
        Fold {
            width: std::mem::size_of::<T>(),
            f: Box::new(move |xs, rows, n, init, out| {
                // SAFETY: `Fold::call_rows`'s contract.
                let init = if init.is_null() {
                    None
                } else {
                    // SAFETY: one element.
                    Some(unsafe { init.cast::<T>().read() })
                };
                let (xs, out) = (xs.cast::<T>(), out.cast::<T>());
                crate::vmath::isa::dispatch!(vmath::level(), I => {
                    let mut i = 0;
                    if n < 2 * SHORT_LANES {
                        // SAFETY: forwarded, whole groups of rows.
                        i = unsafe { fold_short_rows(xs, rows, n, init, f, out) };
                    }
                    for i in i..rows {
                        // SAFETY: row `i`'s `n` elements at `xs`, element
                        // `i` of `out`.
                        unsafe { out.add(i).write(fold_run(xs.add(i * n), n, init, f)) }
                    }
                })
            }),
        }
    }
}

/// A fold with reducer `op` on elements of type `ty`.
pub fn fold(op: BinaryOp, ty: ElementType) -> Result<Fold> {
    with_same_type_binary(op, ty, FoldBuilder)
}

type AccumulateFn = dyn Fn(*mut u8, *const u8, usize, usize) + Send + Sync;

/// `acc[c] = op(acc[c], x[r][c])` for each row `r` of a row-major block in
/// turn (column reductions): one call per block, however short its rows, so
/// a reduction over a narrow minor dimension (the channels of an NHWC batch
/// norm) does not pay a call per row. Each column is combined in row order,
/// the order one call per row would give.
pub struct Accumulate {
    f: Box<AccumulateFn>,
}

impl Accumulate {
    /// Folds `rows` rows of `row_len` elements at `xs` into the `row_len`
    /// elements at `acc`.
    ///
    /// # Safety
    /// `acc` valid for `row_len` elements, `xs` for `rows * row_len`, not
    /// overlapping `acc`.
    #[inline]
    pub unsafe fn call(&self, acc: *mut u8, xs: *const u8, rows: usize, row_len: usize) {
        if rows > 0 && row_len > 0 {
            (self.f)(acc, xs, rows, row_len)
        }
    }
}

struct AccumulateBuilder;
impl CombinerVisitor for AccumulateBuilder {
    type Out = Accumulate;
    fn visit<T, F>(self, f: F) -> Accumulate
    where
        T: bytemuck::Pod + Send + Sync + 'static,
        F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
    {
        Accumulate {
            f: Box::new(move |acc, xs, rows, row_len| {
                // SAFETY: `Accumulate::call`'s contract.
                let (acc, xs) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(acc.cast::<T>(), row_len),
                        std::slice::from_raw_parts(xs.cast::<T>(), rows * row_len),
                    )
                };
                crate::vmath::isa::dispatch!(vmath::level(), I => {
                    crate::kernels::reduce::fold_columns(acc, xs, rows, |r| r * row_len, f)
                })
            }),
        }
    }
}

/// The column accumulator with reducer `op` on elements of type `ty`.
pub fn accumulate(op: BinaryOp, ty: ElementType) -> Result<Accumulate> {
    with_same_type_binary(op, ty, AccumulateBuilder)
}

/// Fills `n` elements of `width` bytes at `dst` with the value at `value`.
///
/// # Safety
/// `value` valid for one element, `dst` for `n`.
#[inline]
pub unsafe fn fill(width: usize, value: *const u8, dst: *mut u8, n: usize) {
    if n == 0 {
        return;
    }
    macro_rules! go {
        ($W:ty) => {{
            // SAFETY: forwarded.
            unsafe {
                let v = value.cast::<$W>().read_unaligned();
                let d = dst.cast::<$W>();
                for i in 0..n {
                    d.add(i).write(v);
                }
            }
        }};
    }
    match width {
        1 => {
            // SAFETY: forwarded.
            unsafe { std::ptr::write_bytes(dst, value.read(), n) }
        }
        2 => go!(u16),
        4 => go!(u32),
        8 => go!(u64),
        16 => go!([u64; 2]),
        _ => {
            for i in 0..n {
                // SAFETY: forwarded.
                unsafe { std::ptr::copy_nonoverlapping(value, dst.add(i * width), width) }
            }
        }
    }
}

/// Fills row `i` (`row_len` elements of `width` bytes at `dst + i·row_len`)
/// with value `i` at `values`, for `rows` rows: a per-row value broadcast
/// along its row. One dispatch on the width for all rows, so short rows (a
/// norm over x, y, z) do not pay a call each.
///
/// # Safety
/// `values` valid for `rows` elements, `dst` for `rows · row_len`.
pub unsafe fn fill_rows(
    width: usize,
    values: *const u8,
    dst: *mut u8,
    rows: usize,
    row_len: usize,
) {
    macro_rules! go {
        ($W:ty) => {
            go!($W, row_len)
        };
        ($W:ty, $len:expr) => {{
            // SAFETY: forwarded.
            unsafe {
                let src = values.cast::<$W>();
                let d = dst.cast::<$W>();
                for i in 0..rows {
                    let v = src.add(i).read_unaligned();
                    let row = d.add(i * $len);
                    for c in 0..$len {
                        row.add(c).write_unaligned(v);
                    }
                }
            }
        }};
    }
    // Long rows (a call per row is nothing beside the row) and wide elements
    // fill row by row.
    let by_row = row_len >= 16 || !matches!(width, 1 | 2 | 4 | 8);
    if by_row {
        for i in 0..rows {
            // SAFETY: forwarded.
            unsafe {
                fill(
                    width,
                    values.add(i * width),
                    dst.add(i * row_len * width),
                    row_len,
                )
            }
        }
        return;
    }
    match width {
        1 => go!(u8),
        2 => go!(u16),
        // Short rows (x, y, z) with their length known, so each row is a
        // few stores rather than a loop.
        4 if row_len == 3 => go!(u32, 3),
        4 if row_len == 4 => go!(u32, 4),
        4 => go!(u32),
        _ => go!(u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-level 16-bit `maximum`/`minimum` is the semantics' on every
    /// f16 and bf16 value against specials (zeros, infinities, NaNs of both
    /// signs and payloads, the extremes, subnormals) and a sweep of others,
    /// in both operand orders.
    #[test]
    fn half_minmax_is_the_semantics() {
        fn check<T: platform_api::semantics::float::FloatSemantics + bytemuck::Pod>(
            exp: u16,
            mm: [fn(u16, u16) -> u16; 2],
        ) {
            let specials = [
                0x0000u16,
                0x8000,
                0x0001,
                0x8001,
                0x03ff,
                0x83ff,
                exp,
                exp | 0x8000,
                exp | 1,
                exp | 0x8001,
                0x7fff,
                0xffff,
                exp - 1,
                (exp - 1) | 0x8000,
                0x3c00,
                0xbc00,
                0x3f80,
                0xbf80,
                0x1234,
                0x9234,
            ];
            let others = (0..=u16::MAX).step_by(97).chain(specials);
            for a in 0..=u16::MAX {
                for b in others.clone() {
                    for (x, y) in [(a, b), (b, a)] {
                        let (tx, ty) = (bytemuck::cast::<u16, T>(x), bytemuck::cast::<u16, T>(y));
                        let want = [float::maximum(tx, ty), float::minimum(tx, ty)];
                        for (f, w) in mm.iter().zip(want) {
                            assert_eq!(f(x, y), bytemuck::cast::<T, u16>(w), "{x:#06x} {y:#06x}");
                        }
                    }
                }
            }
        }
        check::<half::f16>(
            0x7c00,
            [half_minmax::<0x7c00, true>, half_minmax::<0x7c00, false>],
        );
        check::<half::bf16>(
            0x7f80,
            [half_minmax::<0x7f80, true>, half_minmax::<0x7f80, false>],
        );
    }

    #[test]
    fn filling_rows_matches_one_fill_per_row() {
        for width in [1usize, 2, 4, 8, 16] {
            for row_len in (0..=6).chain([15, 16, 17, 40]) {
                let rows = 9;
                let values: Vec<u8> = (0..rows * width).map(|i| (i * 37 + 11) as u8).collect();
                let mut got = vec![0xAAu8; rows * row_len * width];
                let mut want = got.clone();
                unsafe {
                    fill_rows(width, values.as_ptr(), got.as_mut_ptr(), rows, row_len);
                    for i in 0..rows {
                        fill(
                            width,
                            values[i * width..].as_ptr(),
                            want[i * row_len * width..].as_mut_ptr(),
                            row_len,
                        );
                    }
                }
                assert_eq!(got, want, "width {width}, rows of {row_len}");
            }
        }
    }

    #[test]
    fn folding_rows_at_once_matches_one_row_at_a_time() {
        // Values whose sum depends on the order of the adds.
        let xs: Vec<f32> = (0..40 * 150)
            .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 + if i % 3 == 0 { 1e4 } else { 0.0 })
            .collect();
        let init = 0.25f32;
        for op in [BinaryOp::Add, BinaryOp::Maximum] {
            let fold = fold(op, ElementType::F32).unwrap();
            for len in (0..=20).chain([31, 32, 33, 127, 128, 129, 150]) {
                let rows = 40;
                for with_init in [true, false] {
                    if !with_init && len == 0 {
                        continue;
                    }
                    let init = if with_init {
                        (&init as *const f32).cast::<u8>()
                    } else {
                        std::ptr::null()
                    };
                    let mut got = vec![f32::NAN; rows];
                    let mut want = vec![f32::NAN; rows];
                    unsafe {
                        fold.call_rows(
                            xs.as_ptr().cast(),
                            rows,
                            len,
                            init,
                            got.as_mut_ptr().cast(),
                        );
                        for (i, w) in want.iter_mut().enumerate() {
                            fold.call(
                                xs[i * len..].as_ptr().cast(),
                                len,
                                init,
                                (w as *mut f32).cast(),
                            );
                        }
                    }
                    assert_eq!(
                        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        "{op:?}, rows of {len}, init {with_init}"
                    );
                }
            }
        }
    }

    fn run2(k: &Kernel, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; a.len()];
        // SAFETY: equal lengths.
        unsafe {
            k.call(
                &[Arg::Ptr(a.as_ptr().cast()), Arg::Ptr(b.as_ptr().cast())],
                out.as_mut_ptr().cast(),
                a.len(),
            )
        };
        out
    }

    #[test]
    fn binary_and_fold_follow_the_semantics() {
        let k = binary(BinaryOp::Maximum, ElementType::F32, ElementType::F32).unwrap();
        let out = run2(&k, &[1.0, f32::NAN, -0.0], &[2.0, 1.0, 0.0]);
        assert_eq!(out[0], 2.0);
        assert!(out[1].is_nan());
        let f = fold(BinaryOp::Add, ElementType::S32).unwrap();
        let xs: Vec<i32> = (1..=100).collect();
        let mut r = 0i32;
        let init = 7i32;
        // SAFETY: valid pointers.
        unsafe {
            f.call(
                xs.as_ptr().cast(),
                xs.len(),
                (&init as *const i32).cast(),
                (&mut r as *mut i32).cast(),
            )
        };
        assert_eq!(r, 5050 + 7);
        // SAFETY: as above, no init.
        unsafe {
            f.call(
                xs.as_ptr().cast(),
                3,
                std::ptr::null(),
                (&mut r as *mut i32).cast(),
            )
        };
        assert_eq!(r, 6);
    }

    #[test]
    fn vectorisable_max_min_match_the_semantics_bit_for_bit() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            1e-40,
            3.5,
        ];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for &x in &specials {
            for &y in &specials {
                a.push(x);
                b.push(y);
            }
        }
        for (op, reference) in [
            (
                BinaryOp::Maximum,
                float::maximum::<f32> as fn(f32, f32) -> f32,
            ),
            (BinaryOp::Minimum, float::minimum::<f32>),
        ] {
            let k = binary(op, ElementType::F32, ElementType::F32).unwrap();
            let got = run2(&k, &a, &b);
            for i in 0..a.len() {
                assert_eq!(
                    got[i].to_bits(),
                    reference(a[i], b[i]).to_bits(),
                    "{op:?}({}, {})",
                    a[i],
                    b[i]
                );
            }
            // A scalar operand gives the same.
            let mut out = vec![0f32; a.len()];
            let y = 0.0f32;
            // SAFETY: valid lengths.
            unsafe {
                k.call(
                    &[
                        Arg::Ptr(a.as_ptr().cast()),
                        Arg::Scalar((&y as *const f32).cast()),
                    ],
                    out.as_mut_ptr().cast(),
                    a.len(),
                )
            };
            for i in 0..a.len() {
                assert_eq!(out[i].to_bits(), reference(a[i], y).to_bits());
            }
        }
    }

    #[test]
    fn exp_handles_underflow_and_special_values() {
        let k = unary(UnaryOp::Exp, ElementType::F32, ElementType::F32).unwrap();
        let xs: Vec<f32> = (0..700)
            .map(|i| -110.0 + i as f32 * 0.3)
            .chain([
                -1e9,
                f32::NEG_INFINITY,
                f32::INFINITY,
                f32::NAN,
                0.0,
                -0.0,
                88.7,
                89.0,
            ])
            .collect();
        let mut out = vec![0f32; xs.len()];
        // SAFETY: equal lengths.
        unsafe {
            k.call(
                &[Arg::Ptr(xs.as_ptr().cast())],
                out.as_mut_ptr().cast(),
                xs.len(),
            )
        };
        for (x, y) in xs.iter().zip(&out) {
            let want = float::exp(*x);
            if want.is_nan() {
                assert!(y.is_nan(), "exp({x})");
            } else {
                let ulps = (want.to_bits() as i64 - y.to_bits() as i64).abs();
                assert!(ulps <= 2, "exp({x}) = {y}, want {want}");
            }
        }
        // In place gives the same.
        let mut buf = xs.clone();
        // SAFETY: the destination is the operand.
        unsafe {
            k.call(
                &[Arg::Ptr(buf.as_ptr().cast())],
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        for (a, b) in buf.iter().zip(&out) {
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        }
    }

    #[test]
    fn undefined_pairs_are_errors() {
        assert!(unary(UnaryOp::Not, ElementType::F32, ElementType::F32).is_err());
        assert!(binary(BinaryOp::Atan2, ElementType::S32, ElementType::S32).is_err());
        assert!(unary(UnaryOp::Exp, ElementType::F32, ElementType::F64).is_err());
    }

    /// Runs `k` over byte views of its operands into a fresh result.
    fn call<R: bytemuck::Pod + Default>(k: &Kernel, args: &[&[u8]], n: usize) -> Vec<R> {
        let mut out = vec![R::default(); n];
        let args: Vec<Arg> = args.iter().map(|a| Arg::Ptr(a.as_ptr())).collect();
        // SAFETY: every operand holds `n` elements of its type.
        unsafe { k.call(&args, out.as_mut_ptr().cast(), n) };
        out
    }

    fn bytes<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
        bytemuck::cast_slice(v)
    }

    #[test]
    fn integer_division_shifts_and_power_edge_cases() {
        let (a, b) = ([7i32, 7, i32::MIN, -7], [2i32, 0, -1, 2]);
        let div = binary(BinaryOp::Divide, ElementType::S32, ElementType::S32).unwrap();
        assert_eq!(
            call::<i32>(&div, &[bytes(&a), bytes(&b)], 4),
            [3, -1, i32::MIN, -3]
        );
        let rem = binary(BinaryOp::Remainder, ElementType::S32, ElementType::S32).unwrap();
        assert_eq!(call::<i32>(&rem, &[bytes(&a), bytes(&b)], 4), [1, 7, 0, -1]);
        let div = binary(BinaryOp::Divide, ElementType::U8, ElementType::U8).unwrap();
        assert_eq!(call::<u8>(&div, &[&[9, 9], &[0, 4]], 2), [255, 2]);
        let shl = binary(BinaryOp::ShiftLeft, ElementType::S8, ElementType::S8).unwrap();
        assert_eq!(
            call::<i8>(&shl, &[bytes(&[1i8, 1, 1]), bytes(&[3i8, 8, -1])], 3),
            [8, 0, 0]
        );
        let sra = binary(
            BinaryOp::ShiftRightArithmetic,
            ElementType::S8,
            ElementType::S8,
        );
        let got = call::<i8>(
            &sra.unwrap(),
            &[bytes(&[-16i8, -16, 16]), bytes(&[2i8, 9, 9])],
            3,
        );
        assert_eq!(got, [-4, -1, 0]);
        let pow = binary(BinaryOp::Power, ElementType::S32, ElementType::S32).unwrap();
        let (x, y) = ([3i32, 2, 1, -1, 5, 0], [4i32, 10, -3, -3, -1, 0]);
        // XLA CPU's answers: 1^-3 = 1, (-1)^-3 = -1, 5^-1 = 0, 0^0 = 1.
        assert_eq!(
            call::<i32>(&pow, &[bytes(&x), bytes(&y)], 6),
            [81, 1024, 1, -1, 0, 1]
        );
    }

    #[test]
    fn total_order_compare() {
        let a = [-0.0f32, -f32::NAN, 1.0, f32::NEG_INFINITY];
        let b = [0.0f32, f32::NEG_INFINITY, f32::NAN, -1.0];
        let lt = compare(
            ComparisonDirection::Lt,
            Some(ComparisonType::TotalOrder),
            ElementType::F32,
        )
        .unwrap();
        assert_eq!(call::<u8>(&lt, &[bytes(&a), bytes(&b)], 4), [1, 1, 1, 1]);
        let plain = compare(ComparisonDirection::Lt, None, ElementType::F32).unwrap();
        assert_eq!(call::<u8>(&plain, &[bytes(&a), bytes(&b)], 4), [0, 0, 0, 1]);
    }

    #[test]
    fn conversions_saturate_and_round() {
        let x = [300.0f32, -300.0, f32::NAN, 2.7, -2.7];
        let f = convert(ElementType::F32, ElementType::S8).unwrap();
        assert_eq!(call::<i8>(&f, &[bytes(&x)], 5), [127, -128, 0, 2, -2]);
        let f = convert(ElementType::F32, ElementType::Pred).unwrap();
        let x = [0.0f32, -0.0, f32::NAN, 0.5];
        assert_eq!(call::<u8>(&f, &[bytes(&x)], 4), [0, 0, 1, 1]);
        let f = convert(ElementType::S32, ElementType::S8).unwrap();
        assert_eq!(call::<i8>(&f, &[bytes(&[300i32, -129])], 2), [44, 127]);
        let f = convert(ElementType::F32, ElementType::F16).unwrap();
        let got = call::<half::f16>(&f, &[bytes(&[1.0f32 + 1.0 / 4096.0, 70000.0])], 2);
        assert_eq!(got[0], half::f16::ONE);
        assert!(got[1].is_infinite());
        let f = convert(ElementType::C64, ElementType::F32).unwrap();
        assert_eq!(
            call::<f32>(&f, &[bytes(&[Complex32::new(2.5, -1.0)])], 1),
            [2.5]
        );
    }

    #[test]
    fn reduce_precision_rounds_like_bf16() {
        let f = reduce_precision(ElementType::F32, 8, 7).unwrap();
        let x = [
            1.0f32 + 1.0 / 256.0,
            1.0 + 3.0 / 256.0,
            f32::MAX,
            1e-39,
            0.1,
            -3.75,
        ];
        let got = call::<f32>(&f, &[bytes(&x)], x.len());
        // Ties to even; past the largest bf16 is infinite; same exponent
        // width, so subnormals are rounded, not flushed.
        assert_eq!(got[..2], [1.0, 1.0 + 4.0 / 256.0]);
        assert!(got[2].is_infinite());
        for (x, y) in x[3..].iter().zip(&got[3..]) {
            assert_eq!(*y, half::bf16::from_f32(*x).to_f32());
        }
        assert!(reduce_precision(ElementType::F32, 0, 7).is_err());
    }

    /// Writing over an operand gives what a separate destination gets, for
    /// kernels whose result replaces an operand of another type too (a `pred`
    /// over an `s8` operand, a byte result over a select's predicate).
    #[test]
    fn in_place_matches_out_of_place() {
        let n = 3000;
        let ints: Vec<i8> = (0..n).map(|i| (i * 37 % 251) as i8).collect();
        let others: Vec<i8> = (0..n).map(|i| (i * 11 % 253) as i8).collect();
        let floats: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 500.0).collect();
        let reversed: Vec<f32> = floats.iter().rev().copied().collect();
        let cases: Vec<(Kernel, Vec<Vec<u8>>, usize)> = vec![
            (
                compare(ComparisonDirection::Lt, None, ElementType::S8).unwrap(),
                vec![bytes(&ints).to_vec(), bytes(&others).to_vec()],
                0,
            ),
            (
                compare(ComparisonDirection::Ge, None, ElementType::S8).unwrap(),
                vec![bytes(&ints).to_vec(), bytes(&others).to_vec()],
                1,
            ),
            (
                select(ElementType::S8).unwrap(),
                vec![
                    ints.iter().map(|v| (v & 1) as u8).collect(),
                    bytes(&ints).to_vec(),
                    bytes(&others).to_vec(),
                ],
                0,
            ),
            (
                binary(BinaryOp::Subtract, ElementType::F32, ElementType::F32).unwrap(),
                vec![bytes(&floats).to_vec(), bytes(&reversed).to_vec()],
                1,
            ),
            (
                unary(UnaryOp::Expm1, ElementType::F32, ElementType::F32).unwrap(),
                vec![bytes(&floats).to_vec()],
                0,
            ),
            (
                convert(ElementType::F32, ElementType::S32).unwrap(),
                vec![bytes(&floats).to_vec()],
                0,
            ),
            (
                fused_multiply_add(Contraction::SubtractProduct, ElementType::F32).unwrap(),
                vec![bytes(&floats).to_vec(); 3],
                2,
            ),
        ];
        // 8-byte aligned copies, so that every element type is aligned.
        let aligned = |b: &[u8]| -> Vec<u64> {
            let mut v = vec![0u64; b.len().div_ceil(8)];
            bytemuck::cast_slice_mut::<u64, u8>(&mut v)[..b.len()].copy_from_slice(b);
            v
        };
        for (k, (kernel, args, over)) in cases.iter().enumerate() {
            let args: Vec<Vec<u64>> = args.iter().map(|a| aligned(a)).collect();
            let width = args[*over].len() * 8 / n;
            let mut want = vec![0u64; args[*over].len()];
            let ptrs: Vec<Arg> = args.iter().map(|a| Arg::Ptr(a.as_ptr().cast())).collect();
            // SAFETY: `n` elements each, a separate destination.
            unsafe { kernel.call(&ptrs, want.as_mut_ptr().cast(), n) };
            let mut buf = args[*over].clone();
            let ptrs: Vec<Arg> = (0..args.len())
                .map(|j| Arg::Ptr(if j == *over { &buf } else { &args[j] }.as_ptr().cast()))
                .collect();
            // SAFETY: as above; the destination is operand `over`.
            unsafe { kernel.call(&ptrs, buf.as_mut_ptr().cast(), n) };
            let (got, want): (&[u8], &[u8]) =
                (bytemuck::cast_slice(&buf), bytemuck::cast_slice(&want));
            assert_eq!(got[..n * width], want[..n * width], "case {k}");
        }
    }

    /// The semantics' value of a unary transcendental on the 16-bit `T`.
    fn semantic<T: FloatSemantics>(op: UnaryOp, bits: u16) -> u16 {
        let x = T::from_bits_u64(bits.into());
        let y = match op {
            UnaryOp::Exp => float::exp(x),
            UnaryOp::Log => float::log(x),
            UnaryOp::Tanh => float::tanh(x),
            UnaryOp::Logistic => float::logistic(x),
            UnaryOp::Expm1 => float::exponential_minus_one(x),
            UnaryOp::Log1p => float::log_plus_one(x),
            UnaryOp::Sin => float::sin(x),
            UnaryOp::Cos => float::cos(x),
            UnaryOp::Tan => float::tan(x),
            UnaryOp::Cbrt => float::cbrt(x),
            UnaryOp::Erf => float::erf(x),
            _ => unreachable!("{op:?}"),
        };
        y.to_bits_u64() as u16
    }

    /// The 16-bit transcendentals `half_transcendental` computes: all of
    /// f16's but `log1p` (whose `f32` kernel is the C library's algorithm,
    /// but for the sign of a NaN); bf16's that the C library defines.
    fn half_ops(ty: ElementType) -> Vec<UnaryOp> {
        use UnaryOp::*;
        let mut ops = vec![Expm1, Sin, Cos, Tan, Cbrt, Erf];
        if ty == ElementType::F16 {
            ops.extend([Exp, Log, Tanh, Logistic]);
        }
        ops
    }

    /// Every one of the 65536 inputs, alone, in place and as a broadcast
    /// scalar, gives the semantics' bits (NaN payloads included): the
    /// vectorised approximations with their exact fix-ups (`settle`) are the
    /// C library's functions rounded, at this machine's `vmath` level.
    #[test]
    fn half_transcendentals_are_the_semantics_on_every_input() {
        let inputs: Vec<u16> = (0..=u16::MAX).collect();
        for ty in [ElementType::F16, ElementType::BF16] {
            for op in half_ops(ty) {
                let want: Vec<u16> = inputs
                    .iter()
                    .map(|&b| match ty {
                        ElementType::F16 => semantic::<half::f16>(op, b),
                        _ => semantic::<half::bf16>(op, b),
                    })
                    .collect();
                let k = unary(op, ty, ty).unwrap();
                let got: Vec<u16> = call(&k, &[bytes(&inputs)], inputs.len());
                let wrong: Vec<String> = (0..inputs.len())
                    .filter(|&i| got[i] != want[i])
                    .map(|i| format!("{:04x} -> {:04x}, want {:04x}", inputs[i], got[i], want[i]))
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{ty} {}: {} of 65536 differ, e.g. {:?}",
                    op.name(),
                    wrong.len(),
                    &wrong[..wrong.len().min(8)]
                );
                let mut buf = inputs.clone();
                // SAFETY: the destination is the operand, 65536 elements.
                unsafe {
                    k.call(
                        &[Arg::Ptr(buf.as_ptr().cast())],
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                    )
                };
                assert!(buf == want, "{ty} {} in place", op.name());
                for i in (0..inputs.len()).step_by(4099) {
                    let mut one = [0u16; 3];
                    // SAFETY: one operand element, three results.
                    unsafe {
                        k.call(
                            &[Arg::Scalar(inputs[i..].as_ptr().cast())],
                            one.as_mut_ptr().cast(),
                            3,
                        )
                    };
                    assert_eq!(
                        one,
                        [want[i]; 3],
                        "{ty} {} of scalar {:04x}",
                        op.name(),
                        inputs[i]
                    );
                }
            }
        }
    }

    /// XLA CPU's own results (`tests/data/vmath/{f16,bf16}.txt`, written by
    /// `scripts/gen_half_cases.py` from JAX): a sample of every op above,
    /// with the inputs nearest a rounding boundary. A NaN matches any NaN
    /// (XLA's f16 `log1p` of a number below -1 is another NaN than the C
    /// library's).
    #[test]
    fn half_transcendentals_match_xla_cpu() {
        for (ty, text) in [
            (
                ElementType::F16,
                include_str!("../tests/data/vmath/f16.txt"),
            ),
            (
                ElementType::BF16,
                include_str!("../tests/data/vmath/bf16.txt"),
            ),
        ] {
            let is_nan = |b: u16| match ty {
                ElementType::F16 => half::f16::from_bits(b).is_nan(),
                _ => half::bf16::from_bits(b).is_nan(),
            };
            let mut cases = 0;
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                let words: Vec<&str> = line.split_whitespace().collect();
                let op = UnaryOp::ALL
                    .iter()
                    .copied()
                    .find(|o| o.name() == words[0])
                    .unwrap_or_else(|| panic!("op {}", words[0]));
                let [x, want] = [words[1], words[2]].map(|w| u16::from_str_radix(w, 16).unwrap());
                let got: Vec<u16> = call(&unary(op, ty, ty).unwrap(), &[bytes(&[x])], 1);
                assert!(
                    got[0] == want || is_nan(got[0]) && is_nan(want),
                    "{ty} {}({x:04x}) = {:04x}, XLA CPU {want:04x}",
                    op.name(),
                    got[0]
                );
                cases += 1;
            }
            assert!(cases > 500, "{ty}: {cases} cases");
        }
    }
}
