//! geqrf (Householder QR) and orgqr / ungqr (Q from the reflectors).
//!
//! LAPACK's storage: after `geqrf`, `R` is on and above the diagonal and
//! reflector `i`'s vector `v_i` (with an implicit `v_i[i] = 1`) below the
//! diagonal of column `i`; `H_i = I - tau_i v_i v_i^H` and
//! `Q = H_0 H_1 ... H_{k-1}`. Each `beta` (the diagonal of `R`) is real, of the
//! opposite sign to the real part of the column's leading entry.

use crate::{batched, expect_result_dims, load, matrix_dims, store, with_stack, Elem, PAR};
use faer::linalg::qr::no_pivoting::factor::{qr_in_place, qr_in_place_scratch};
use faer::{ColRef, Mat, MatMut};
use num_traits::{Float, Zero};
use platform_api::custom_call::CallFrame;
use platform_api::Result;

/// `(a) -> (a_out, tau)`.
pub(crate) fn geqrf<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 2)?;
    let dims = frame.arg(0)?.dims().to_vec();
    let (batch, m, n) = matrix_dims(frame, &dims)?;
    let k = m.min(n);
    expect_result_dims(frame, 0, &dims)?;
    expect_result_dims(frame, 1, &batched(&dims, &[k]))?;
    let a = frame.arg_data::<T>(0)?;
    let out = frame.result_data::<T>(0)?;
    let tau = frame.result_data::<T>(1)?;
    if k == 0 {
        // Empty matrices (or none): nothing to factor.
        return Ok(());
    }
    for b in 0..batch {
        let mut qr = load(a, b, m, n);
        let taus = &mut tau[b * k..(b + 1) * k];
        if T::COMPLEX {
            householder_qr_lapack(qr.as_mut(), taus);
        } else {
            householder_qr_faer(qr.as_mut(), taus);
        }
        store(qr.as_ref(), out, b);
    }
    Ok(())
}

/// Real QR by faer. faer's reflectors are LAPACK's (same vectors, same
/// `beta`); its coefficient is `1 / tau` (infinite where LAPACK's `tau` is 0).
fn householder_qr_faer<T: Elem>(a: MatMut<'_, T>, tau: &mut [T]) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    if k == 0 {
        return;
    }
    let mut coeff = Mat::<T>::zeros(1, k);
    let req = qr_in_place_scratch::<T>(m, n, 1, PAR, Default::default());
    with_stack(req, |stack| {
        qr_in_place(a, coeff.as_mut(), PAR, stack, Default::default());
    });
    for (i, t) in tau.iter_mut().enumerate() {
        let c = coeff[(0, i)];
        *t = if c.re_part().is_finite() && c != T::zero_() {
            T::one_() / c
        } else {
            T::zero_()
        };
    }
}

/// QR with LAPACK's complex reflectors (real `beta`, complex `tau`), which
/// faer's (complex `beta`, real coefficient) are not: each column's reflector
/// is made as LAPACK's `?larfg` makes it and applied to the columns right of
/// it as `H^H`.
fn householder_qr_lapack<T: Elem>(mut a: MatMut<'_, T>, tau: &mut [T]) {
    let m = a.nrows();
    for (i, t) in tau.iter_mut().enumerate() {
        let alpha = a[(i, i)];
        let mut xnorm2 = T::R::zero();
        for r in i + 1..m {
            let x = a[(r, i)];
            xnorm2 = xnorm2 + x.re_part() * x.re_part() + x.im_part() * x.im_part();
        }
        let (ar, ai) = (alpha.re_part(), alpha.im_part());
        if xnorm2 == T::R::zero() && ai == T::R::zero() {
            *t = T::zero_();
            continue;
        }
        let norm = (ar * ar + ai * ai + xnorm2).sqrt();
        let beta = if ar >= T::R::zero() { -norm } else { norm };
        *t = T::from_parts((beta - ar) / beta, -ai / beta);
        let scal = T::one_() / (alpha - T::from_parts(beta, T::R::zero()));
        for r in i + 1..m {
            a[(r, i)] *= scal;
        }
        a[(i, i)] = T::from_parts(beta, T::R::zero());
        // A[i.., j] -= conj(tau) v (v^H A[i.., j]) for the columns to the right.
        let (left, right) = a.as_mut().split_at_col_mut(i + 1);
        let v = left.as_ref().col(i);
        apply_reflector(v, i, t.cj(), right);
    }
}

/// Applies `I - t v v^H` to every column of `x`, where the reflector `v` is
/// 1 at row `i`, `v[r]` below it and 0 above (only rows `i..` of `x` change).
fn apply_reflector<T: Elem>(v: ColRef<'_, T>, i: usize, t: T, mut x: MatMut<'_, T>) {
    let m = x.nrows();
    for j in 0..x.ncols() {
        let mut w = x[(i, j)];
        for r in i + 1..m {
            w += v[r].cj() * x[(r, j)];
        }
        let w = t * w;
        x[(i, j)] -= w;
        for r in i + 1..m {
            x[(r, j)] -= v[r] * w;
        }
    }
}

/// `(a, tau) -> q`: the first `n` columns of `H_0 ... H_{k-1}`, with the
/// reflectors stored in `a` as geqrf leaves them.
pub(crate) fn orgqr<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(2, 1)?;
    let dims = frame.arg(0)?.dims().to_vec();
    let (batch, m, n) = matrix_dims(frame, &dims)?;
    let tau_dims = frame.arg(1)?.dims();
    let k = match tau_dims.last() {
        Some(&k) if tau_dims == batched(&dims, &[k]) => k,
        _ => {
            return Err(frame.error(format!(
                "orgqr takes tau[..., k] with the batch of a {dims:?}; got tau {tau_dims:?}"
            )))
        }
    };
    if k > n || n > m {
        return Err(frame.error(format!(
            "orgqr needs k <= n <= m; got m = {m}, n = {n}, k = {k}"
        )));
    }
    expect_result_dims(frame, 0, &dims)?;
    let a = frame.arg_data::<T>(0)?;
    let tau = frame.arg_data::<T>(1)?;
    let out = frame.result_data::<T>(0)?;
    if n == 0 {
        // Empty matrices (or none): nothing to form.
        return Ok(());
    }
    for b in 0..batch {
        let v = load(a, b, m, n);
        let mut q = Mat::<T>::from_fn(m, n, |i, j| if i == j { T::one_() } else { T::zero_() });
        for i in (0..k).rev() {
            let t = tau[b * k + i];
            // Columns left of i are still unit vectors above row i: untouched.
            apply_reflector(v.col(i), i, t, q.as_mut().subcols_mut(i, n - i));
        }
        store(q.as_ref(), out, b);
    }
    Ok(())
}
