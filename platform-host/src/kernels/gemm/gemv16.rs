//! Matrix-vector products of a 16-bit float matrix (f16 or bf16), summed in
//! f32: the matrix streamed once in place, each vector of 16 elements
//! widened in registers (`vcvtph2ps` for f16; a zero-extend and a shift for
//! bf16) right before its multiply-add.
//!
//! Bound by reading the matrix, these products lose most of their time when
//! the matrix is first converted or packed into 32-bit words (a 2 MiB f16
//! matrix becomes 4 MiB written and read again): a decoder's weight-times-
//! activation product is exactly this shape. The two layouts are those of
//! [`super::gemv`]: rows contiguous (a dot product per row, four rows at a
//! time sharing each load of `x`) and columns contiguous (`y += x[p]·M[:, p]`
//! with 128 outputs held in registers down all columns).
//!
//! bf16 subnormals count as zero (XLA CPU runs with FTZ/DAZ, and the packed
//! bf16 product's `vdpbf16ps` flushes them too); an f16 subnormal is a
//! normal f32 and is kept, as XLA's conversion keeps it. AVX-512 level only
//! (it includes the 16-lane conversion); elsewhere, and for a matrix with no
//! unit stride, the caller uses the packed products.

use super::pack::Strided;
use crate::kernels::denormal::Flushable;
use crate::vmath::Level;

/// Which 16-bit float the matrix and vector hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    F16,
    Bf16,
}

impl Half {
    /// The value of one element, as f32 (bf16 subnormals as zero).
    fn widen(self, bits: u16) -> f32 {
        match self {
            Half::F16 => half::f16::from_bits(bits).to_f32(),
            Half::Bf16 => f32::from_bits(u32::from(bits) << 16).flushed(),
        }
    }
}

/// Whether [`gemv16`] runs at the kernels' instruction-set level
/// (`vmath::level()`, which `VMATH_LEVEL` may lower).
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64") && !super::generic_only() && crate::vmath::level() >= Level::Avx512
}

/// `y = M·x` for a `rows × k` matrix `M` of `kind` with one unit stride
/// (`mat.cs == 1` or `mat.rs == 1`), `x` of `k` elements at stride `xs`, and
/// `y` of `rows` f32 at stride `ys`. Returns false (writing nothing) when
/// the level is below AVX-512 or neither stride is 1.
///
/// # Safety
/// The matrix, `x` and `y` are valid for their extents; `y` overlaps
/// neither.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv16(
    kind: Half,
    rows: usize,
    k: usize,
    mat: Strided<u16>,
    x: *const u16,
    xs: isize,
    y: *mut f32,
    ys: isize,
    parallel: bool,
) -> bool {
    if !supported() || !(mat.cs == 1 || mat.rs == 1) {
        return false;
    }
    let xv: Vec<f32> = (0..k)
        // SAFETY: x has k elements at stride xs.
        .map(|p| kind.widen(unsafe { x.offset(p as isize * xs).read() }))
        .collect();
    let job = Job {
        kind,
        k,
        mat,
        x: xv.as_ptr(),
        y,
        ys,
    };
    super::gemv::for_row_ranges(rows, k, parallel, 128, |_r0, _r1| {
        // SAFETY: disjoint row ranges of y; AVX-512F checked above.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            job.run(_r0, _r1)
        };
    });
    true
}

struct Job {
    kind: Half,
    k: usize,
    mat: Strided<u16>,
    x: *const f32,
    y: *mut f32,
    ys: isize,
}

// SAFETY: threads write disjoint rows of y and only read the rest.
unsafe impl Sync for Job {}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Half, Job};
    use crate::kernels::gemm::arch::{Avx512F32, Simd};
    use std::arch::x86_64::*;

    /// 16 elements at `p` widened to f32.
    ///
    /// # Safety
    /// `p` holds 16 elements; AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(kind: Half, p: *const u16) -> __m512 {
        // SAFETY: forwarded.
        let h = unsafe { _mm256_loadu_si256(p.cast()) };
        match kind {
            Half::F16 => _mm512_cvtph_ps(h),
            Half::Bf16 => {
                let w = _mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h));
                // SAFETY: AVX-512F, as this function.
                unsafe { <Avx512F32 as Simd>::flush(_mm512_castsi512_ps(w)) }
            }
        }
    }

    impl Job {
        /// Rows `r0..r1` of y.
        ///
        /// # Safety
        /// AVX-512F and FMA; the rows are this thread's alone.
        #[target_feature(enable = "avx512f,fma")]
        pub(super) unsafe fn run(&self, r0: usize, r1: usize) {
            // SAFETY: forwarded.
            unsafe {
                if self.mat.cs == 1 {
                    self.dots(r0, r1)
                } else {
                    self.axpys(r0, r1)
                }
            }
        }

        /// Element `(i, p)` of the matrix.
        ///
        /// # Safety
        /// Inside the matrix.
        #[inline]
        unsafe fn at(&self, i: usize, p: usize) -> *const u16 {
            // SAFETY: forwarded.
            unsafe {
                self.mat
                    .ptr
                    .offset(i as isize * self.mat.rs + p as isize * self.mat.cs)
            }
        }

        /// Rows contiguous: a dot product per row, four rows at a time.
        #[target_feature(enable = "avx512f,fma")]
        unsafe fn dots(&self, r0: usize, r1: usize) {
            let (k, kind) = (self.k, self.kind);
            let body = k - k % 32;
            let mut i = r0;
            // SAFETY (whole function): every row and column read lies in the
            // matrix, x holds k values, y holds the rows.
            unsafe {
                while i + 4 <= r1 {
                    let rows = [
                        self.at(i, 0),
                        self.at(i + 1, 0),
                        self.at(i + 2, 0),
                        self.at(i + 3, 0),
                    ];
                    let mut acc = [[_mm512_setzero_ps(); 2]; 4];
                    let mut p = 0;
                    while p < body {
                        let x0 = _mm512_loadu_ps(self.x.add(p));
                        let x1 = _mm512_loadu_ps(self.x.add(p + 16));
                        for (a, row) in acc.iter_mut().zip(&rows) {
                            a[0] = _mm512_fmadd_ps(load(kind, row.add(p)), x0, a[0]);
                            a[1] = _mm512_fmadd_ps(load(kind, row.add(p + 16)), x1, a[1]);
                        }
                        p += 32;
                    }
                    for (r, (a, row)) in acc.iter().zip(&rows).enumerate() {
                        let mut s = _mm512_reduce_add_ps(_mm512_add_ps(a[0], a[1]));
                        for q in body..k {
                            s += kind.widen(row.add(q).read()) * self.x.add(q).read();
                        }
                        self.y.offset((i + r) as isize * self.ys).write(s);
                    }
                    i += 4;
                }
                while i < r1 {
                    let row = self.at(i, 0);
                    let mut a = [_mm512_setzero_ps(); 2];
                    let mut p = 0;
                    while p < body {
                        a[0] = _mm512_fmadd_ps(
                            load(kind, row.add(p)),
                            _mm512_loadu_ps(self.x.add(p)),
                            a[0],
                        );
                        a[1] = _mm512_fmadd_ps(
                            load(kind, row.add(p + 16)),
                            _mm512_loadu_ps(self.x.add(p + 16)),
                            a[1],
                        );
                        p += 32;
                    }
                    let mut s = _mm512_reduce_add_ps(_mm512_add_ps(a[0], a[1]));
                    for q in body..k {
                        s += kind.widen(row.add(q).read()) * self.x.add(q).read();
                    }
                    self.y.offset(i as isize * self.ys).write(s);
                    i += 1;
                }
            }
        }

        /// Columns contiguous: `y += x[p]·M[:, p]`, 128 outputs (then 16,
        /// then one at a time) held in registers down all columns.
        #[target_feature(enable = "avx512f,fma")]
        unsafe fn axpys(&self, r0: usize, r1: usize) {
            let (k, kind) = (self.k, self.kind);
            let mut i = r0;
            // SAFETY (whole function): as `dots`.
            unsafe {
                while i + 128 <= r1 {
                    let mut acc = [_mm512_setzero_ps(); 8];
                    for p in 0..k {
                        let xp = _mm512_set1_ps(self.x.add(p).read());
                        let col = self.at(i, p);
                        for (v, a) in acc.iter_mut().enumerate() {
                            *a = _mm512_fmadd_ps(load(kind, col.add(16 * v)), xp, *a);
                        }
                    }
                    for (v, a) in acc.iter().enumerate() {
                        self.store16(i + 16 * v, *a);
                    }
                    i += 128;
                }
                while i + 16 <= r1 {
                    let mut a = _mm512_setzero_ps();
                    for p in 0..k {
                        let xp = _mm512_set1_ps(self.x.add(p).read());
                        a = _mm512_fmadd_ps(load(kind, self.at(i, p)), xp, a);
                    }
                    self.store16(i, a);
                    i += 16;
                }
                while i < r1 {
                    let mut s = 0.0f32;
                    for p in 0..k {
                        s = kind
                            .widen(self.at(i, p).read())
                            .mul_add(self.x.add(p).read(), s);
                    }
                    self.y.offset(i as isize * self.ys).write(s);
                    i += 1;
                }
            }
        }

        /// Writes 16 outputs from row `i`.
        ///
        /// # Safety
        /// Rows `i..i + 16` are in y.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn store16(&self, i: usize, v: __m512) {
            // SAFETY: forwarded.
            unsafe {
                if self.ys == 1 {
                    _mm512_storeu_ps(self.y.add(i), v);
                } else {
                    let mut lanes = [0f32; 16];
                    _mm512_storeu_ps(lanes.as_mut_ptr(), v);
                    for (l, &s) in lanes.iter().enumerate() {
                        self.y.offset((i + l) as isize * self.ys).write(s);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y = M·x` in f64 from the widened values, the reference.
    fn reference(
        kind: Half,
        m: &[u16],
        rows: usize,
        k: usize,
        rs: usize,
        cs: usize,
        x: &[u16],
    ) -> Vec<f64> {
        (0..rows)
            .map(|i| {
                (0..k)
                    .map(|p| {
                        f64::from(kind.widen(m[i * rs + p * cs])) * f64::from(kind.widen(x[p]))
                    })
                    .sum()
            })
            .collect()
    }

    fn bits(kind: Half, v: f32) -> u16 {
        match kind {
            Half::F16 => half::f16::from_f32(v).to_bits(),
            Half::Bf16 => half::bf16::from_f32(v).to_bits(),
        }
    }

    #[test]
    fn both_layouts_and_every_edge_agree_with_a_reference() {
        if !supported() {
            eprintln!("gemv16: no AVX-512F here; the packed products run instead");
            return;
        }
        for kind in [Half::F16, Half::Bf16] {
            // Row counts around the 4-row, 16- and 128-output steps; k around
            // the 32-element body.
            for (rows, k) in [(1, 1), (5, 33), (131, 70), (150, 31), (17, 64)] {
                let seed = |i: usize| ((i * 2654435761) % 1000) as f32 / 250.0 - 2.0;
                let x: Vec<u16> = (0..k).map(|p| bits(kind, seed(p + 7))).collect();
                for rows_contiguous in [true, false] {
                    let (rs, cs) = if rows_contiguous {
                        (k + 3, 1)
                    } else {
                        (1, rows + 5)
                    };
                    let len = (rows - 1) * rs + (k - 1) * cs + 1;
                    let mut m: Vec<u16> = (0..len).map(|i| bits(kind, seed(i))).collect();
                    // A subnormal in the matrix: zero for bf16, kept for f16.
                    m[0] = 1;
                    let want = reference(kind, &m, rows, k, rs, cs, &x);
                    let mut y = vec![f32::NAN; rows * 2];
                    let mat = Strided {
                        ptr: m.as_ptr(),
                        rs: rs as isize,
                        cs: cs as isize,
                    };
                    for parallel in [false, true] {
                        // SAFETY: extents as built above; y holds rows at stride 2.
                        let ran = unsafe {
                            gemv16(
                                kind,
                                rows,
                                k,
                                mat,
                                x.as_ptr(),
                                1,
                                y.as_mut_ptr(),
                                2,
                                parallel,
                            )
                        };
                        assert!(ran);
                        for i in 0..rows {
                            let (got, w) = (f64::from(y[2 * i]), want[i]);
                            assert!(
                                (got - w).abs() <= 1e-4 * (1.0 + w.abs()),
                                "{kind:?} rows={rows} k={k} rows_contiguous={rows_contiguous} y[{i}] = {got}, want {w}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bf16_subnormals_count_as_zero_and_f16_ones_do_not() {
        assert_eq!(Half::Bf16.widen(1), 0.0);
        assert_eq!(Half::Bf16.widen(0x8001).to_bits(), 0x8000_0000);
        assert!(Half::F16.widen(1) > 0.0);
    }
}
