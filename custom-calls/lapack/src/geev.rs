//! geev: eigenvalues and right eigenvectors of a general square matrix.
//!
//! The order of the eigenvalues is whatever the Schur form gives (LAPACK's and
//! faer's need not agree; programs sort or use them as a set). Each right
//! eigenvector is normalized as LAPACK does: Euclidean norm 1, its entry of
//! largest magnitude real. Left eigenvectors (`compute_left = 'V'`) are not
//! implemented.

use crate::{batched, char_choice, expect_result_dims, load, square_dims, Elem};
use faer::linalg::solvers::Eigen;
use faer::MatRef;
use num_complex::Complex;
use num_traits::{Float, Zero};
use platform_api::custom_call::CallFrame;
use platform_api::{Error, Result};

/// Checks the attributes and the shapes of `a` and of the results from
/// `n_values` on (`vl`, `vr`, `info`; the eigenvalue results come before
/// them, `[..., n]` each); returns the batch count, `n` and whether right
/// eigenvectors are wanted.
fn check_call(frame: &CallFrame<'_>, n_values: usize) -> Result<(usize, usize, bool)> {
    let left = char_choice(frame, "compute_left", b"NV")?;
    let right = char_choice(frame, "compute_right", b"NV")? == b'V';
    if left == b'V' {
        return Err(Error::unimplemented(format!(
            "custom-call %{} (target \"{}\"): left eigenvectors (compute_left = 'V') are not implemented",
            frame.instruction(),
            frame.target()
        )));
    }
    let (batch, n) = square_dims(frame, "geev")?;
    let dims = frame.arg(0)?.dims().to_vec();
    for i in 0..n_values {
        expect_result_dims(frame, i, &batched(&dims, &[n]))?;
    }
    // vl is only cleared; vr is written when asked for.
    if right {
        expect_result_dims(frame, n_values + 1, &dims)?;
    }
    expect_result_dims(frame, n_values + 2, &batched(&dims, &[]))?;
    Ok((batch, n, right))
}

/// Writes `u`'s columns, normalized, as matrix `b` of `out`.
fn write_right<R: Float>(u: MatRef<'_, Complex<R>>, out: &mut [Complex<R>], b: usize) {
    let n = u.nrows();
    let base = b * n * n;
    for j in 0..n {
        let mut big = 0;
        let mut big_abs = R::zero();
        let mut norm2 = R::zero();
        for i in 0..n {
            let v = u[(i, j)];
            let a = v.norm();
            norm2 = norm2 + v.norm_sqr();
            if a > big_abs {
                big_abs = a;
                big = i;
            }
        }
        let norm = norm2.sqrt();
        let phase = if big_abs > R::zero() {
            u[(big, j)].conj() / big_abs
        } else {
            Complex::new(R::one(), R::zero())
        };
        let scale = if norm > R::zero() {
            R::one() / norm
        } else {
            R::one()
        };
        for i in 0..n {
            let mut v = u[(i, j)] * phase * scale;
            if i == big {
                v.im = R::zero();
            }
            out[base + i * n + j] = v;
        }
    }
}

/// Real `(a) -> (wr, wi, vl, vr, info)`.
pub(crate) fn geev_real<T>(frame: &mut CallFrame<'_>) -> Result<()>
where
    T: faer::traits::RealField + platform_api::NativeType + Float,
    Complex<T>: platform_api::NativeType,
{
    frame.expect_counts(1, 5)?;
    let (batch, n, right) = check_call(frame, 2)?;
    let a = frame.arg_data::<T>(0)?;
    let wr = frame.result_data::<T>(0)?;
    let wi = frame.result_data::<T>(1)?;
    let vl = frame.result_data::<Complex<T>>(2)?;
    let vr = frame.result_data::<Complex<T>>(3)?;
    let info = frame.result_data::<i32>(4)?;
    vl.fill(Complex::zero());
    vr.fill(Complex::zero());
    if n == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    for b in 0..batch {
        // Not `load`: a real `T` here is not known to be an `Elem`.
        let m = faer::Mat::<T>::from_fn(n, n, |i, j| a[b * n * n + i * n + j]);
        let Ok(evd) = Eigen::<T>::new_from_real(m.as_ref()) else {
            info[b] = 1;
            continue;
        };
        info[b] = 0;
        for i in 0..n {
            let w = evd.S()[i];
            wr[b * n + i] = w.re;
            wi[b * n + i] = w.im;
        }
        if right {
            write_right(evd.U(), vr, b);
        }
    }
    Ok(())
}

/// Complex `(a) -> (w, vl, vr, info)`.
pub(crate) fn geev_complex<T>(frame: &mut CallFrame<'_>) -> Result<()>
where
    T: Float + faer::traits::RealField,
    Complex<T>: Elem<R = T>,
{
    frame.expect_counts(1, 4)?;
    let (batch, n, right) = check_call(frame, 1)?;
    let a = frame.arg_data::<Complex<T>>(0)?;
    let w = frame.result_data::<Complex<T>>(0)?;
    let vl = frame.result_data::<Complex<T>>(1)?;
    let vr = frame.result_data::<Complex<T>>(2)?;
    let info = frame.result_data::<i32>(3)?;
    vl.fill(Complex::zero());
    vr.fill(Complex::zero());
    if n == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    for b in 0..batch {
        let m = load(a, b, n, n);
        let Ok(evd) = Eigen::<T>::new(m.as_ref()) else {
            info[b] = 1;
            continue;
        };
        info[b] = 0;
        for i in 0..n {
            w[b * n + i] = evd.S()[i];
        }
        if right {
            write_right(evd.U(), vr, b);
        }
    }
    Ok(())
}
