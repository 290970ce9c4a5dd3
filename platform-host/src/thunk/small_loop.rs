//! A `while` loop on small values, run as one flat list of kernel calls.
//!
//! A loop whose body is a few ops on scalars and short vectors (a
//! `fori_loop` counter and its carry, a convergence test) spends nearly all
//! of its time getting to its kernels: each iteration runs two nested
//! sequences, resolves their allocation tables, and goes through the
//! machinery a fused block program or a parallel elementwise thunk needs for
//! arrays of millions of elements. Here the condition and the body are
//! compiled (`compiler::small_loop`) into [`Step`]s over three kinds of
//! location: the loop state (the `while`'s result buffers), an arena for
//! intermediates (the instruction's scratch), and constants. Every address is resolved once per
//! execution of the loop, so an iteration is one indirect call per step and
//! nothing else.
//!
//! A step is one of three kinds of code. Scalar integer/float/pred
//! arithmetic, comparisons and selects ([`ScalarOp`]) and `f32`/`f64`
//! arithmetic over short vectors ([`VectorOp`]) are monomorphised code here,
//! whose every result is fixed by IEEE or wrapping arithmetic; everything
//! else calls the Host's op table (`elementwise_ops`) and its row folds, the
//! very ones the block programs and standalone thunks call. So a value has
//! the same bits whichever path computed it.
//!
//! # Contract
//! * Every [`Loc::State`] is one leaf of the loop state, read and written
//!   whole; [`Loc::Arena`] offsets are aligned for their element type and lie
//!   inside [`SmallLoop::arena_bytes`]; [`Loc::Const`] indexes
//!   [`SmallLoop::constants`] and is never written.
//! * A step writes only its destination, which is disjoint from its operands
//!   or exactly one of them (the kernels' own rule).
//! * The condition's steps leave the `pred` at [`SmallLoop::pred`]; the
//!   body's steps leave the next state in the state leaves (the compiler
//!   orders them so that no step reads a state leaf a previous step of the
//!   same iteration has already overwritten).

use super::nested::count_iteration;
use super::RunState;
use crate::elementwise_ops::{self as ops, Arg};
use crate::thunk::ConstantBytes;
use platform_api::hlo::ComparisonDirection;
use platform_api::semantics::contraction::Contraction;
use platform_api::{Error, Result};
use smallvec::SmallVec;
use std::sync::Arc;

/// Where a value lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Leaf `k` of the loop state.
    State(u32),
    /// A byte offset in the arena.
    Arena(u32),
    /// Constant `k`.
    Const(u32),
}

/// One operand of a kernel step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// As many elements as the step computes.
    Array(Loc),
    /// One element, used for every position.
    Scalar(Loc),
}

impl Operand {
    pub fn loc(self) -> Loc {
        match self {
            Operand::Array(l) | Operand::Scalar(l) => l,
        }
    }
    fn with_loc(self, loc: Loc) -> Operand {
        match self {
            Operand::Array(_) => Operand::Array(loc),
            Operand::Scalar(_) => Operand::Scalar(loc),
        }
    }
}

/// One step of a condition or a body.
pub enum Step {
    /// An elementwise op over `n` elements.
    Kernel {
        kernel: ops::Kernel,
        args: SmallVec<[Operand; 3]>,
        dst: Loc,
        n: usize,
    },
    /// A scalar op the interpreter computes itself (see [`ScalarOp`]).
    Scalar {
        op: ScalarOp,
        code: ScalarFn,
        args: [Loc; 3],
        dst: Loc,
    },
    /// An `f32`/`f64` op over `n` elements the interpreter computes itself
    /// (see [`VectorOp`]).
    Vector {
        op: VectorOp,
        code: VectorFn,
        /// Every operand has `n` elements (splats are expanded first).
        args: [Loc; 3],
        dst: Loc,
        n: usize,
    },
    /// `init ⊕ src[0] ⊕ ... ⊕ src[n-1]` into one element.
    Fold {
        fold: ops::Fold,
        src: Loc,
        n: usize,
        init: Loc,
        dst: Loc,
    },
    /// `n` copies of the element at `src`.
    Fill {
        src: Loc,
        dst: Loc,
        n: usize,
        width: usize,
    },
    Copy {
        src: Loc,
        dst: Loc,
        bytes: usize,
    },
}

impl Step {
    /// The locations the step reads.
    pub fn reads(&self) -> SmallVec<[Loc; 3]> {
        match self {
            Step::Kernel { args, .. } => args.iter().map(|a| a.loc()).collect(),
            Step::Scalar { op, args, .. } => args[..op.arity()].iter().copied().collect(),
            Step::Vector { op, args, .. } => args[..op.arity()].iter().copied().collect(),
            Step::Fold { src, init, .. } => [*src, *init].into_iter().collect(),
            Step::Fill { src, .. } | Step::Copy { src, .. } => [*src].into_iter().collect(),
        }
    }

    /// The location the step writes.
    pub fn dst(&self) -> Loc {
        match self {
            Step::Kernel { dst, .. }
            | Step::Scalar { dst, .. }
            | Step::Vector { dst, .. }
            | Step::Fold { dst, .. }
            | Step::Fill { dst, .. }
            | Step::Copy { dst, .. } => *dst,
        }
    }

    pub fn set_dst(&mut self, to: Loc) {
        match self {
            Step::Kernel { dst, .. }
            | Step::Scalar { dst, .. }
            | Step::Vector { dst, .. }
            | Step::Fold { dst, .. }
            | Step::Fill { dst, .. }
            | Step::Copy { dst, .. } => *dst = to,
        }
    }

    /// Replaces every location the step names, written or read, by
    /// `f`'s image of it.
    pub fn map_locs(&mut self, f: &dyn Fn(Loc) -> Loc) {
        match self {
            Step::Kernel { args, dst, .. } => {
                for a in args.iter_mut() {
                    *a = a.with_loc(f(a.loc()));
                }
                *dst = f(*dst);
            }
            Step::Scalar { args, dst, .. } | Step::Vector { args, dst, .. } => {
                args.iter_mut().for_each(|l| *l = f(*l));
                *dst = f(*dst);
            }
            Step::Fold { src, init, dst, .. } => {
                *src = f(*src);
                *init = f(*init);
                *dst = f(*dst);
            }
            Step::Fill { src, dst, .. } | Step::Copy { src, dst, .. } => {
                *src = f(*src);
                *dst = f(*dst);
            }
        }
    }

    /// Replaces every read of `from` by a read of `to`.
    pub fn rename_reads(&mut self, from: Loc, to: Loc) {
        let swap = |l: &mut Loc| {
            if *l == from {
                *l = to
            }
        };
        match self {
            Step::Kernel { args, .. } => {
                for a in args.iter_mut() {
                    if a.loc() == from {
                        *a = a.with_loc(to);
                    }
                }
            }
            Step::Scalar { args, .. } => args.iter_mut().for_each(swap),
            Step::Vector { args, .. } => args.iter_mut().for_each(swap),
            Step::Fold { src, init, .. } => {
                swap(src);
                swap(init);
            }
            Step::Fill { src, .. } | Step::Copy { src, .. } => swap(src),
        }
    }
}

/// The scalar ops whose meaning is the processor's own instruction for
/// every operand (wrapping integer arithmetic, IEEE float arithmetic and
/// ordered comparisons, bitwise logic, select), so computing them here gives
/// the op table's bits without the cost of a kernel call for one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    /// Floats only (integer division has XLA's rules for zero and overflow).
    Div,
    /// Integers and `pred` only.
    And,
    Or,
    Xor,
    /// The operands' type is `ty`; the result is a `pred`. Floats compare
    /// as IEEE does (`FLOAT`, not `TOTALORDER`).
    Compare(ComparisonDirection),
    /// `args[0]` is the `pred`.
    Select,
}

impl ScalarOp {
    pub fn arity(self) -> usize {
        if self == ScalarOp::Select {
            3
        } else {
            2
        }
    }
}

/// The element types [`ScalarOp`] computes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    Pred,
    S32,
    S64,
    U32,
    U64,
    F32,
    F64,
}

/// A scalar op's code: reads its operands at `args`, writes its result at
/// `dst`.
pub type ScalarFn = unsafe fn(&Resolved);

/// # Safety
/// One valid `T` at `p`.
#[inline(always)]
unsafe fn get<T: Copy>(p: *const u8) -> T {
    // SAFETY: the caller's contract.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// # Safety
/// Room for one `T` at `p`.
#[inline(always)]
unsafe fn put<T: Copy>(p: *mut u8, v: T) {
    // SAFETY: the caller's contract.
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// The code computing `$e` from the operands `$x` (and `$y`, `$z`) of type
/// `$t`.
macro_rules! code {
    ($t:ty, |$x:ident, $y:ident| $e:expr) => {
        Some(
            (|r: &Resolved| unsafe {
                let ($x, $y) = (get::<$t>(r.args[0]), get::<$t>(r.args[1]));
                put(r.dst, $e)
            }) as ScalarFn,
        )
    };
}

/// The code of `op` on `T` (`None` where the compiler never asks for it).
macro_rules! scalar_code {
    ($op:expr, $t:ty, int) => {
        match $op {
            ScalarOp::Add => code!($t, |x, y| x.wrapping_add(y)),
            ScalarOp::Sub => code!($t, |x, y| x.wrapping_sub(y)),
            ScalarOp::Mul => code!($t, |x, y| x.wrapping_mul(y)),
            ScalarOp::And => code!($t, |x, y| x & y),
            ScalarOp::Or => code!($t, |x, y| x | y),
            ScalarOp::Xor => code!($t, |x, y| x ^ y),
            other => scalar_code!(other, $t, any),
        }
    };
    ($op:expr, $t:ty, float) => {
        match $op {
            ScalarOp::Add => code!($t, |x, y| x + y),
            ScalarOp::Sub => code!($t, |x, y| x - y),
            ScalarOp::Mul => code!($t, |x, y| x * y),
            ScalarOp::Div => code!($t, |x, y| x / y),
            other => scalar_code!(other, $t, any),
        }
    };
    ($op:expr, $t:ty, any) => {
        match $op {
            ScalarOp::Compare(ComparisonDirection::Eq) => code!($t, |x, y| (x == y) as u8),
            ScalarOp::Compare(ComparisonDirection::Ne) => code!($t, |x, y| (x != y) as u8),
            ScalarOp::Compare(ComparisonDirection::Lt) => code!($t, |x, y| (x < y) as u8),
            ScalarOp::Compare(ComparisonDirection::Le) => code!($t, |x, y| (x <= y) as u8),
            ScalarOp::Compare(ComparisonDirection::Gt) => code!($t, |x, y| (x > y) as u8),
            ScalarOp::Compare(ComparisonDirection::Ge) => code!($t, |x, y| (x >= y) as u8),
            ScalarOp::Select => Some(
                (|r: &Resolved| unsafe {
                    let pick = if get::<u8>(r.args[0]) != 0 {
                        r.args[1]
                    } else {
                        r.args[2]
                    };
                    put(r.dst, get::<$t>(pick))
                }) as ScalarFn,
            ),
            _ => None,
        }
    };
}

/// The code of `op` on `ty`, if it has one (the compiler emits a scalar
/// step only where it does).
pub fn scalar_fn(op: ScalarOp, ty: ScalarType) -> Option<ScalarFn> {
    match ty {
        ScalarType::Pred => scalar_code!(op, u8, int).filter(|_| {
            matches!(
                op,
                ScalarOp::And | ScalarOp::Or | ScalarOp::Xor | ScalarOp::Select
            )
        }),
        ScalarType::S32 => scalar_code!(op, i32, int),
        ScalarType::S64 => scalar_code!(op, i64, int),
        ScalarType::U32 => scalar_code!(op, u32, int),
        ScalarType::U64 => scalar_code!(op, u64, int),
        ScalarType::F32 => scalar_code!(op, f32, float),
        ScalarType::F64 => scalar_code!(op, f64, float),
    }
}

/// The `f32`/`f64` ops whose every result is fixed by IEEE arithmetic (one
/// rounding of the exact value), so a plain loop gives the op table's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorOp {
    Add,
    Sub,
    Mul,
    Div,
    /// XLA CPU's contracted multiply-add, one rounding; only compiled where
    /// the processor has AVX2 and FMA
    /// ([`crate::kernels::simd::has_avx2_fma`]).
    Fma(Contraction),
}

impl VectorOp {
    pub fn arity(self) -> usize {
        if matches!(self, VectorOp::Fma(_)) {
            3
        } else {
            2
        }
    }
}

/// A vector op's code: operands at `args` (each `n` elements; the third
/// unused by binary ops), result at `dst`.
pub type VectorFn = unsafe fn(&Resolved);

/// `dst[i] = f(a[i], b[i], c[i])`, eight elements at a time through a local
/// block, so that a result written over one of its operands (the loop
/// state updated in place) still vectorises: every element of a block is
/// read before any is written.
///
/// # Safety
/// `a`, `b`, `c` valid for `n` elements, `dst` for `n`; `dst` disjoint from
/// each operand or exactly it.
#[inline(always)]
unsafe fn vector_loop<T: Copy + Default>(
    [a, b, c]: [*const u8; 3],
    dst: *mut u8,
    n: usize,
    f: impl Fn(T, T, T) -> T,
) {
    const L: usize = 8;
    let (a, b, c, dst) = (a.cast::<T>(), b.cast::<T>(), c.cast::<T>(), dst.cast::<T>());
    let mut i = 0;
    // SAFETY: the caller's contract; indices stay below `n`.
    unsafe {
        while i + L <= n {
            let mut r = [T::default(); L];
            for (j, r) in r.iter_mut().enumerate() {
                *r = f(*a.add(i + j), *b.add(i + j), *c.add(i + j));
            }
            std::ptr::copy_nonoverlapping(r.as_ptr(), dst.add(i), L);
            i += L;
        }
        while i < n {
            *dst.add(i) = f(*a.add(i), *b.add(i), *c.add(i));
            i += 1;
        }
    }
}

macro_rules! vector_code {
    ($t:ty, $op:expr) => {
        match $op {
            VectorOp::Add => {
                (|r: &Resolved| unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, _| x + y) })
                    as VectorFn
            }
            VectorOp::Sub => {
                (|r: &Resolved| unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, _| x - y) })
                    as VectorFn
            }
            VectorOp::Mul => {
                (|r: &Resolved| unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, _| x * y) })
                    as VectorFn
            }
            VectorOp::Div => {
                (|r: &Resolved| unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, _| x / y) })
                    as VectorFn
            }
            VectorOp::Fma(how) => fma_code!($t, how),
        }
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! fma_code {
    ($t:ty, $how:expr) => {{
        /// # Safety
        /// As [`vector_loop`], on a processor with AVX2 and FMA.
        #[target_feature(enable = "avx2,fma")]
        unsafe fn add(r: &Resolved) {
            // SAFETY: forwarded.
            unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, z| x.mul_add(y, z)) }
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn subtract_from_product(r: &Resolved) {
            // SAFETY: as above.
            unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, z| x.mul_add(y, -z)) }
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn subtract_product(r: &Resolved) {
            // SAFETY: as above.
            unsafe { vector_loop::<$t>(r.args, r.dst, r.n, |x, y, z| (-x).mul_add(y, z)) }
        }
        match $how {
            Contraction::Add => add as VectorFn,
            Contraction::SubtractFromProduct => subtract_from_product as VectorFn,
            Contraction::SubtractProduct => subtract_product as VectorFn,
        }
    }};
}

#[cfg(not(target_arch = "x86_64"))]
macro_rules! fma_code {
    ($t:ty, $how:expr) => {{
        // Never compiled: `has_avx2_fma` is false here.
        let _ = $how;
        (|_: &Resolved| {}) as VectorFn
    }};
}

/// The code of `op` on `f32` (or `f64`).
pub fn vector_fn(op: VectorOp, f64: bool) -> VectorFn {
    if f64 {
        vector_code!(f64, op)
    } else {
        vector_code!(f32, op)
    }
}

/// A compiled small loop (see the module doc).
pub struct SmallLoop {
    pub condition: Vec<Step>,
    /// Where the condition leaves its `pred`.
    pub pred: Loc,
    pub body: Vec<Step>,
    pub constants: Vec<Arc<ConstantBytes>>,
    pub arena_bytes: usize,
    /// Bytes of each state leaf, as the compiler saw them.
    pub state_bytes: Vec<usize>,
}

/// A step with its addresses resolved for one execution: one call of
/// `code` on the step (no per-step dispatch beyond that indirect call).
pub struct Resolved {
    code: unsafe fn(&Resolved),
    /// Operand addresses (scalar, vector, fold: `[xs, init]`, fill, copy).
    args: [*const u8; 3],
    dst: *mut u8,
    /// Elements (bytes for a copy).
    n: usize,
    /// Element bytes of a fill.
    width: usize,
    /// A kernel step's operands and arity.
    kernel_args: [Arg; 3],
    arity: usize,
    /// The kernel or fold a generic step calls (owned by the [`SmallLoop`],
    /// which outlives the execution).
    object: *const (),
}

/// # Safety
/// `r` resolved from a [`Step::Kernel`].
unsafe fn run_kernel(r: &Resolved) {
    // SAFETY: `object` is the step's kernel; the addresses its operands'.
    unsafe {
        let kernel = &*r.object.cast::<ops::Kernel>();
        kernel.call(&r.kernel_args[..r.arity], r.dst, r.n)
    }
}

/// # Safety
/// `r` resolved from a [`Step::Fold`].
unsafe fn run_fold(r: &Resolved) {
    // SAFETY: `object` is the step's fold.
    unsafe {
        let fold = &*r.object.cast::<ops::Fold>();
        fold.call(r.args[0], r.n, r.args[1], r.dst)
    }
}

/// # Safety
/// `r` resolved from a [`Step::Fill`].
unsafe fn run_fill(r: &Resolved) {
    // SAFETY: one element at `args[0]`, room for `n` at `dst`.
    unsafe { ops::fill(r.width, r.args[0], r.dst, r.n) }
}

/// # Safety
/// `r` resolved from a [`Step::Copy`].
unsafe fn run_copy(r: &Resolved) {
    // SAFETY: `n` bytes at both.
    unsafe { std::ptr::copy(r.args[0], r.dst, r.n) }
}

impl SmallLoop {
    /// Runs the loop on the state at `state` (one address per leaf, already
    /// holding the initial value) until the condition is false.
    ///
    /// # Safety
    /// Each `state[k]` is valid for [`SmallLoop::state_bytes`]`[k]` bytes,
    /// aligned for its element type, and used by nothing else meanwhile;
    /// `arena` is 16-byte aligned, valid for [`SmallLoop::arena_bytes`]
    /// bytes, and used by nothing else meanwhile.
    pub unsafe fn run(
        &self,
        run: &RunState,
        state: &[*mut u8],
        arena: *mut u8,
        name: &str,
    ) -> Result<()> {
        if state.len() != self.state_bytes.len() {
            return Err(Error::internal(format!(
                "while loop %{name}: {} state buffers for a loop compiled with {}",
                state.len(),
                self.state_bytes.len()
            )));
        }
        let addr = |l: Loc| -> *mut u8 {
            match l {
                Loc::State(k) => state[k as usize],
                Loc::Arena(off) => arena.wrapping_add(off as usize),
                // Never written through (the module contract).
                Loc::Const(k) => self.constants[k as usize].as_bytes().as_ptr().cast_mut(),
            }
        };
        let condition = resolve(&self.condition, &addr);
        let body = resolve(&self.body, &addr);
        let pred = addr(self.pred).cast_const();
        let mut steps: u64 = 0;
        loop {
            for s in &condition {
                // SAFETY: resolved from the live state, arena and constants.
                unsafe { (s.code)(s) };
            }
            // SAFETY: the condition's result is one `pred` byte.
            if unsafe { pred.read() } == 0 {
                return Ok(());
            }
            count_iteration(run, steps, name)?;
            for s in &body {
                // SAFETY: as above.
                unsafe { (s.code)(s) };
            }
            steps += 1;
        }
    }
}

/// The steps with their addresses for this execution.
fn resolve(steps: &[Step], addr: &dyn Fn(Loc) -> *mut u8) -> Vec<Resolved> {
    let blank = |code: unsafe fn(&Resolved), dst: Loc, n: usize| Resolved {
        code,
        args: [std::ptr::null(); 3],
        dst: addr(dst),
        n,
        width: 0,
        kernel_args: [Arg::Scalar(std::ptr::null()); 3],
        arity: 0,
        object: std::ptr::null(),
    };
    let ptrs = |locs: &[Loc]| {
        let mut p = [std::ptr::null(); 3];
        for (p, l) in p.iter_mut().zip(locs) {
            *p = addr(*l).cast_const();
        }
        p
    };
    steps
        .iter()
        .map(|s| match s {
            Step::Kernel {
                kernel,
                args,
                dst,
                n,
            } => {
                let mut r = blank(run_kernel, *dst, *n);
                for (k, a) in r.kernel_args.iter_mut().zip(args) {
                    *k = match a {
                        Operand::Array(l) => Arg::Ptr(addr(*l).cast_const()),
                        Operand::Scalar(l) => Arg::Scalar(addr(*l).cast_const()),
                    };
                }
                r.arity = args.len();
                r.object = (kernel as *const ops::Kernel).cast();
                r
            }
            Step::Scalar {
                code, args, dst, ..
            } => Resolved {
                args: ptrs(args),
                ..blank(*code, *dst, 1)
            },
            Step::Vector {
                code, args, dst, n, ..
            } => Resolved {
                args: ptrs(args),
                ..blank(*code, *dst, *n)
            },
            Step::Fold {
                fold,
                src,
                n,
                init,
                dst,
            } => Resolved {
                args: ptrs(&[*src, *init]),
                object: (fold as *const ops::Fold).cast(),
                ..blank(run_fold, *dst, *n)
            },
            Step::Fill { src, dst, n, width } => Resolved {
                args: ptrs(&[*src]),
                width: *width,
                ..blank(run_fill, *dst, *n)
            },
            Step::Copy { src, dst, bytes } => Resolved {
                args: ptrs(&[*src]),
                ..blank(run_copy, *dst, *bytes)
            },
        })
        .collect()
}
