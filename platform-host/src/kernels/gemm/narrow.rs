//! Products with a few columns (`2 ≤ n ≤` [`MAX_COLUMNS`]) whose lhs rows
//! are contiguous: each output is a dot product of an lhs row with a column
//! of `B`, the lhs read in place.
//!
//! The register-tiled GEMM wastes most of a tile on such a product, and its
//! transposed form (`Cᵀ = Bᵀ·Aᵀ`, vectors along the rows) must pack the
//! lhs column by column, which costs more than the few multiply-adds each
//! lhs element takes part in. Here `Bᵀ` (`n × k`, small) is packed once;
//! then `R` rows at a time, for every `LANES` values of `k`, each row's
//! vector is loaded once and multiplied into `n` accumulators, one per
//! column, summed across lanes at the end of the row.
//!
//! The lhs may be a sum of *runs*: consecutive column ranges read from
//! different places (row `i` of run `s` at `a_s + i·rs_s`). A convolution
//! over a padded input has one run per set of consecutive taps, all adding
//! into the same accumulators, so the cross-lane sums happen once per
//! output however many runs there are.
//!
//! Subnormal lhs values must be flushed to zero beforehand (the caller
//! promises it) or are found block by block and the block copied flushed;
//! `Bᵀ` is flushed while packed.

use super::arch::Simd;
use super::gemv::for_row_ranges;
use super::pack::Strided;
use super::{Element, StridedMut};
use crate::vmath::Level;

/// The widest product this form takes.
pub const MAX_COLUMNS: usize = 8;
/// Rows checked for subnormals (and copied when one is found) at a time.
const CHECK_ROWS: usize = 64;

/// Columns `k0 .. k0 + len` of the lhs (`k0` the sum of the runs before):
/// row `i` at `a + i·rs`, `len` contiguous values.
#[derive(Clone, Copy, Debug)]
pub struct LhsRun<T> {
    pub a: *const T,
    pub rs: isize,
    pub len: usize,
}

// SAFETY: a read-only view (as `Strided`).
unsafe impl<T: Sync> Send for LhsRun<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for LhsRun<T> {}

/// Whether [`narrow`] takes a product with `n` columns.
pub fn applies(n: usize) -> bool {
    (2..=MAX_COLUMNS).contains(&n)
}

/// `C (+)= A·B` for an `m × k` lhs given as `runs` (`k` their total length)
/// and a `k × n` rhs, `n` within [`applies`]. `flushed` promises the lhs
/// holds no subnormal value.
///
/// # Safety
/// Every run's rows `0..m` must be valid for `len` reads; `b` and `c` valid
/// for their extents; `C` must not overlap the others, and distinct `(i, j)`
/// of `C` must be distinct addresses.
#[allow(clippy::too_many_arguments)]
pub unsafe fn narrow<T: Element>(
    m: usize,
    n: usize,
    runs: &[LhsRun<T>],
    b: Strided<T>,
    c: StridedMut<T>,
    accumulate: bool,
    flushed: bool,
    parallel: bool,
    level: Option<Level>,
) {
    debug_assert!(applies(n));
    let level = super::effective_level(level);
    let k: usize = runs.iter().map(|r| r.len).sum();
    // Bᵀ, flushed: row j is column j of B.
    let mut bt: Vec<T> = Vec::with_capacity(n * k);
    for j in 0..n {
        for p in 0..k {
            // SAFETY: (p, j) lies in B.
            bt.push(unsafe { b.at(p, j).read() }.flushed());
        }
    }
    let job = Job {
        n,
        k,
        runs,
        bt: bt.as_ptr(),
        c,
        accumulate,
    };
    for_row_ranges(m, k * n, parallel, CHECK_ROWS, |r0, r1| {
        if flushed {
            // SAFETY: disjoint row ranges of C; the level is at most the
            // detected one.
            unsafe { job.run_level(r0, r1, level) };
            return;
        }
        let mut copy: Vec<T> = Vec::new();
        let mut i = r0;
        while i < r1 {
            let h = CHECK_ROWS.min(r1 - i);
            // SAFETY: the runs' rows i..i + h (the caller's contract).
            let subnormal = runs.iter().any(|r| unsafe { rows_have_subnormal(r, i, h) });
            // SAFETY: as above; the copy holds h rows of k.
            unsafe {
                if subnormal {
                    copy.clear();
                    copy.reserve(h * k);
                    for row in i..i + h {
                        for r in runs {
                            let src =
                                std::slice::from_raw_parts(r.a.offset(row as isize * r.rs), r.len);
                            copy.extend(src.iter().map(|v| v.flushed()));
                        }
                    }
                    let one = [LhsRun {
                        a: copy.as_ptr(),
                        rs: k as isize,
                        len: k,
                    }];
                    let sub = Job {
                        runs: &one,
                        c: StridedMut {
                            ptr: job.c.ptr.offset(i as isize * job.c.rs),
                            ..job.c
                        },
                        ..job
                    };
                    sub.run_level(0, h, level);
                } else {
                    job.run_level(i, i + h, level);
                }
            }
            i += h;
        }
    });
}

/// Whether rows `i0 .. i0 + h` of a run hold a subnormal value.
///
/// # Safety
/// The rows must be valid for the run's length.
unsafe fn rows_have_subnormal<T: Element>(run: &LhsRun<T>, i0: usize, h: usize) -> bool {
    (i0..i0 + h).any(|i| {
        // SAFETY: the caller's contract.
        let row = unsafe { std::slice::from_raw_parts(run.a.offset(i as isize * run.rs), run.len) };
        crate::kernels::denormal::any_subnormal(row)
    })
}

struct Job<'a, T> {
    n: usize,
    k: usize,
    runs: &'a [LhsRun<T>],
    bt: *const T,
    c: StridedMut<T>,
    accumulate: bool,
}

// SAFETY: threads write disjoint rows of C and only read the rest.
unsafe impl<T: Sync> Sync for Job<'_, T> {}

impl<T: Element> Job<'_, T> {
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
            _ => unsafe { self.by_columns::<super::arch::Portable<T>>(r0, r1, &[1; 9]) },
        }
    }

    /// # Safety
    /// As [`Job::run_level`], with AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma,avx512f")]
    unsafe fn avx512(&self, r0: usize, r1: usize) {
        // 32 registers: R·n accumulators, n columns and a row vector.
        // SAFETY: forwarded.
        unsafe { self.by_columns::<T::Avx512>(r0, r1, &[0, 4, 4, 4, 4, 4, 3, 3, 2]) }
    }

    /// # Safety
    /// As [`Job::run_level`], with AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,fma")]
    unsafe fn avx2(&self, r0: usize, r1: usize) {
        // 16 registers.
        // SAFETY: forwarded.
        unsafe { self.by_columns::<T::Avx2>(r0, r1, &[0, 4, 4, 3, 2, 2, 1, 1, 1]) }
    }

    /// The kernel instance for `n` columns, `rows[n]` rows at a time (1 or
    /// the listed count).
    #[inline(always)]
    unsafe fn by_columns<S: Simd<T = T>>(&self, r0: usize, r1: usize, rows: &[usize; 9]) {
        macro_rules! go {
            ($n:literal) => {
                // SAFETY: forwarded.
                unsafe {
                    match rows[$n] {
                        4 => self.rows::<S, $n, 4>(r0, r1),
                        3 => self.rows::<S, $n, 3>(r0, r1),
                        2 => self.rows::<S, $n, 2>(r0, r1),
                        _ => self.rows::<S, $n, 1>(r0, r1),
                    }
                }
            };
        }
        match self.n {
            2 => go!(2),
            3 => go!(3),
            4 => go!(4),
            5 => go!(5),
            6 => go!(6),
            7 => go!(7),
            _ => go!(8),
        }
    }

    /// Rows `r0..r1`, `R` at a time, for `N` columns.
    #[inline(always)]
    unsafe fn rows<S: Simd<T = T>, const N: usize, const R: usize>(&self, r0: usize, r1: usize) {
        let (k, l) = (self.k, S::LANES);
        // SAFETY (whole body): the runs' rows r0..r1 hold their lengths,
        // Bᵀ holds N rows of k, and rows r0..r1 of C are this thread's.
        unsafe {
            let mut i = r0;
            while i < r1 {
                let h = R.min(r1 - i);
                let mut acc = [[S::zero(); N]; R];
                let mut tail = [[T::ZERO; N]; R];
                let mut k0 = 0;
                for run in self.runs {
                    // Rows past the last repeat it (their sums are dropped).
                    let rp: [*const T; R] =
                        std::array::from_fn(|r| run.a.offset((i + r.min(h - 1)) as isize * run.rs));
                    let body = run.len / l * l;
                    let bt = self.bt.add(k0);
                    let mut p = 0;
                    while p < body {
                        let bv: [S::V; N] = std::array::from_fn(|j| S::load(bt.add(j * k + p)));
                        for r in 0..R {
                            let av = S::load(rp[r].add(p));
                            for j in 0..N {
                                acc[r][j] = S::fma(av, bv[j], acc[r][j]);
                            }
                        }
                        p += l;
                    }
                    for q in body..run.len {
                        for (row, &rpr) in tail.iter_mut().zip(&rp) {
                            let a = rpr.add(q).read();
                            for (j, t) in row.iter_mut().enumerate() {
                                *t = *t + a * bt.add(j * k + q).read();
                            }
                        }
                    }
                    k0 += run.len;
                }
                for r in 0..h {
                    let row = self.c.ptr.offset((i + r) as isize * self.c.rs);
                    for j in 0..N {
                        let v = S::sum(acc[r][j]) + tail[r][j];
                        let p = row.offset(j as isize * self.c.cs);
                        *p = if self.accumulate { *p + v } else { v };
                    }
                }
                i += h;
            }
        }
    }
}
