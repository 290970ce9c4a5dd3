//! XLA CPU's LAPACK custom-call targets, on the `faer` linear-algebra crate.
//!
//! JAX lowers `jnp.linalg` and `jax.scipy.linalg` for CPU to custom calls with
//! the typed FFI (`api_version=API_VERSION_TYPED_FFI`) whose targets XLA CPU
//! registers from LAPACK: `lapack_?getrf_ffi` (LU with partial pivoting),
//! `lapack_?potrf_ffi` (Cholesky), `lapack_?geqrf_ffi` (Householder QR),
//! `lapack_?orgqr_ffi` / `lapack_?ungqr_ffi` (Q from the reflectors),
//! `lapack_?syevd_ffi` / `lapack_?heevd_ffi` (symmetric / Hermitian
//! eigendecomposition), `lapack_?gesdd_ffi` and `lapack_?gesvd_ffi` (SVD),
//! `lapack_?trsm_ffi` (triangular solve) and `lapack_?geev_ffi` (general
//! eigenproblem, right eigenvectors), each for `s`, `d`, `c` and `z`
//! (f32, f64, c64, c128). This crate registers all of them for the
//! "Interpreter" and "Host" platforms with the workspace's static registration
//! (`register_custom_call!`), so linking it (`use xla_lapack as _;`) is enough.
//!
//! The numerical work is faer's: `lu_in_place` for getrf, `cholesky_in_place`
//! for potrf, `qr_in_place` for real geqrf, `SelfAdjointEigen` for syevd,
//! `Svd` for gesdd, the triangular solvers for trsm and `Eigen` for geev
//! (whose eigenvalue order is faer's, not necessarily LAPACK's). What this crate adds is
//! LAPACK's output conventions, exactly as JAX consumes them: the LU packed in
//! place with 1-based `int32` row interchanges (`ipiv`, LAPACK's sequence of
//! swaps, recovered from faer's permutation) and `info` naming the first zero
//! pivot; potrf touching only the `uplo` triangle and reporting the first
//! non-positive pivot in `info`; geqrf's reflectors stored below the diagonal
//! with a unit leading entry and LAPACK's `tau` (faer's real Householder
//! coefficient is its reciprocal; for complex matrices LAPACK makes each `beta`
//! real, which faer does not, so complex geqrf generates LAPACK's reflectors
//! itself and applies them column by column); eigenvalues ascending and
//! singular values descending, with the vectors permuted along; `vt` as `V^H`.
//!
//! Buffers: the typed API hands handlers logical row-major arrays whatever
//! layout the HLO names (JAX asks for column-major matrices,
//! `operand_layout_constraints={f32[2,3,3]{1,2,0}}`; the platform converts).
//! Leading dimensions are batch dimensions; each matrix is copied into a faer
//! `Mat`, factored, and written back. Two places use direct loops instead of
//! faer because faer's algorithms do not give LAPACK's answer there: an LU that
//! meets an exactly zero pivot column (faer divides by it and fills the rest
//! with NaN; LAPACK skips the column and goes on), and forming Q from
//! reflectors (a product of rank-one updates).

// Batched matrices are walked by index; iterators would hide the layout.
#![allow(clippy::needless_range_loop)]

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Mat, Par};
use num_traits::Float;
use platform_api::custom_call::CallFrame;
use platform_api::{NativeType, Result};
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

mod eig;
mod geev;
mod lu;
mod qr;
mod trsm;

/// An element type LAPACK has a variant for (s, d, c, z).
pub(crate) trait Elem:
    faer::traits::ComplexField<Real = <Self as Elem>::R>
    + NativeType
    + Copy
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// The real type (eigenvalues, singular values).
    type R: faer::traits::RealField + NativeType + Float;
    const COMPLEX: bool;
    fn re_part(self) -> Self::R;
    fn im_part(self) -> Self::R;
    /// `re + i im`; `im` is dropped for a real type.
    fn from_parts(re: Self::R, im: Self::R) -> Self;
    fn cj(self) -> Self;
    /// `|re| + |im|`, the magnitude LAPACK pivots by.
    fn l1(self) -> Self::R {
        self.re_part().abs() + self.im_part().abs()
    }
    fn zero_() -> Self {
        Self::from_parts(
            <Self::R as num_traits::Zero>::zero(),
            <Self::R as num_traits::Zero>::zero(),
        )
    }
    fn one_() -> Self {
        Self::from_parts(
            <Self::R as num_traits::One>::one(),
            <Self::R as num_traits::Zero>::zero(),
        )
    }
}

macro_rules! real_elem {
    ($t:ty) => {
        impl Elem for $t {
            type R = $t;
            const COMPLEX: bool = false;
            fn re_part(self) -> $t {
                self
            }
            fn im_part(self) -> $t {
                0.0
            }
            fn from_parts(re: $t, _im: $t) -> $t {
                re
            }
            fn cj(self) -> $t {
                self
            }
        }
    };
}
macro_rules! complex_elem {
    ($t:ty) => {
        impl Elem for num_complex::Complex<$t> {
            type R = $t;
            const COMPLEX: bool = true;
            fn re_part(self) -> $t {
                self.re
            }
            fn im_part(self) -> $t {
                self.im
            }
            fn from_parts(re: $t, im: $t) -> Self {
                num_complex::Complex::new(re, im)
            }
            fn cj(self) -> Self {
                self.conj()
            }
        }
    };
}
real_elem!(f32);
real_elem!(f64);
complex_elem!(f32);
complex_elem!(f64);

/// A `u8` attribute holding a LAPACK character (`uplo = 76 : ui8` is 'L').
pub(crate) fn char_attr(frame: &CallFrame<'_>, name: &str) -> Result<u8> {
    let v: u8 = frame.attributes().get(name)?;
    Ok(v.to_ascii_uppercase())
}

/// Batch count and matrix dimensions of a `[batch..., rows, cols]` array; an
/// error for a rank below 2 or dimensions whose element count overflows.
pub(crate) fn matrix_dims(frame: &CallFrame<'_>, dims: &[usize]) -> Result<(usize, usize, usize)> {
    let [batch @ .., m, n] = dims else {
        return Err(frame.error(format!(
            "expects a matrix (rank 2 or more) with leading batch dimensions; got dimensions {dims:?}"
        )));
    };
    let too_big = || frame.error(format!("dimensions {dims:?} are too large"));
    let batch = batch
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(too_big)?;
    // Checked apart so that `m * n` cannot overflow even where `batch` is 0.
    let per_matrix = m.checked_mul(*n).ok_or_else(too_big)?;
    batch.checked_mul(per_matrix).ok_or_else(too_big)?;
    Ok((batch, *m, *n))
}

/// Batch count and order of argument 0, which `op` needs square.
pub(crate) fn square_dims(frame: &CallFrame<'_>, op: &str) -> Result<(usize, usize)> {
    let (batch, n, n2) = matrix_dims(frame, frame.arg(0)?.dims())?;
    if n != n2 {
        return Err(frame.error(format!("{op} needs square matrices; got {n}x{n2}")));
    }
    Ok((batch, n))
}

/// An error unless result `i` has dimensions `want`.
pub(crate) fn expect_result_dims(frame: &CallFrame<'_>, i: usize, want: &[usize]) -> Result<()> {
    let got = frame.result_shapes().get(i).map(|s| s.dims.as_slice());
    if got != Some(want) {
        return Err(frame.error(format!(
            "result {i} must have dimensions {want:?}; got {got:?}"
        )));
    }
    Ok(())
}

/// The batch dimensions of `dims` (all but the last two) followed by `tail`.
pub(crate) fn batched(dims: &[usize], tail: &[usize]) -> Vec<usize> {
    let batch = &dims[..dims.len().saturating_sub(2)];
    batch.iter().chain(tail).copied().collect()
}

/// An error unless `n` (a matrix dimension) fits LAPACK's `int32` indices, so
/// that a 1-based pivot or `info` up to `n` can be written `as i32`.
pub(crate) fn expect_lapack_int(frame: &CallFrame<'_>, n: usize) -> Result<()> {
    if i32::try_from(n).is_err() {
        return Err(frame.error(format!("dimension {n} does not fit LAPACK's int32 indices")));
    }
    Ok(())
}

/// [`char_attr`] `name`, which must be one of `allowed`.
pub(crate) fn char_choice(frame: &CallFrame<'_>, name: &str, allowed: &[u8]) -> Result<u8> {
    let c = char_attr(frame, name)?;
    if allowed.contains(&c) {
        return Ok(c);
    }
    let allowed: Vec<String> = allowed
        .iter()
        .map(|&a| format!("'{}'", a as char))
        .collect();
    Err(frame.error(format!(
        "attribute {name} must be {}; got {c} ({:?})",
        allowed.join(" or "),
        c as char
    )))
}

/// The order that sorts `values` ascending (or descending); NaNs compare equal.
pub(crate) fn sorted_order<R: PartialOrd>(values: &[R], descending: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&x, &y| {
        let (x, y) = if descending { (y, x) } else { (x, y) };
        values[x]
            .partial_cmp(&values[y])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    order
}

/// Matrix `b` of a row-major batch of `m x n` matrices as a faer matrix.
pub(crate) fn load<T: Elem>(data: &[T], b: usize, m: usize, n: usize) -> Mat<T> {
    let base = b * m * n;
    Mat::from_fn(m, n, |i, j| data[base + i * n + j])
}

/// Writes `mat` as matrix `b` of a row-major batch.
pub(crate) fn store<T: Elem>(mat: faer::MatRef<'_, T>, out: &mut [T], b: usize) {
    let (m, n) = (mat.nrows(), mat.ncols());
    let base = b * m * n;
    for i in 0..m {
        for j in 0..n {
            out[base + i * n + j] = mat[(i, j)];
        }
    }
}

/// Scratch memory for a faer routine.
pub(crate) fn with_stack<R>(
    req: faer::dyn_stack::StackReq,
    f: impl FnOnce(&mut MemStack) -> R,
) -> R {
    let mut buf = MemBuffer::new(req);
    f(MemStack::new(&mut buf))
}

pub(crate) const PAR: Par = Par::Seq;

/// Registers `$handler::<$t>` as `$name` for Interpreter and Host.
macro_rules! register {
    ($name:literal, $handler:ident, $t:ty) => {
        platform_api::register_custom_call!($name, "Interpreter", Typed($handler::<$t>));
        platform_api::register_custom_call!($name, "Host", Typed($handler::<$t>));
    };
}

/// Registers one operation for its four LAPACK variants.
macro_rules! register_sdcz {
    ($s:literal, $d:literal, $c:literal, $z:literal, $handler:path) => {
        const _: () = {
            use $handler as handler;
            register!($s, handler, f32);
            register!($d, handler, f64);
            register!($c, handler, num_complex::Complex<f32>);
            register!($z, handler, num_complex::Complex<f64>);
        };
    };
}

register_sdcz!(
    "lapack_sgetrf_ffi",
    "lapack_dgetrf_ffi",
    "lapack_cgetrf_ffi",
    "lapack_zgetrf_ffi",
    lu::getrf
);
register_sdcz!(
    "lapack_spotrf_ffi",
    "lapack_dpotrf_ffi",
    "lapack_cpotrf_ffi",
    "lapack_zpotrf_ffi",
    lu::potrf
);
register_sdcz!(
    "lapack_sgeqrf_ffi",
    "lapack_dgeqrf_ffi",
    "lapack_cgeqrf_ffi",
    "lapack_zgeqrf_ffi",
    qr::geqrf
);
register_sdcz!(
    "lapack_sorgqr_ffi",
    "lapack_dorgqr_ffi",
    "lapack_cungqr_ffi",
    "lapack_zungqr_ffi",
    qr::orgqr
);
register_sdcz!(
    "lapack_ssyevd_ffi",
    "lapack_dsyevd_ffi",
    "lapack_cheevd_ffi",
    "lapack_zheevd_ffi",
    eig::syevd
);
register_sdcz!(
    "lapack_sgesdd_ffi",
    "lapack_dgesdd_ffi",
    "lapack_cgesdd_ffi",
    "lapack_zgesdd_ffi",
    eig::gesdd
);
register_sdcz!(
    "lapack_sgesvd_ffi",
    "lapack_dgesvd_ffi",
    "lapack_cgesvd_ffi",
    "lapack_zgesvd_ffi",
    eig::gesdd
);
register_sdcz!(
    "lapack_strsm_ffi",
    "lapack_dtrsm_ffi",
    "lapack_ctrsm_ffi",
    "lapack_ztrsm_ffi",
    trsm::trsm
);

const _: () = {
    use geev::{geev_complex, geev_real};
    register!("lapack_sgeev_ffi", geev_real, f32);
    register!("lapack_dgeev_ffi", geev_real, f64);
    register!("lapack_cgeev_ffi", geev_complex, f32);
    register!("lapack_zgeev_ffi", geev_complex, f64);
};

/// The names of every target this crate registers (for each platform).
pub fn targets() -> Vec<String> {
    let mut out = Vec::new();
    for op in [
        "getrf", "potrf", "geqrf", "orgqr", "syevd", "gesdd", "gesvd", "trsm", "geev",
    ] {
        for p in ['s', 'd', 'c', 'z'] {
            let op = match (op, p) {
                ("orgqr", 'c' | 'z') => "ungqr",
                ("syevd", 'c' | 'z') => "heevd",
                _ => op,
            };
            out.push(format!("lapack_{p}{op}_ffi"));
        }
    }
    out
}
