//! Matrix-vector products (`m = 1` or `n = 1`), which are bound by reading
//! the matrix once: no packing, the matrix streamed in place.
//!
//! `y = M·x` for an `rows × k` matrix `M`:
//! * rows contiguous (`M`'s column stride 1): each output is a dot product
//!   of a row with `x`, four rows at a time so each load of `x` serves four
//!   rows, two vector accumulators per row, summed across lanes at the end;
//! * columns contiguous (row stride 1): `y += x[p]·M[:, p]` over `p`, a run
//!   of `4·LANES` outputs held in registers down all `k` columns.
//!
//! Subnormal matrix values are flushed as they are loaded (the GEMM flushes
//! while packing; XLA CPU runs with FTZ/DAZ), and `x` is copied flushed.
//! Large products split the rows over the compute pool.

use super::arch::Simd;
use super::pack::Strided;
use super::{Element, StridedMut};
use crate::runtime::pool::{compute_pool, run_tasks};
use crate::vmath::Level;

/// Elements of the matrix above which the rows are split over the pool.
const PARALLEL_MIN: usize = 1 << 17;

/// Tries `C (+)= A·B` as a matrix-vector product; false when the shapes or
/// strides are not one (then nothing was written).
///
/// # Safety
/// As [`super::gemm`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn try_gemv<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
    accumulate: bool,
    parallel: bool,
    level: Level,
) -> bool {
    // y = M·x with M `rows × k`: n = 1 takes A as M (a dot of two vectors,
    // m = n = 1, is one row); m = 1 takes Bᵀ.
    let (rows, mat, x, xs, y, ys) = if n == 1 && m >= 1 {
        (m, a, b.ptr, b.rs, c.ptr, c.rs)
    } else if m == 1 && n > 1 {
        let bt = Strided {
            ptr: b.ptr,
            rs: b.cs,
            cs: b.rs,
        };
        (n, bt, a.ptr, a.cs, c.ptr, c.cs)
    } else {
        return false;
    };
    if k < 2 || !(mat.cs == 1 || mat.rs == 1) {
        return false;
    }
    // x, flushed and contiguous.
    let xv: Vec<T> = (0..k)
        // SAFETY: x has k elements at stride xs.
        .map(|p| unsafe { x.offset(p as isize * xs).read() }.flushed())
        .collect();
    let job = Gemv {
        k,
        mat,
        x: xv.as_ptr(),
        y,
        ys,
        accumulate,
    };
    for_row_ranges(rows, k, parallel, 64, |r0, r1| {
        // SAFETY: disjoint row ranges of y; the level is at most the
        // detected one.
        unsafe { job.run_level(r0, r1, level) };
    });
    true
}

/// Runs `f(r0, r1)` over `0..rows` of a `rows × k` matrix-vector product:
/// one range, or (when `parallel` and the matrix is large) disjoint ranges
/// of whole `align`-row steps on the compute pool.
pub(super) fn for_row_ranges(
    rows: usize,
    k: usize,
    parallel: bool,
    align: usize,
    f: impl Fn(usize, usize) + Sync,
) {
    let threads = compute_pool().current_num_threads();
    let parts = if parallel && threads > 1 && rows * k >= PARALLEL_MIN {
        threads.min(rows.div_ceil(align))
    } else {
        1
    };
    let per = rows.div_ceil(parts).next_multiple_of(align);
    let part = |t: usize| {
        let r0 = (t * per).min(rows);
        let r1 = ((t + 1) * per).min(rows);
        if r0 < r1 {
            f(r0, r1);
        }
    };
    if parts == 1 {
        part(0);
    } else {
        run_tasks(parts, part);
    }
}

struct Gemv<T> {
    k: usize,
    mat: Strided<T>,
    x: *const T,
    y: *mut T,
    ys: isize,
    accumulate: bool,
}

// SAFETY: threads write disjoint rows of y and only read the rest.
unsafe impl<T: Sync> Sync for Gemv<T> {}

impl<T: Element> Gemv<T> {
    /// Rows `r0..r1` at `level`.
    ///
    /// # Safety
    /// The processor has `level`; the rows are this thread's alone.
    unsafe fn run_level(&self, r0: usize, r1: usize, level: Level) {
        match level {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: forwarded.
            Level::Avx512 => unsafe { self.avx512(r0, r1) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: forwarded.
            Level::Avx2 => unsafe { self.avx2(r0, r1) },
            // SAFETY: plain code.
            _ => unsafe { self.rows::<super::arch::Portable<T>>(r0, r1) },
        }
    }

    /// # Safety
    /// As [`Gemv::run_level`], with AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma,avx512f")]
    unsafe fn avx512(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe { self.rows::<T::Avx512>(r0, r1) }
    }

    /// # Safety
    /// As [`Gemv::run_level`], with AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma")]
    unsafe fn avx2(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe { self.rows::<T::Avx2>(r0, r1) }
    }

    #[inline(always)]
    unsafe fn rows<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe {
            if self.mat.cs == 1 {
                self.dots::<S>(r0, r1)
            } else {
                self.axpys::<S>(r0, r1)
            }
        }
    }

    #[inline(always)]
    unsafe fn store(&self, i: usize, v: T) {
        // SAFETY: row i of y is this thread's.
        unsafe {
            let p = self.y.offset(i as isize * self.ys);
            *p = if self.accumulate { *p + v } else { v };
        }
    }

    /// Rows contiguous: four row dot products at a time.
    #[inline(always)]
    unsafe fn dots<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        let (k, l) = (self.k, S::LANES);
        let body = k / (2 * l) * (2 * l);
        // SAFETY (whole body): rows r0..r1 of the matrix have k elements,
        // x has k.
        unsafe {
            let mut i = r0;
            while i < r1 {
                let h = 4.min(r1 - i);
                let row = |r: usize| {
                    self.mat
                        .ptr
                        .offset((i + r.min(h - 1)) as isize * self.mat.rs)
                };
                let rp = [row(0), row(1), row(2), row(3)];
                let mut acc = [[S::zero(); 2]; 4];
                let mut p = 0;
                while p < body {
                    let x0 = S::load(self.x.add(p));
                    let x1 = S::load(self.x.add(p + l));
                    for r in 0..4 {
                        let a0 = S::flush(S::load(rp[r].add(p)));
                        let a1 = S::flush(S::load(rp[r].add(p + l)));
                        acc[r][0] = S::fma(a0, x0, acc[r][0]);
                        acc[r][1] = S::fma(a1, x1, acc[r][1]);
                    }
                    p += 2 * l;
                }
                for (r, &rpr) in rp.iter().enumerate().take(h) {
                    let mut lanes = [T::ZERO; 16];
                    S::store(lanes.as_mut_ptr(), S::add(acc[r][0], acc[r][1]));
                    let mut s = T::ZERO;
                    for &v in &lanes[..l] {
                        s = s + v;
                    }
                    for q in body..k {
                        s = s + rpr.add(q).read().flushed() * *self.x.add(q);
                    }
                    self.store(i + r, s);
                }
                i += h;
            }
        }
    }

    /// Columns contiguous: runs of `4·LANES` outputs down all columns.
    #[inline(always)]
    unsafe fn axpys<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        let (k, l) = (self.k, S::LANES);
        let run = 4 * l;
        let cs = self.mat.cs;
        // SAFETY (whole body): rows r0..r1 of k columns lie in the matrix.
        unsafe {
            let mut i = r0;
            while i + run <= r1 {
                let base = self.mat.ptr.add(i);
                let mut acc = [S::zero(); 4];
                for p in 0..k {
                    let col = base.offset(p as isize * cs);
                    let xp = S::splat(self.x.add(p));
                    for (v, a) in acc.iter_mut().enumerate() {
                        *a = S::fma(S::flush(S::load(col.add(v * l))), xp, *a);
                    }
                }
                let mut out = [T::ZERO; 64];
                for (v, a) in acc.iter().enumerate() {
                    S::store(out.as_mut_ptr().add(v * l), *a);
                }
                for (r, &v) in out[..run].iter().enumerate() {
                    self.store(i + r, v);
                }
                i += run;
            }
            if i < r1 {
                let mut out = [T::ZERO; 64];
                for p in 0..k {
                    let col = self.mat.ptr.add(i).offset(p as isize * cs);
                    let xp = *self.x.add(p);
                    for (r, o) in out[..r1 - i].iter_mut().enumerate() {
                        *o = *o + col.add(r).read().flushed() * xp;
                    }
                }
                for (r, &v) in out[..r1 - i].iter().enumerate() {
                    self.store(i + r, v);
                }
            }
        }
    }
}

/// `C = A·B` for complex matrices as a matrix-vector product, if it is one
/// (`m = 1` or `n = 1`, the matrix's rows or columns contiguous); false
/// otherwise (then nothing was written). The pointers are to interleaved
/// (real, imaginary) pairs of `T`; strides count complex elements.
///
/// Each complex product is formed whole, `fmaddsub(a, re(x), swap(a)·im(x))`
/// (real and imaginary parts in a lane pair), then added: the order of an
/// elementwise complex multiply and sum, so a result that cancels to near
/// zero keeps the accuracy it has there.
///
/// # Safety
/// As [`super::gemm`], for complex elements.
#[allow(clippy::too_many_arguments)]
pub unsafe fn try_gemv_complex<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
    level: Option<Level>,
) -> bool {
    if super::generic_only() {
        return false;
    }
    let (rows, mat, x, xs, y, ys) = if n == 1 && m > 1 {
        (m, a, b.ptr, b.rs, c.ptr, c.rs)
    } else if m == 1 && n > 1 {
        let bt = Strided {
            ptr: b.ptr,
            rs: b.cs,
            cs: b.rs,
        };
        (n, bt, a.ptr, a.cs, c.ptr, c.cs)
    } else {
        return false;
    };
    if k < 2 || !(mat.cs == 1 || mat.rs == 1) {
        return false;
    }
    // x's real and imaginary parts, each duplicated into a lane pair,
    // flushed.
    let mut xv: Vec<T> = Vec::with_capacity(2 * k);
    let mut xw: Vec<T> = Vec::with_capacity(2 * k);
    for p in 0..k {
        // SAFETY: x has k complex elements at stride xs.
        let (re, im) = unsafe {
            let q = x.offset(2 * p as isize * xs);
            (q.read().flushed(), q.add(1).read().flushed())
        };
        xv.extend([re, re]);
        xw.extend([im, im]);
    }
    let job = ComplexGemv {
        k,
        mat,
        x: xv.as_ptr(),
        xw: xw.as_ptr(),
        y,
        ys,
    };
    let level = super::effective_level(level);
    let threads = compute_pool().current_num_threads();
    let parts = if threads > 1 && rows * k >= PARALLEL_MIN / 2 {
        threads.min(rows.div_ceil(64))
    } else {
        1
    };
    let per = rows.div_ceil(parts).next_multiple_of(64);
    let part = |t: usize| {
        let r0 = (t * per).min(rows);
        let r1 = ((t + 1) * per).min(rows);
        if r0 < r1 {
            // SAFETY: disjoint rows of y; the level is at most the detected one.
            unsafe { job.run_level(r0, r1, level) };
        }
    };
    if parts == 1 {
        part(0);
    } else {
        run_tasks(parts, part);
    }
    true
}

struct ComplexGemv<T> {
    k: usize,
    /// Complex strides; element (i, p) at `ptr + 2·(i·rs + p·cs)` reals.
    mat: Strided<T>,
    /// x's real parts, each twice.
    x: *const T,
    /// x's imaginary parts, each twice.
    xw: *const T,
    y: *mut T,
    ys: isize,
}

// SAFETY: threads write disjoint rows of y and only read the rest.
unsafe impl<T: Sync> Sync for ComplexGemv<T> {}

impl<T: Element> ComplexGemv<T> {
    /// # Safety
    /// As [`Gemv::run_level`].
    unsafe fn run_level(&self, r0: usize, r1: usize, level: Level) {
        match level {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: forwarded.
            Level::Avx512 => unsafe { self.avx512(r0, r1) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: forwarded.
            Level::Avx2 => unsafe { self.avx2(r0, r1) },
            // SAFETY: plain code.
            _ => unsafe { self.rows::<super::arch::Portable<T>>(r0, r1) },
        }
    }

    /// # Safety
    /// As [`Gemv::run_level`], with AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma,avx512f")]
    unsafe fn avx512(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe { self.rows::<T::Avx512>(r0, r1) }
    }

    /// # Safety
    /// As [`Gemv::run_level`], with AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma")]
    unsafe fn avx2(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe { self.rows::<T::Avx2>(r0, r1) }
    }

    #[inline(always)]
    unsafe fn rows<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        // SAFETY: forwarded.
        unsafe {
            if self.mat.cs == 1 {
                self.dots::<S>(r0, r1)
            } else {
                self.axpys::<S>(r0, r1)
            }
        }
    }

    #[inline(always)]
    unsafe fn store(&self, i: usize, re: T, im: T) {
        // SAFETY: row i of y is this thread's.
        unsafe {
            let p = self.y.offset(2 * i as isize * self.ys);
            *p = re;
            *p.add(1) = im;
        }
    }

    /// Rows contiguous: the products of a row's elements with x's, summed
    /// lane-wise; real parts in even lanes, imaginary in odd.
    #[inline(always)]
    unsafe fn dots<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        let (reals, l) = (2 * self.k, S::LANES);
        let body = reals / l * l;
        // SAFETY (whole body): rows r0..r1 hold k complex elements each.
        unsafe {
            for i in r0..r1 {
                let row = self.mat.ptr.offset(2 * i as isize * self.mat.rs);
                let mut acc = S::zero();
                let mut p = 0;
                while p < body {
                    let v = S::flush(S::load(row.add(p)));
                    let cross = S::fma(S::swap_pairs(v), S::load(self.xw.add(p)), S::zero());
                    acc = S::add(acc, S::fmaddsub(v, S::load(self.x.add(p)), cross));
                    p += l;
                }
                let mut lanes = [T::ZERO; 16];
                S::store(lanes.as_mut_ptr(), acc);
                let (mut re, mut im) = (T::ZERO, T::ZERO);
                for q in 0..l / 2 {
                    re = re + lanes[2 * q];
                    im = im + lanes[2 * q + 1];
                }
                let mut q = body;
                while q < reals {
                    let (ar, ai) = (row.add(q).read().flushed(), row.add(q + 1).read().flushed());
                    let (xr, xi) = (*self.x.add(q), *self.xw.add(q));
                    re = re + (ar * xr - ai * xi);
                    im = im + (ai * xr + ar * xi);
                    q += 2;
                }
                self.store(i, re, im);
            }
        }
    }

    /// Columns contiguous: runs of `LANES` complex rows (two vectors of
    /// pairs) down all columns, each column's products added whole.
    #[inline(always)]
    unsafe fn axpys<S: Simd<T = T>>(&self, r0: usize, r1: usize) {
        let (k, l) = (self.k, S::LANES);
        let cs = 2 * self.mat.cs;
        // SAFETY (whole body): rows r0..r1 of k columns lie in the matrix.
        unsafe {
            let mut i = r0;
            while i + l <= r1 {
                let base = self.mat.ptr.add(2 * i);
                let mut acc = [S::zero(); 2];
                for p in 0..k {
                    let col = base.offset(p as isize * cs);
                    let xr = S::splat(self.x.add(2 * p));
                    let xi = S::splat(self.xw.add(2 * p));
                    for (v, a) in acc.iter_mut().enumerate() {
                        let m = S::flush(S::load(col.add(v * l)));
                        let cross = S::fma(S::swap_pairs(m), xi, S::zero());
                        *a = S::add(*a, S::fmaddsub(m, xr, cross));
                    }
                }
                let mut out = [T::ZERO; 32];
                for (v, a) in acc.iter().enumerate() {
                    S::store(out.as_mut_ptr().add(v * l), *a);
                }
                for r in 0..l {
                    self.store(i + r, out[2 * r], out[2 * r + 1]);
                }
                i += l;
            }
            for r in i..r1 {
                let (mut re, mut im) = (T::ZERO, T::ZERO);
                for p in 0..k {
                    let q = self.mat.ptr.add(2 * r).offset(p as isize * cs);
                    let (ar, ai) = (q.read().flushed(), q.add(1).read().flushed());
                    let (xr, xi) = (*self.x.add(2 * p), *self.xw.add(2 * p));
                    re = re + (ar * xr - ai * xi);
                    im = im + (ai * xr + ar * xi);
                }
                self.store(r, re, im);
            }
        }
    }
}
