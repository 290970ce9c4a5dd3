//! syevd / heevd (symmetric / Hermitian eigendecomposition) and gesdd / gesvd
//! (singular value decomposition).

use crate::{
    batched, char_attr, char_choice, expect_result_dims, load, matrix_dims, sorted_order,
    square_dims, Elem,
};
use faer::linalg::solvers::{SelfAdjointEigen, Svd};
use faer::{Mat, MatRef, Side};
use platform_api::custom_call::CallFrame;
use platform_api::{Error, Result};

/// `(a) -> (v, w, info)` with attributes `mode` ('V' vectors too, 'N' values
/// only) and `uplo` (the triangle of `a` that is read). `w` holds the
/// eigenvalues ascending and column `j` of `v` the eigenvector of `w[j]`.
pub(crate) fn syevd<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 3)?;
    let mode = char_choice(frame, "mode", b"VN")?;
    let uplo = char_choice(frame, "uplo", b"LU")?;
    let (batch, n) = square_dims(frame, "syevd")?;
    let dims = frame.arg(0)?.dims().to_vec();
    expect_result_dims(frame, 0, &dims)?;
    expect_result_dims(frame, 1, &batched(&dims, &[n]))?;
    expect_result_dims(frame, 2, &batched(&dims, &[]))?;
    let a = frame.arg_data::<T>(0)?;
    let out = frame.result_data::<T>(0)?;
    let w = frame.result_data::<T::R>(1)?;
    let info = frame.result_data::<i32>(2)?;
    out.copy_from_slice(a);
    if n == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    for b in 0..batch {
        let input = load(a, b, n, n);
        // The Hermitian matrix the `uplo` triangle stands for (LAPACK reads
        // only that triangle and the real part of the diagonal).
        let h = Mat::<T>::from_fn(n, n, |i, j| {
            let lower = (i >= j) == (uplo == b'L');
            let v = if lower {
                input[(i, j)]
            } else {
                input[(j, i)].cj()
            };
            if i == j {
                T::from_parts(v.re_part(), num_traits::Zero::zero())
            } else {
                v
            }
        });
        let evd = match SelfAdjointEigen::new(h.as_ref(), Side::Lower) {
            Ok(evd) => evd,
            Err(_) => {
                info[b] = 1;
                continue;
            }
        };
        info[b] = 0;
        let values: Vec<T::R> = (0..n).map(|i| evd.S()[i].re_part()).collect();
        let order = sorted_order(&values, false);
        for (j, &src) in order.iter().enumerate() {
            w[b * n + j] = values[src];
        }
        if mode == b'V' {
            let u = evd.U();
            let base = b * n * n;
            for i in 0..n {
                for (j, &src) in order.iter().enumerate() {
                    out[base + i * n + j] = u[(i, src)];
                }
            }
        }
    }
    Ok(())
}

/// `(a) -> (a_out, s, u, vt, info)` with attribute `mode`: 'A' full `u`
/// (`m x m`) and `vt` (`n x n`), 'S' thin (`m x k`, `k x n`), 'N' singular
/// values only (`u` and `vt` are left as zeros). `s` is descending and
/// `a = u diag(s) vt`.
pub(crate) fn gesdd<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 5)?;
    if char_attr(frame, "mode")? == b'O' {
        return Err(Error::unimplemented(format!(
            "custom-call %{} (target \"{}\"): mode 'O' (u overwriting a) is not implemented",
            frame.instruction(),
            frame.target()
        )));
    }
    let mode = char_choice(frame, "mode", b"ASN")?;
    let dims = frame.arg(0)?.dims().to_vec();
    let (batch, m, n) = matrix_dims(frame, &dims)?;
    let k = m.min(n);
    // u is um x un and vt vm x vn; with mode 'N' they are not written.
    let (um, un, vm, vn) = match mode {
        b'A' => (m, m, n, n),
        b'S' => (m, k, k, n),
        _ => (0, 0, 0, 0),
    };
    expect_result_dims(frame, 0, &dims)?;
    expect_result_dims(frame, 1, &batched(&dims, &[k]))?;
    if mode != b'N' {
        expect_result_dims(frame, 2, &batched(&dims, &[um, un]))?;
        expect_result_dims(frame, 3, &batched(&dims, &[vm, vn]))?;
    }
    expect_result_dims(frame, 4, &batched(&dims, &[]))?;
    let a = frame.arg_data::<T>(0)?;
    let out = frame.result_data::<T>(0)?;
    let s = frame.result_data::<T::R>(1)?;
    let u_out = frame.result_data::<T>(2)?;
    let vt_out = frame.result_data::<T>(3)?;
    let info = frame.result_data::<i32>(4)?;
    out.copy_from_slice(a);
    u_out.fill(T::zero_());
    vt_out.fill(T::zero_());
    if k == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    for b in 0..batch {
        let input = load(a, b, m, n);
        let svd = match mode {
            b'A' => Svd::new(input.as_ref()),
            b'S' => Svd::new_thin(input.as_ref()),
            _ => {
                match input.as_ref().singular_values() {
                    Ok(mut values) => {
                        values
                            .sort_by(|x, y| y.partial_cmp(x).unwrap_or(std::cmp::Ordering::Equal));
                        s[b * k..(b + 1) * k].copy_from_slice(&values);
                        info[b] = 0;
                    }
                    Err(_) => info[b] = 1,
                }
                continue;
            }
        };
        let Ok(svd) = svd else {
            info[b] = 1;
            continue;
        };
        info[b] = 0;
        let values: Vec<T::R> = (0..k).map(|i| svd.S()[i].re_part()).collect();
        let order = sorted_order(&values, true);
        for (j, &src) in order.iter().enumerate() {
            s[b * k + j] = values[src];
        }
        write_vectors(svd.U(), &order, un, &mut u_out[b * um * un..], false);
        write_vectors(svd.V(), &order, vn, &mut vt_out[b * vm * vn..], true);
    }
    Ok(())
}

/// Writes the singular vectors of `x` (one per column), the first `k` in the
/// order `order` gives, the rest as they are; as columns of a matrix with
/// `cols` columns, or (`adjoint`) conjugated as its rows.
fn write_vectors<T: Elem>(
    x: MatRef<'_, T>,
    order: &[usize],
    cols: usize,
    out: &mut [T],
    adjoint: bool,
) {
    let count = x.ncols();
    let src = |j: usize| if j < order.len() { order[j] } else { j };
    for j in 0..count {
        let c = src(j);
        for i in 0..x.nrows() {
            let v = x[(i, c)];
            if adjoint {
                out[j * cols + i] = v.cj();
            } else {
                out[i * cols + j] = v;
            }
        }
    }
}
