//! getrf (LU with partial pivoting) and potrf (Cholesky).

use crate::{
    batched, char_choice, expect_lapack_int, expect_result_dims, load, matrix_dims, square_dims,
    store, with_stack, Elem, PAR,
};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltError, LltRegularization,
};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::{Mat, MatMut};
use num_traits::Zero;
use platform_api::custom_call::CallFrame;
use platform_api::Result;

/// `(a) -> (lu, ipiv, info)`: `lu` packs unit-lower `L` below the diagonal
/// and `U` on and above it; `ipiv[i]` (1-based) is the row swapped with row
/// `i` at step `i`; `info` is 0, or `i + 1` for the first `U[i, i]` that is
/// exactly zero.
pub(crate) fn getrf<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 3)?;
    let dims = frame.arg(0)?.dims().to_vec();
    let (batch, m, n) = matrix_dims(frame, &dims)?;
    let k = m.min(n);
    // Pivots name rows (up to m), info a column (up to k <= m).
    expect_lapack_int(frame, m)?;
    expect_result_dims(frame, 0, &dims)?;
    expect_result_dims(frame, 1, &batched(&dims, &[k]))?;
    expect_result_dims(frame, 2, &batched(&dims, &[]))?;
    let a = frame.arg_data::<T>(0)?;
    let out = frame.result_data::<T>(0)?;
    let ipiv = frame.result_data::<i32>(1)?;
    let info = frame.result_data::<i32>(2)?;
    if k == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    let req = lu_in_place_scratch::<usize, T>(m, n, PAR, Default::default());
    for b in 0..batch {
        let mut lu = load(a, b, m, n);
        let mut perm = vec![0usize; m];
        let mut perm_inv = vec![0usize; m];
        with_stack(req, |stack| {
            lu_in_place(
                lu.as_mut(),
                &mut perm,
                &mut perm_inv,
                PAR,
                stack,
                Default::default(),
            );
        });
        let piv = &mut ipiv[b * k..(b + 1) * k];
        let zero_pivot = (0..k).find(|&i| lu[(i, i)] == T::zero_());
        info[b] = match zero_pivot {
            None => {
                swaps_from_permutation(&perm, piv);
                0
            }
            // faer divided by the zero pivot; redo the factorization the way
            // LAPACK treats a zero pivot column.
            Some(_) => {
                lu = load(a, b, m, n);
                getrf_with_zero_pivots(lu.as_mut(), piv)
            }
        };
        store(lu.as_ref(), out, b);
    }
    Ok(())
}

/// LAPACK's sequence of row interchanges (1-based) that turns the identity
/// order into `perm` (`perm[i]` is the original row now at position `i`).
fn swaps_from_permutation(perm: &[usize], ipiv: &mut [i32]) {
    // at[p] is the original row at position p; pos[r] where original row r is.
    let mut at: Vec<usize> = (0..perm.len()).collect();
    let mut pos: Vec<usize> = (0..perm.len()).collect();
    for (i, p) in ipiv.iter_mut().enumerate() {
        let j = pos[perm[i]];
        *p = (j + 1) as i32;
        let (ri, rj) = (at[i], at[j]);
        at.swap(i, j);
        pos[ri] = j;
        pos[rj] = i;
    }
}

/// Right-looking LU with partial pivoting that, like LAPACK, leaves a column
/// whose candidates are all zero unscaled (nothing to eliminate) and reports
/// its 1-based index. Only used for exactly singular inputs, where faer's
/// blocked factorization divides by zero.
fn getrf_with_zero_pivots<T: Elem>(mut a: MatMut<'_, T>, ipiv: &mut [i32]) -> i32 {
    let (m, n) = (a.nrows(), a.ncols());
    let mut info = 0;
    for j in 0..m.min(n) {
        let mut p = j;
        let mut best = T::R::zero();
        for i in j..m {
            let v = a[(i, j)].l1();
            if v > best {
                best = v;
                p = i;
            }
        }
        ipiv[j] = (p + 1) as i32;
        if a[(p, j)] != T::zero_() {
            if p != j {
                for c in 0..n {
                    let t = a[(j, c)];
                    a[(j, c)] = a[(p, c)];
                    a[(p, c)] = t;
                }
            }
            let inv = T::one_() / a[(j, j)];
            for i in j + 1..m {
                a[(i, j)] *= inv;
            }
        } else if info == 0 {
            info = (j + 1) as i32;
        }
        for c in j + 1..n {
            let u = a[(j, c)];
            for i in j + 1..m {
                a[(i, c)] = a[(i, c)] - a[(i, j)] * u;
            }
        }
    }
    info
}

/// `(a) -> (factor, info)` with attribute `uplo`: 'L' gives `A = L L^H` in the
/// lower triangle, 'U' gives `A = U^H U` in the upper; the other triangle keeps
/// the input. `info` is `i + 1` for the first non-positive pivot (the matrix is
/// not positive definite), else 0.
pub(crate) fn potrf<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 2)?;
    let upper = char_choice(frame, "uplo", b"LU")? == b'U';
    let (batch, n) = square_dims(frame, "potrf")?;
    expect_lapack_int(frame, n)?;
    let dims = frame.arg(0)?.dims().to_vec();
    expect_result_dims(frame, 0, &dims)?;
    expect_result_dims(frame, 1, &batched(&dims, &[]))?;
    let a = frame.arg_data::<T>(0)?;
    let out = frame.result_data::<T>(0)?;
    let info = frame.result_data::<i32>(1)?;
    out.copy_from_slice(a);
    if n == 0 {
        // LAPACK's quick return for empty matrices (and none at all).
        info.fill(0);
        return Ok(());
    }
    let req = cholesky_in_place_scratch::<T>(n, PAR, Default::default());
    for b in 0..batch {
        let input = load(a, b, n, n);
        // faer factors the lower triangle; the upper one of A is the lower one
        // of A^H.
        let mut l = if upper {
            Mat::from_fn(n, n, |i, j| input[(j, i)].cj())
        } else {
            input.clone()
        };
        let result = with_stack(req, |stack| {
            cholesky_in_place(
                l.as_mut(),
                LltRegularization::default(),
                PAR,
                stack,
                Default::default(),
            )
        });
        info[b] = match result {
            Ok(_) => 0,
            Err(LltError::NonPositivePivot { index }) => (index + 1) as i32,
        };
        if info[b] != 0 {
            continue;
        }
        let base = b * n * n;
        for i in 0..n {
            for j in 0..=i {
                if upper {
                    out[base + j * n + i] = l[(i, j)].cj();
                } else {
                    out[base + i * n + j] = l[(i, j)];
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_reproduce_the_permutation() {
        let perm = [2usize, 0, 3, 1];
        let mut ipiv = [0i32; 4];
        swaps_from_permutation(&perm, &mut ipiv);
        let mut rows: Vec<usize> = (0..4).collect();
        for (i, &p) in ipiv.iter().enumerate() {
            rows.swap(i, p as usize - 1);
        }
        assert_eq!(rows, perm);
    }
}
