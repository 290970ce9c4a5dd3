//! The GEMM against a naive triple loop accumulated in f64, over many shapes
//! (tiny, prime, edge-of-tile, tall and skinny, k = 0), strides (row-major,
//! transposed, padded rows, negative-free general strides), overwrite and
//! accumulate, one thread and the pool, at every instruction-set level this
//! processor supports.

use super::*;

/// A small seeded generator (SplitMix64) for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

trait TestElem: Element {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    const EPS: f64;
}
impl TestElem for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const EPS: f64 = f32::EPSILON as f64;
}
impl TestElem for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    const EPS: f64 = f64::EPSILON;
}

/// How a test matrix is laid out in its buffer.
#[derive(Clone, Copy, Debug)]
enum Layout {
    RowMajor,
    ColMajor,
    /// Row-major with rows padded to `cols + 3`.
    Padded,
    /// Both strides above 1 (every other row and column of a bigger array).
    Sparse,
}

/// A `rows × cols` matrix in a buffer with the given layout.
struct Mat<T> {
    data: Vec<T>,
    rs: isize,
    cs: isize,
}

impl<T: TestElem> Mat<T> {
    fn new(rows: usize, cols: usize, layout: Layout, rng: &mut Rng) -> Self {
        let (rs, cs, len) = match layout {
            Layout::RowMajor => (cols, 1, rows * cols),
            Layout::ColMajor => (1, rows, rows * cols),
            Layout::Padded => (cols + 3, 1, rows * (cols + 3)),
            Layout::Sparse => (4 * cols.max(1), 2, rows * 4 * cols.max(1)),
        };
        // Poison the gaps so reading one shows up as a wrong result.
        let mut data = vec![T::from_f64(f64::NAN); len.max(1)];
        for i in 0..rows {
            for j in 0..cols {
                data[i * rs + j * cs] = T::from_f64(rng.unit());
            }
        }
        Mat {
            data,
            rs: rs as isize,
            cs: cs as isize,
        }
    }
    fn get(&self, i: usize, j: usize) -> T {
        self.data[i * self.rs as usize + j * self.cs as usize]
    }
    fn view(&self) -> Strided<T> {
        Strided {
            ptr: self.data.as_ptr(),
            rs: self.rs,
            cs: self.cs,
        }
    }
}

/// Runs one case and checks every element of C against the f64 reference,
/// within `k·ε·Σ|a||b|` (plus the initial C when accumulating).
#[allow(clippy::too_many_arguments)]
fn check<T: TestElem>(
    m: usize,
    n: usize,
    k: usize,
    la: Layout,
    lb: Layout,
    lc: Layout,
    accumulate: bool,
    parallel: bool,
    level: Level,
    rng: &mut Rng,
) {
    let a = Mat::<T>::new(m, k, la, rng);
    let b = Mat::<T>::new(k, n, lb, rng);
    let mut c = Mat::<T>::new(m, n, lc, rng);
    let before: Vec<Vec<f64>> = (0..m)
        .map(|i| (0..n).map(|j| c.get(i, j).to_f64()).collect())
        .collect();
    let cv = StridedMut {
        ptr: c.data.as_mut_ptr(),
        rs: c.rs,
        cs: c.cs,
    };
    let options = Options {
        accumulate,
        parallel,
        level: Some(level),
    };
    // SAFETY: the matrices are valid for their extents and distinct.
    unsafe { gemm(m, n, k, a.view(), b.view(), cv, options) };
    #[allow(clippy::needless_range_loop)] // (i, j) index three matrices
    for i in 0..m {
        for j in 0..n {
            let (mut exact, mut mag) = (0.0f64, 0.0f64);
            for p in 0..k {
                let prod = a.get(i, p).to_f64() * b.get(p, j).to_f64();
                exact += prod;
                mag += prod.abs();
            }
            if accumulate {
                exact += before[i][j];
                mag += before[i][j].abs();
            }
            let got = c.get(i, j).to_f64();
            let tol = 2.0 * (k as f64 + 2.0) * T::EPS * mag + f64::MIN_POSITIVE;
            assert!(
                (got - exact).abs() <= tol,
                "{level} {m}x{n}x{k} a={la:?} b={lb:?} c={lc:?} acc={accumulate} par={parallel}: \
                 C[{i},{j}] = {got}, expected {exact} (tolerance {tol})"
            );
        }
    }
    // Gaps of C stay untouched (still NaN).
    if let Layout::Padded | Layout::Sparse = lc {
        let touched = m * n;
        let nan = c.data.iter().filter(|v| v.to_f64().is_nan()).count();
        assert_eq!(
            nan + touched,
            c.data.len(),
            "{level} {m}x{n}x{k}: wrote outside C"
        );
    }
}

fn levels() -> Vec<Level> {
    Level::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect()
}

const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (1, 1, 7),
    (2, 3, 4),
    (5, 7, 3),
    (6, 64, 17),
    (7, 65, 33),
    (13, 17, 19),
    (12, 10, 512),
    (33, 100, 31),
    (64, 1, 40),
    (1, 100, 40),
    (3, 200, 5),
    (200, 3, 5),
    (97, 131, 67),
    // Wide right-hand sides: several runs of the row-wise rhs packing, a
    // ragged last panel, more rows than are fetched ahead, several rhs
    // blocks under one lhs block.
    (7, 600, 40),
    (5, 1100, 300),
    // Tall and skinny: one rhs micro-panel, the lhs read in place where its
    // rows are contiguous, slices deeper than the L1 rule (two of them at
    // this depth).
    (150, 16, 4500),
];

#[test]
fn matches_naive_product_f32() {
    let mut rng = Rng(1);
    for level in levels() {
        for &(m, n, k) in SHAPES {
            for (la, lb) in [
                (Layout::RowMajor, Layout::RowMajor),
                (Layout::ColMajor, Layout::RowMajor),
                (Layout::RowMajor, Layout::ColMajor),
                (Layout::Sparse, Layout::Padded),
            ] {
                check::<f32>(
                    m,
                    n,
                    k,
                    la,
                    lb,
                    Layout::RowMajor,
                    false,
                    false,
                    level,
                    &mut rng,
                );
            }
        }
    }
}

#[test]
fn matches_naive_product_f64() {
    let mut rng = Rng(2);
    for level in levels() {
        for &(m, n, k) in SHAPES {
            for (la, lb) in [
                (Layout::RowMajor, Layout::RowMajor),
                (Layout::ColMajor, Layout::ColMajor),
                (Layout::Padded, Layout::Sparse),
            ] {
                check::<f64>(
                    m,
                    n,
                    k,
                    la,
                    lb,
                    Layout::RowMajor,
                    false,
                    false,
                    level,
                    &mut rng,
                );
            }
        }
    }
}

#[test]
fn strided_outputs_and_accumulation() {
    let mut rng = Rng(3);
    for level in levels() {
        for &(m, n, k) in &[(5, 7, 3), (13, 70, 9), (70, 13, 9), (1, 1, 1)] {
            for lc in [
                Layout::RowMajor,
                Layout::ColMajor,
                Layout::Padded,
                Layout::Sparse,
            ] {
                for accumulate in [false, true] {
                    check::<f32>(
                        m,
                        n,
                        k,
                        Layout::RowMajor,
                        Layout::RowMajor,
                        lc,
                        accumulate,
                        false,
                        level,
                        &mut rng,
                    );
                    check::<f64>(
                        m,
                        n,
                        k,
                        Layout::ColMajor,
                        Layout::RowMajor,
                        lc,
                        accumulate,
                        false,
                        level,
                        &mut rng,
                    );
                }
            }
        }
    }
}

#[test]
fn empty_contraction_writes_zeros_or_keeps_c() {
    let mut rng = Rng(4);
    for level in levels() {
        for accumulate in [false, true] {
            check::<f32>(
                4,
                5,
                0,
                Layout::RowMajor,
                Layout::RowMajor,
                Layout::Padded,
                accumulate,
                false,
                level,
                &mut rng,
            );
        }
        // Empty outputs touch nothing.
        check::<f32>(
            0,
            5,
            3,
            Layout::RowMajor,
            Layout::RowMajor,
            Layout::RowMajor,
            false,
            false,
            level,
            &mut rng,
        );
        check::<f64>(
            5,
            0,
            3,
            Layout::RowMajor,
            Layout::RowMajor,
            Layout::RowMajor,
            false,
            false,
            level,
            &mut rng,
        );
    }
}

#[test]
fn large_products_split_over_threads() {
    // Big enough to cross every block size and the parallel threshold, with
    // edges in every dimension.
    let mut rng = Rng(5);
    for level in levels() {
        check::<f32>(
            131,
            203,
            601,
            Layout::RowMajor,
            Layout::RowMajor,
            Layout::RowMajor,
            false,
            true,
            level,
            &mut rng,
        );
        check::<f32>(
            301,
            37,
            150,
            Layout::ColMajor,
            Layout::ColMajor,
            Layout::RowMajor,
            true,
            true,
            level,
            &mut rng,
        );
        check::<f64>(
            70,
            300,
            90,
            Layout::RowMajor,
            Layout::ColMajor,
            Layout::RowMajor,
            false,
            true,
            level,
            &mut rng,
        );
        // Tall with a small rhs: cut by rows, the last part short.
        check::<f32>(
            1501,
            16,
            200,
            Layout::RowMajor,
            Layout::RowMajor,
            Layout::RowMajor,
            false,
            true,
            level,
            &mut rng,
        );
        check::<f64>(
            1203,
            12,
            100,
            Layout::RowMajor,
            Layout::RowMajor,
            Layout::RowMajor,
            true,
            true,
            level,
            &mut rng,
        );
    }
}

#[test]
fn split_prefers_the_cheaper_dimension() {
    // Few rows: cut the columns; few columns: cut the rows.
    assert_eq!(split(32, 512, 512, 2, 6, 64), (1, 2));
    assert_eq!(split(25088, 64, 576, 2, 6, 64), (2, 1));
    assert_eq!(split(1200, 1280, 1000, 4, 6, 64), (2, 2));
    // Too small to cut at all.
    assert_eq!(split(3, 10, 5, 2, 6, 64), (1, 1));
}

/// `C = A·B` for row-major f32 matrices, on one thread at `level`.
fn row_major_f32(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32], level: Level) {
    assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n);
    let options = Options {
        accumulate: false,
        parallel: false,
        level: Some(level),
    };
    let view = |ptr: *const f32, cols: usize| Strided {
        ptr,
        rs: cols as isize,
        cs: 1,
    };
    let cv = StridedMut {
        ptr: c.as_mut_ptr(),
        rs: n as isize,
        cs: 1,
    };
    // SAFETY: row-major matrices of their sizes (checked above).
    unsafe {
        gemm(
            m,
            n,
            k,
            view(a.as_ptr(), k),
            view(b.as_ptr(), n),
            cv,
            options,
        )
    };
}

#[test]
fn subnormal_operands_are_flushed() {
    // XLA CPU multiplies with denormals-are-zero; the packing does the same.
    for level in levels() {
        let a = [1e-40f32, 1.0, -1e-40, 2.0];
        let b = [1.0f32, 1e-39, 3.0, 1e-39];
        let mut c = [f32::NAN; 4];
        row_major_f32(2, 2, 2, &a, &b, &mut c, level);
        // Row 0: [1e-40 → 0, 1] · B with B's subnormals → 0: [0·1 + 1·3, 0 + 0].
        assert_eq!(c, [3.0, 0.0, 6.0, 0.0], "{level}");
    }
}

#[test]
fn subnormals_in_a_rhs_read_in_place_are_flushed() {
    // A few rows against a wide row-major rhs: its full micro-panels are read
    // in place, except in a block holding a subnormal, which is packed (and
    // flushed) instead. A subnormal times 2^100 would show as 1e-9; every
    // other product and sum is exact.
    for level in levels() {
        let (m, n, k) = (3, 40, 5);
        let scale = 2f32.powi(100);
        let a = vec![scale; m * k];
        let mut b: Vec<f32> = (0..k * n).map(|i| (i % 7) as f32 - 3.0).collect();
        // Column 17 is zero but for the subnormal, so nothing hides it.
        for p in 0..k {
            b[p * n + 17] = 0.0;
        }
        b[2 * n + 17] = 1e-39;
        let mut c = vec![f32::NAN; m * n];
        row_major_f32(m, n, k, &a, &b, &mut c, level);
        for j in 0..n {
            let exact: f64 = (0..k)
                .map(|p| {
                    let x = b[p * n + j];
                    scale as f64 * if x.is_subnormal() { 0.0 } else { x as f64 }
                })
                .sum();
            for i in 0..m {
                assert_eq!(c[i * n + j] as f64, exact, "{level} C[{i},{j}]");
            }
        }
    }
}

#[test]
fn subnormals_in_a_column_major_rhs_are_flushed() {
    // `x · wᵀ` with w row-major is a column-major rhs, packed by register
    // tiles and then flushed: panels of whole and partial width, k off the
    // 8-row tiles. A subnormal times 2^100 would show as 1e-9; every other
    // product and sum is exact.
    for level in levels() {
        for &(m, n, k) in &[(3, 40, 5), (16, 128, 256), (5, 19, 37)] {
            let scale = 2f32.powi(100);
            let a = vec![scale; m * k];
            // B[p][j] at p + j·k (column-major).
            let mut b: Vec<f32> = (0..k * n).map(|i| (i % 7) as f32 - 3.0).collect();
            let col = n / 2 + 1;
            b[col * k..(col + 1) * k].fill(0.0);
            b[col * k + k / 2] = 1e-39;
            let mut c = vec![f32::NAN; m * n];
            let options = Options {
                accumulate: false,
                parallel: false,
                level: Some(level),
            };
            let av = Strided {
                ptr: a.as_ptr(),
                rs: k as isize,
                cs: 1,
            };
            let bv = Strided {
                ptr: b.as_ptr(),
                rs: 1,
                cs: k as isize,
            };
            let cv = StridedMut {
                ptr: c.as_mut_ptr(),
                rs: n as isize,
                cs: 1,
            };
            // SAFETY: the matrices are valid for their extents and distinct.
            unsafe { gemm(m, n, k, av, bv, cv, options) };
            for j in 0..n {
                let exact: f64 = (0..k)
                    .map(|p| {
                        let x = b[p + j * k];
                        scale as f64 * if x.is_subnormal() { 0.0 } else { x as f64 }
                    })
                    .sum();
                for i in 0..m {
                    assert_eq!(c[i * n + j] as f64, exact, "{level} {m}x{n}x{k} C[{i},{j}]");
                }
            }
        }
    }
}

/// A row-major product whose lhs row `row` is zero but for a subnormal at
/// column `col`, times a rhs of 2^100 (which would show the subnormal as
/// about 1e-9): every result must be exact, the subnormal counted as zero.
fn check_lhs_subnormal_flushed(m: usize, n: usize, k: usize, row: usize, col: usize) {
    for level in levels() {
        let scale = 2f32.powi(100);
        let mut a: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 - 2.0).collect();
        a[row * k..(row + 1) * k].fill(0.0);
        a[row * k + col] = 1e-39;
        let b = vec![scale; k * n];
        let mut c = vec![f32::NAN; m * n];
        row_major_f32(m, n, k, &a, &b, &mut c, level);
        for i in 0..m {
            let exact: f64 = (0..k)
                .map(|p| {
                    let x = a[i * k + p];
                    scale as f64 * if x.is_subnormal() { 0.0 } else { x as f64 }
                })
                .sum();
            for j in 0..n {
                assert_eq!(c[i * n + j] as f64, exact, "{level} {m}x{n}x{k} C[{i},{j}]");
            }
        }
    }
}

#[test]
fn subnormals_in_a_lhs_read_in_place_are_flushed() {
    // Many rows against a one-panel rhs: the lhs is read in place, except in
    // a block holding a subnormal, which is packed (and flushed) instead.
    check_lhs_subnormal_flushed(40, 16, 9, 17, 4);
}

#[test]
fn matrix_vector_products() {
    // m = 1 or n = 1 take the matrix-vector kernels: both matrix
    // orientations, tails of the 4-row and 4-vector runs, padded and strided
    // vectors, accumulation, and sizes that split over the pool.
    let mut rng = Rng(5);
    for level in levels() {
        for &(rows, k) in &[(2, 2), (3, 9), (5, 33), (67, 70), (130, 257), (1000, 300)] {
            for (lm, lv) in [
                (Layout::RowMajor, Layout::RowMajor),
                (Layout::ColMajor, Layout::RowMajor),
                (Layout::Padded, Layout::Sparse),
                (Layout::ColMajor, Layout::Padded),
            ] {
                for accumulate in [false, true] {
                    check::<f32>(rows, 1, k, lm, lv, lv, accumulate, true, level, &mut rng);
                    check::<f64>(1, rows, k, lv, lm, lv, accumulate, true, level, &mut rng);
                }
            }
        }
    }
}

#[test]
fn matrix_vector_subnormals_are_flushed() {
    // A subnormal times 2^100 would show as about 1e-9 (f32); flushed, every
    // product and sum below is exact.
    for level in levels() {
        for (m, n, k) in [(70, 1, 40), (1, 70, 40)] {
            let scale = 2f32.powi(100);
            let mut a: Vec<f32> = (0..m * k).map(|i| (i % 5) as f32 - 2.0).collect();
            let mut b: Vec<f32> = (0..k * n).map(|i| (i % 3) as f32 - 1.0).collect();
            // The matrix holds subnormals, the vector 2^100 where they meet.
            let (mat, vec) = if n == 1 {
                (&mut a, &mut b)
            } else {
                (&mut b, &mut a)
            };
            for (i, v) in mat.iter_mut().enumerate() {
                if i % 11 == 3 {
                    *v = 1e-39;
                }
            }
            for v in vec.iter_mut() {
                *v *= scale;
            }
            vec[7] = 1e-40;
            let mut c = vec![f32::NAN; m * n];
            row_major_f32(m, n, k, &a, &b, &mut c, level);
            let f = |x: f32| if x.is_subnormal() { 0.0 } else { x as f64 };
            for i in 0..m {
                for j in 0..n {
                    let exact: f64 = (0..k).map(|p| f(a[i * k + p]) * f(b[p * n + j])).sum();
                    assert_eq!(c[i * n + j] as f64, exact, "{level} {m}x{n}x{k} C[{i},{j}]");
                }
            }
        }
    }
}

#[test]
fn complex_matrix_vector_products() {
    // Interleaved (re, im) pairs; both matrix orientations, odd sizes
    // (tails of the vector runs), strided vectors, f32 and f64.
    fn run<T: TestElem>(level: Level, rng: &mut Rng) {
        for &(rows, k) in &[(2, 2), (3, 5), (17, 9), (67, 33), (300, 130)] {
            for mat_rows_contiguous in [true, false] {
                for n_is_one in [true, false] {
                    let mat: Vec<T> = (0..2 * rows * k).map(|_| T::from_f64(rng.unit())).collect();
                    // x with a stride of 3 complex elements.
                    let x: Vec<T> = (0..6 * k).map(|_| T::from_f64(rng.unit())).collect();
                    let mut y = vec![T::from_f64(f64::NAN); 4 * rows];
                    // M[i][p] in complex units.
                    let (mrs, mcs) = if mat_rows_contiguous {
                        (k, 1)
                    } else {
                        (1, rows)
                    };
                    let m_at = |i: usize, p: usize| 2 * (i * mrs + p * mcs);
                    let mv = Strided {
                        ptr: mat.as_ptr(),
                        rs: mrs as isize,
                        cs: mcs as isize,
                    };
                    let ok = if n_is_one {
                        // C (rows × 1) = M · x, C at stride 2.
                        let xv = Strided {
                            ptr: x.as_ptr(),
                            rs: 3,
                            cs: 1,
                        };
                        let cv = StridedMut {
                            ptr: y.as_mut_ptr(),
                            rs: 2,
                            cs: 1,
                        };
                        // SAFETY: valid views of the buffers.
                        unsafe { try_gemv_complex(rows, 1, k, mv, xv, cv, Some(level)) }
                    } else {
                        // C (1 × rows) = xᵀ · Mᵀ.
                        let xv = Strided {
                            ptr: x.as_ptr(),
                            rs: 1,
                            cs: 3,
                        };
                        let mt = Strided {
                            ptr: mat.as_ptr(),
                            rs: mcs as isize,
                            cs: mrs as isize,
                        };
                        let cv = StridedMut {
                            ptr: y.as_mut_ptr(),
                            rs: 1,
                            cs: 2,
                        };
                        // SAFETY: as above.
                        unsafe { try_gemv_complex(1, rows, k, xv, mt, cv, Some(level)) }
                    };
                    assert!(ok);
                    for i in 0..rows {
                        let (mut re, mut im, mut mag) = (0.0, 0.0, 0.0);
                        for p in 0..k {
                            let (ar, ai) = (mat[m_at(i, p)].to_f64(), mat[m_at(i, p) + 1].to_f64());
                            let (xr, xi) = (x[6 * p].to_f64(), x[6 * p + 1].to_f64());
                            re += ar * xr - ai * xi;
                            im += ar * xi + ai * xr;
                            mag += (ar.abs() + ai.abs()) * (xr.abs() + xi.abs());
                        }
                        let tol = 4.0 * (k as f64 + 2.0) * T::EPS * mag;
                        let (gr, gi) = (y[4 * i].to_f64(), y[4 * i + 1].to_f64());
                        assert!(
                            (gr - re).abs() <= tol && (gi - im).abs() <= tol,
                            "{level} {rows}x{k} rows_contiguous={mat_rows_contiguous} n1={n_is_one}: \
                             y[{i}] = ({gr}, {gi}), expected ({re}, {im})"
                        );
                        assert!(y[4 * i + 2].to_f64().is_nan(), "wrote between outputs");
                    }
                }
            }
        }
    }
    let mut rng = Rng(9);
    for level in levels() {
        run::<f32>(level, &mut rng);
        run::<f64>(level, &mut rng);
    }
}

#[test]
fn narrow_products() {
    // 2 to 8 columns, many rows, lhs rows contiguous and at least a vector
    // long: the row-dot kernel (`narrow`), with the row blocks' tails, the
    // vector tails of k, every rhs and output layout, accumulation, and
    // sizes that split over the pool.
    let mut rng = Rng(9);
    for level in levels() {
        for &(m, n, k) in &[
            (9, 2, 16),
            (70, 3, 33),
            (131, 5, 64),
            (65, 7, 17),
            (1000, 8, 300),
        ] {
            for (la, lb, lc) in [
                (Layout::RowMajor, Layout::RowMajor, Layout::RowMajor),
                (Layout::Padded, Layout::ColMajor, Layout::Padded),
                (Layout::RowMajor, Layout::Sparse, Layout::Sparse),
            ] {
                for accumulate in [false, true] {
                    check::<f32>(m, n, k, la, lb, lc, accumulate, true, level, &mut rng);
                    check::<f64>(m, n, k, la, lb, lc, accumulate, true, level, &mut rng);
                }
            }
        }
    }
}

#[test]
fn narrow_product_subnormals_are_flushed() {
    // The row-dot kernel: the block of rows holding the subnormal is copied
    // flushed, the others read in place.
    check_lhs_subnormal_flushed(200, 3, 40, 130, 21);
}

#[test]
fn narrow_products_sum_their_runs() {
    // The lhs as three runs of columns read from different places of one
    // buffer, overlapping rows (a convolution's shifted windows), lengths
    // with and without a vector tail.
    let mut rng = Rng(10);
    for level in levels() {
        let (m, n) = (77, 4);
        let data: Vec<f64> = (0..m * 8 + 200).map(|_| rng.unit()).collect();
        let runs = [(0usize, 24usize), (50, 7), (9, 33)];
        let k: usize = runs.iter().map(|r| r.1).sum();
        let b: Vec<f64> = (0..k * n).map(|_| rng.unit()).collect();
        let lhs: Vec<narrow::LhsRun<f64>> = runs
            .iter()
            .map(|&(at, len)| narrow::LhsRun {
                a: data[at..].as_ptr(),
                rs: 8,
                len,
            })
            .collect();
        let mut c = vec![f64::NAN; m * n];
        let bv = Strided {
            ptr: b.as_ptr(),
            rs: n as isize,
            cs: 1,
        };
        let cv = StridedMut {
            ptr: c.as_mut_ptr(),
            rs: n as isize,
            cs: 1,
        };
        // SAFETY: every run's rows lie in `data` (77·8 + 50 + 33 < its
        // length); b and c hold their extents.
        unsafe { narrow::narrow(m, n, &lhs, bv, cv, false, true, true, Some(level)) };
        for i in 0..m {
            for j in 0..n {
                let (mut exact, mut mag, mut p) = (0.0, 0.0, 0);
                for &(at, len) in &runs {
                    for q in 0..len {
                        let prod = data[at + i * 8 + q] * b[p * n + j];
                        exact += prod;
                        mag += f64::abs(prod);
                        p += 1;
                    }
                }
                let got = c[i * n + j];
                let tol = 2.0 * (k as f64 + 2.0) * f64::EPSILON * mag;
                assert!(
                    (got - exact).abs() <= tol,
                    "{level} C[{i},{j}] = {got}, want {exact}"
                );
            }
        }
    }
}
