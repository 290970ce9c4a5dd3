//! The Host's own f32/f64 matrix multiplication (`C (+)= A·B`).
//!
//! # Design
//! The classic blocked structure (Goto; BLIS):
//!
//! ```text
//! for each nc-wide column block of C          (rhs block: L3)
//!   for each kc-deep slice of k               pack rhs  kc × nc  into NR-wide micro-panels
//!     for each mc-tall row block of C         pack lhs  mc × kc  into MR-row strips (L2)
//!       for each rhs micro-panel              (kc × NR: stays in L1)
//!         for each lhs strip                  micro-kernel: MR × NR register tile
//! ```
//!
//! * [`kernel`]: the micro-kernel, generic over [`arch::Simd`] (AVX-512F,
//!   AVX2+FMA, portable), with instances for every bottom-edge row count and
//!   right-edge vector count; partial tiles store through a stack buffer.
//! * [`pack`]: packing, any strides, subnormals flushed on the way; the lhs
//!   comes from an [`LhsSource`] (a [`Strided`] matrix, or the convolution's
//!   implicit im2col windows).
//! * Block sizes come from the caches ([`blocking`]); a product with few
//!   rows (one lhs block) packs rhs blocks small enough to stay in L2.
//! * With at most 64 rows per thread (a recurrent step's `[16, 256] x
//!   [256, 768]`), packing the rhs costs about as much as the product: full
//!   micro-panels of a row-major rhs whose `kc`-row slice spans at most
//!   2 MiB are read in place instead ([`kernel::Rhs::Direct`]), unless the
//!   slice holds a subnormal (only packing flushes them).
//! * With a single rhs micro-panel (a tall-skinny `[4096, 512] x [512, 16]`)
//!   every lhs element feeds one tile: the slices go as deep as L2 holds the
//!   panel ([`Blocking::kc_for_panel`]), and under AVX-512 (row panels) a
//!   lhs with contiguous rows is read in place, block by block, unless a
//!   block holds a subnormal.
//! * The instruction set is chosen per call from [`crate::vmath::level`]
//!   (detected once, lowered by `VMATH_LEVEL`), or forced by the caller; the
//!   whole single-thread driver is compiled once per level.
//! * Parallelism: large products are cut into one rectangle of `C` per
//!   compute-pool thread, along whichever dimensions duplicate the least
//!   packing; each thread packs its own blocks into buffers kept per thread,
//!   so a call allocates nothing once warm. Small products run on the
//!   calling thread.
//!
//! Accumulation order differs from a naive loop (k is summed in slices of
//! `kc`, each with fused multiply-adds), as in every tuned BLAS; the error
//! bound is the usual `O(k·ε·Σ|a||b|)`.

pub mod amx;
pub mod arch;
mod blocking;
mod gemv;
pub mod gemv16;
mod kernel;
pub mod narrow;
mod pack;
#[cfg(test)]
mod tests;
pub mod words;

pub use blocking::Blocking;
pub use gemv::try_gemv_complex;
pub use pack::{LhsSource, Strided};

use crate::kernels::denormal::Flushable;
use crate::runtime::pool::{compute_pool, run_tasks};
use crate::vmath::Level;
use arch::{Portable, Simd};
use kernel::{PackedLhs, Rhs};
use std::cell::Cell;
use std::ops::Range;

/// Element types the GEMM handles (f32, f64).
pub trait Element:
    Flushable
    + bytemuck::Pod
    + Default
    + PartialEq
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Sub<Output = Self>
    + private::Kernels
{
    const ZERO: Self;
}

impl Element for f32 {
    const ZERO: f32 = 0.0;
}
impl Element for f64 {
    const ZERO: f64 = 0.0;
}

mod private {
    /// The SIMD implementations of an element type, per instruction set.
    pub trait Kernels: Sized {
        #[cfg(target_arch = "x86_64")]
        type Avx512: super::Simd<T = Self>;
        #[cfg(target_arch = "x86_64")]
        type Avx2: super::Simd<T = Self>;
    }
    impl Kernels for f32 {
        #[cfg(target_arch = "x86_64")]
        type Avx512 = super::arch::Avx512F32;
        #[cfg(target_arch = "x86_64")]
        type Avx2 = super::arch::Avx2F32;
    }
    impl Kernels for f64 {
        #[cfg(target_arch = "x86_64")]
        type Avx512 = super::arch::Avx512F64;
        #[cfg(target_arch = "x86_64")]
        type Avx2 = super::arch::Avx2F64;
    }
}

/// How a call runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Add the product to `C` instead of overwriting it.
    pub accumulate: bool,
    /// Whether the product may use the compute pool's threads (large
    /// products only; small ones always run on the calling thread).
    pub parallel: bool,
    /// Instruction set to use; `None` for [`crate::vmath::level`]. A level
    /// the processor lacks is lowered to the best one it has.
    pub level: Option<Level>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            accumulate: false,
            parallel: true,
            level: None,
        }
    }
}

/// The output matrix: element `(i, j)` at `ptr + i·rs + j·cs`.
#[derive(Clone, Copy, Debug)]
pub struct StridedMut<T> {
    pub ptr: *mut T,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: the GEMM hands disjoint rectangles of C to its threads.
unsafe impl<T: Send> Send for StridedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for StridedMut<T> {}

/// `C (+)= A·B` for an `m × k` lhs and a `k × n` rhs, any strides.
///
/// # Safety
/// Each matrix must be valid for its extent and strides; `C` must not
/// overlap `A` or `B`, and distinct `(i, j)` of `C` must be distinct
/// addresses. Nothing else may write `A` or `B`, or touch `C`, meanwhile.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
    options: Options,
) {
    let level = effective_level(options.level);
    // SAFETY: forwarded.
    if !generic_only()
        && unsafe {
            gemv::try_gemv(
                m,
                n,
                k,
                a,
                b,
                c,
                options.accumulate,
                options.parallel,
                level,
            )
        }
    {
        return;
    }
    let lanes = lanes::<T>(level);
    // A few columns, many rows in place, and rows at least a vector long:
    // row dot products (see [`narrow`]).
    if narrow::applies(n) && m > n && k >= lanes && a.cs == 1 && a.rs > 0 && !generic_only() {
        let run = [narrow::LhsRun {
            a: a.ptr,
            rs: a.rs,
            len: k,
        }];
        // SAFETY: forwarded.
        unsafe {
            narrow::narrow(
                m,
                n,
                &run,
                b,
                c,
                options.accumulate,
                false,
                options.parallel,
                Some(level),
            )
        };
        return;
    }
    // A few columns and many rows: compute Cᵀ = Bᵀ·Aᵀ so the vectors run
    // along m. Also when C is column-major, so its stores stay contiguous.
    // (Not for a vector's width of columns or more: the transposed rhs is
    // then the large operand read column by column, which costs more to
    // pack than the padded multiply-adds.)
    let narrow = n < lanes && m > n;
    let column_major_c = c.cs != 1 && c.rs == 1;
    if narrow || column_major_c {
        let at = Strided {
            ptr: a.ptr,
            rs: a.cs,
            cs: a.rs,
        };
        let bt = Strided {
            ptr: b.ptr,
            rs: b.cs,
            cs: b.rs,
        };
        let ct = StridedMut {
            ptr: c.ptr,
            rs: c.cs,
            cs: c.rs,
        };
        // SAFETY: the same matrices, transposed views.
        unsafe { gemm_source(n, m, k, &bt, at, ct, options, level) }
    } else {
        // SAFETY: forwarded.
        unsafe { gemm_source(m, n, k, &a, b, c, options, level) }
    }
}

/// `C (+)= A·B` with the lhs read from `a` (see [`LhsSource`]).
///
/// # Safety
/// As [`gemm`]; `a` must stand for an `m × k` matrix.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_with_source<T: Element, A: LhsSource<T>>(
    m: usize,
    n: usize,
    k: usize,
    a: &A,
    b: Strided<T>,
    c: StridedMut<T>,
    options: Options,
) {
    let level = effective_level(options.level);
    // SAFETY: forwarded.
    unsafe { gemm_source(m, n, k, a, b, c, options, level) }
}

fn effective_level(wanted: Option<Level>) -> Level {
    wanted
        .unwrap_or_else(crate::vmath::level)
        .min(crate::vmath::detected_level())
}

fn lanes<T: Element>(level: Level) -> usize {
    let bytes = std::mem::size_of::<T>();
    match level {
        Level::Avx512 => 64 / bytes,
        Level::Avx2 => 32 / bytes,
        Level::Baseline => 4,
    }
}

/// Tile shape (MR, NR) at a level.
fn tile_shape<T: Element>(level: Level) -> (usize, usize) {
    match level {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => (<T::Avx512 as Simd>::MR, <T::Avx512 as Simd>::NR),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => (<T::Avx2 as Simd>::MR, <T::Avx2 as Simd>::NR),
        _ => (<Portable<T> as Simd>::MR, <Portable<T> as Simd>::NR),
    }
}

/// One product, shared by the threads that compute its parts.
struct Job<'a, T, A> {
    k: usize,
    a: &'a A,
    b: Strided<T>,
    c: StridedMut<T>,
    accumulate: bool,
    blocking: Blocking,
}

/// Most rows of `C` (per thread) for which the rhs is read in place rather
/// than packed (see `serial_body`).
const DIRECT_RHS_MAX_ROWS: usize = 64;
/// Most bytes one `kc`-row slice of an rhs read in place may span: its
/// pages stay within the TLB's reach.
const DIRECT_RHS_MAX_SPAN: usize = 2 << 20;

/// Whether `HOST_GEMM_GENERIC` (read once) asks for the generic product
/// paths only: dots of every element type through the f32/f64 GEMM or the
/// plain loops, no matrix-vector kernel. For side-by-side timings and for
/// telling a kernel's numerics apart.
pub fn generic_only() -> bool {
    static G: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *G.get_or_init(|| std::env::var_os("HOST_GEMM_GENERIC").is_some_and(|v| v != "0"))
}

/// Products below this many multiply-adds run on one thread: handing work
/// to the pool costs a few microseconds.
pub(crate) const PARALLEL_MIN_MACS: usize = 1 << 20;

#[allow(clippy::too_many_arguments)]
unsafe fn gemm_source<T: Element, A: LhsSource<T>>(
    m: usize,
    n: usize,
    k: usize,
    a: &A,
    b: Strided<T>,
    c: StridedMut<T>,
    options: Options,
    level: Level,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !options.accumulate {
            for i in 0..m {
                for j in 0..n {
                    // SAFETY: (i, j) lies in C.
                    unsafe {
                        c.ptr
                            .offset(i as isize * c.rs + j as isize * c.cs)
                            .write(T::ZERO)
                    };
                }
            }
        }
        return;
    }
    let (mr, nr) = tile_shape::<T>(level);
    let job = Job {
        k,
        a,
        b,
        c,
        accumulate: options.accumulate,
        blocking: Blocking::for_tile::<T>(mr, nr),
    };
    let threads = compute_pool().current_num_threads();
    let (tm, tn) = if options.parallel && threads > 1 && m * n * k >= PARALLEL_MIN_MACS {
        split(m, n, k, threads, mr, nr)
    } else {
        (1, 1)
    };
    let parts = tm * tn;
    if parts == 1 {
        // SAFETY: the whole of C, on this thread.
        unsafe { serial(&job, 0..m, 0..n, level) };
        return;
    }
    let rows_per = m.div_ceil(mr).div_ceil(tm) * mr;
    let cols_per = n.div_ceil(nr).div_ceil(tn) * nr;
    let part = |t: usize| {
        let (pi, pj) = (t / tn, t % tn);
        let rows = (pi * rows_per).min(m)..((pi + 1) * rows_per).min(m);
        let cols = (pj * cols_per).min(n)..((pj + 1) * cols_per).min(n);
        if !rows.is_empty() && !cols.is_empty() {
            // SAFETY: the parts are disjoint rectangles of C.
            unsafe { serial(&job, rows, cols, level) };
        }
    };
    run_tasks(parts, part);
}

/// How many row and column parts to cut `C` into for `threads` threads:
/// among the factorizations, the one whose largest part costs least
/// (multiply-adds plus the packing each thread repeats).
fn split(m: usize, n: usize, k: usize, threads: usize, mr: usize, nr: usize) -> (usize, usize) {
    let (tiles_m, tiles_n) = (m.div_ceil(mr), n.div_ceil(nr));
    let mut best = (1, 1, f64::INFINITY);
    for tm in 1..=threads {
        if !threads.is_multiple_of(tm) {
            continue;
        }
        let tn = threads / tm;
        if tm > tiles_m || tn > tiles_n {
            continue;
        }
        let rows = (tiles_m.div_ceil(tm) * mr).min(m) as f64;
        let cols = (tiles_n.div_ceil(tn) * nr).min(n) as f64;
        // Packing moves about as many bytes per element as 4 multiply-adds take.
        let cost = rows * cols * k as f64 + 4.0 * k as f64 * (rows + cols);
        if cost < best.2 {
            best = (tm, tn, cost);
        }
    }
    (best.0, best.1)
}

/// Runs the rectangle `rows × cols` of a product on this thread.
///
/// # Safety
/// The rectangle lies in `C` and no other thread touches it.
unsafe fn serial<T: Element, A: LhsSource<T>>(
    job: &Job<'_, T, A>,
    rows: Range<usize>,
    cols: Range<usize>,
    level: Level,
) {
    with_buffers(|bufs| match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the level is at most the detected one.
        Level::Avx512 => unsafe { serial_avx512::<T, A>(job, rows, cols, bufs) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Level::Avx2 => unsafe { serial_avx2::<T, A>(job, rows, cols, bufs) },
        // SAFETY: plain code.
        _ => unsafe { serial_body::<Portable<T>, A>(job, rows, cols, bufs) },
    })
}

/// [`serial_body`] compiled for AVX-512. The target features sit on a named
/// function (not a closure handed to a trampoline) so that the body, with
/// every intrinsic of the micro-kernel, is inlined into code compiled with
/// them: a closure the optimizer declines to inline stays baseline code
/// that calls each intrinsic out of line (a hundred times slower).
///
/// # Safety
/// As [`serial`]; the processor must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,avx512f")]
unsafe fn serial_avx512<T: Element, A: LhsSource<T>>(
    job: &Job<'_, T, A>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut PackBuffers,
) {
    // SAFETY: forwarded.
    unsafe { serial_body::<T::Avx512, A>(job, rows, cols, bufs) }
}

/// [`serial_body`] compiled for AVX2 + FMA (see [`serial_avx512`]).
///
/// # Safety
/// As [`serial`]; the processor must have AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma")]
unsafe fn serial_avx2<T: Element, A: LhsSource<T>>(
    job: &Job<'_, T, A>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut PackBuffers,
) {
    // SAFETY: forwarded.
    unsafe { serial_body::<T::Avx2, A>(job, rows, cols, bufs) }
}

/// The blocked loops for one rectangle, inlined into each level's
/// trampoline.
#[inline(always)]
unsafe fn serial_body<S: Simd, A: LhsSource<S::T>>(
    job: &Job<'_, S::T, A>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut PackBuffers,
) {
    let k = job.k;
    let bl = job.blocking;
    let one_panel = cols.len() <= S::NR;
    let kc_target = if one_panel {
        bl.kc_for_panel(cols.len().next_multiple_of(S::LANES) * std::mem::size_of::<S::T>())
    } else {
        bl.kc
    };
    // Even slices: e.g. k = 576 with kc = 256 runs 3 × 192, not 256+256+64.
    let kc = even_block(k, kc_target, 1);
    let mc = even_block(rows.len(), bl.mc, S::MR);
    let nc_target = if rows.len() <= mc {
        bl.nc_one_pass
    } else {
        bl.nc
    };
    let nc = even_block(cols.len(), nc_target, S::NR);
    let (c, rsc, csc) = (job.c.ptr, job.c.rs, job.c.cs);
    // With few rows each rhs element feeds only a few multiply-adds, and
    // packing the rhs costs about as much as the product: full micro-panels
    // of a row-major rhs are then read in place (each stays in L1 while the
    // lhs strips pass over it), unless the block holds a subnormal, which
    // only packing flushes. Rows far apart (a wide rhs) each sit on their
    // own page, where no prefetcher follows: those are still packed (see
    // `pack::pack_rhs`).
    let span = kc
        .saturating_mul(job.b.rs.unsigned_abs())
        .saturating_mul(std::mem::size_of::<S::T>());
    let direct_rhs = rows.len() <= DIRECT_RHS_MAX_ROWS
        && job.b.cs == 1
        && job.b.rs > 0
        && span <= DIRECT_RHS_MAX_SPAN;
    // With one rhs micro-panel (a tall-skinny product) every lhs element
    // feeds a single tile, so packing the lhs would double the traffic of
    // its largest operand: row panels are read in place instead when the
    // rows are contiguous, block by block, unless a block holds a subnormal
    // (only packing flushes them). The check reads the block once, bringing
    // it into cache for the kernel right after.
    let lhs_in_place = if S::ROW_PANELS && one_panel {
        job.a.in_place()
    } else {
        None
    };
    let mut j0 = cols.start;
    while j0 < cols.end {
        let ncb = nc.min(cols.end - j0);
        let mut p0 = 0;
        while p0 < k {
            let kcb = kc.min(k - p0);
            let full = ncb / S::NR * S::NR;
            // SAFETY: the block lies in B.
            let direct = if direct_rhs
                && full > 0
                && !unsafe { pack::has_subnormal(&job.b, p0, kcb, j0, full) }
            {
                full
            } else {
                0
            };
            let rest = ncb - direct;
            let bbuf = bufs.b.get::<S::T>(kcb * rest.next_multiple_of(S::LANES));
            if rest > 0 {
                // SAFETY: the block lies in B; the buffer holds the packed
                // panels.
                unsafe {
                    pack::pack_rhs(&job.b, p0, kcb, j0 + direct, rest, S::NR, S::LANES, bbuf)
                };
            }
            let mut i0 = rows.start;
            while i0 < rows.end {
                let mcb = mc.min(rows.end - i0);
                // SAFETY: the block lies in A; the buffer holds the strips;
                // tile (i0, j0) of C belongs to this rectangle.
                unsafe {
                    let lhs = match lhs_in_place {
                        Some(a) if !pack::has_subnormal(&a, i0, mcb, p0, kcb) => PackedLhs {
                            ptr: a.at(i0, p0),
                            rows: mcb,
                            ars: a.rs as usize,
                            aps: 1,
                            strip: S::MR * a.rs as usize,
                        },
                        _ => {
                            let abuf = bufs.a.get::<S::T>(mcb.next_multiple_of(S::MR) * kcb);
                            let layout =
                                pack::pack_lhs(job.a, i0, mcb, p0, kcb, S::MR, S::ROW_PANELS, abuf);
                            PackedLhs {
                                ptr: abuf,
                                rows: mcb,
                                ars: layout.ars,
                                aps: layout.aps,
                                strip: layout.strip,
                            }
                        }
                    };
                    let accumulate = job.accumulate || p0 > 0;
                    if direct > 0 {
                        let rhs = Rhs::Direct {
                            ptr: job.b.at(p0, j0),
                            ld: job.b.rs as usize,
                        };
                        let cp = c.offset(i0 as isize * rsc + j0 as isize * csc);
                        kernel::block::<S>(kcb, lhs, rhs, direct, cp, rsc, csc, accumulate);
                    }
                    if rest > 0 {
                        let jr = j0 + direct;
                        let cp = c.offset(i0 as isize * rsc + jr as isize * csc);
                        let rhs = Rhs::Packed(bbuf.cast_const());
                        kernel::block::<S>(kcb, lhs, rhs, rest, cp, rsc, csc, accumulate);
                    }
                }
                i0 += mcb;
            }
            p0 += kcb;
        }
        j0 += ncb;
    }
}

/// A block size near `target` (a multiple of `unit`) that cuts `len` into
/// equal pieces.
fn even_block(len: usize, target: usize, unit: usize) -> usize {
    let target = target.max(unit);
    let pieces = len.div_ceil(target).max(1);
    len.div_ceil(pieces).next_multiple_of(unit)
}

/// A growable, 64-byte aligned scratch buffer.
#[derive(Default)]
struct AlignedBuf {
    words: Vec<Line>,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

impl AlignedBuf {
    /// Room for `n` elements of `T` (zeroed when first grown; the contents
    /// are whatever the last user left otherwise).
    fn get<T: bytemuck::Pod>(&mut self, n: usize) -> *mut T {
        let lines = (n * std::mem::size_of::<T>()).div_ceil(64);
        if self.words.len() < lines {
            self.words.resize(lines, Line([0; 64]));
        }
        self.words.as_mut_ptr().cast()
    }
}

/// The packing buffers of one thread.
#[derive(Default)]
struct PackBuffers {
    a: AlignedBuf,
    b: AlignedBuf,
}

thread_local! {
    static BUFFERS: Cell<Option<Box<PackBuffers>>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's packing buffers. Taken out of the slot while
/// in use, so a nested call (a pool thread that picks up another product
/// while it waits) gets fresh ones instead of aliasing them.
fn with_buffers<R>(f: impl FnOnce(&mut PackBuffers) -> R) -> R {
    let mut bufs = BUFFERS.with(|slot| slot.take()).unwrap_or_default();
    let result = f(&mut bufs);
    BUFFERS.with(|slot| slot.set(Some(bufs)));
    result
}
