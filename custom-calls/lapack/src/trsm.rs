//! trsm: triangular solve with several right-hand sides.

use crate::{char_choice, expect_result_dims, load, matrix_dims, store, Elem, PAR};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_unit_upper_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::Mat;
use platform_api::custom_call::CallFrame;
use platform_api::Result;

/// `(a, b) -> x` with attributes `side` ('L': `op(a) x = b`, 'R':
/// `x op(a) = b`), `uplo` (the triangle of `a` that is read), `trans_x` ('N',
/// 'T' or 'C': `op(a)` is `a`, `a^T` or `a^H`) and `diag` ('U': unit diagonal,
/// not read; 'N').
pub(crate) fn trsm<T: Elem>(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(2, 1)?;
    let side = char_choice(frame, "side", b"LR")?;
    let uplo = char_choice(frame, "uplo", b"LU")?;
    let trans = char_choice(frame, "trans_x", b"NTC")?;
    let diag = char_choice(frame, "diag", b"UN")?;
    let a_dims = frame.arg(0)?.dims().to_vec();
    let b_dims = frame.arg(1)?.dims().to_vec();
    matrix_dims(frame, &a_dims)?;
    let (batch, m, n) = matrix_dims(frame, &b_dims)?;
    let k = if side == b'L' { m } else { n };
    let mut want_a = b_dims.clone();
    let rank = want_a.len();
    want_a[rank - 2..].copy_from_slice(&[k, k]);
    if a_dims != want_a {
        return Err(frame.error(format!(
            "a must be {want_a:?} for b {b_dims:?} with side '{}'; got {a_dims:?}",
            side as char
        )));
    }
    expect_result_dims(frame, 0, &b_dims)?;
    let a = frame.arg_data::<T>(0)?;
    let bdata = frame.arg_data::<T>(1)?;
    let out = frame.result_data::<T>(0)?;
    if m == 0 || n == 0 {
        // Empty right-hand sides (or none): nothing to solve.
        return Ok(());
    }
    for b in 0..batch {
        let am = load(a, b, k, k);
        // t = op(a), lower or upper.
        let mut lower = uplo == b'L';
        let mut t = match trans {
            b'N' => am,
            b'T' => am.transpose().to_owned(),
            _ => am.adjoint().to_owned(),
        };
        if trans != b'N' {
            lower = !lower;
        }
        let mut x = load(bdata, b, m, n);
        if side == b'R' {
            // x t = b  <=>  t^T x^T = b^T.
            t = t.transpose().to_owned();
            lower = !lower;
            let mut xt: Mat<T> = x.transpose().to_owned();
            solve(&t, lower, diag == b'U', &mut xt);
            x = xt.transpose().to_owned();
        } else {
            solve(&t, lower, diag == b'U', &mut x);
        }
        store(x.as_ref(), out, b);
    }
    Ok(())
}

fn solve<T: Elem>(t: &Mat<T>, lower: bool, unit: bool, x: &mut Mat<T>) {
    let t = t.as_ref();
    let x = x.as_mut();
    match (lower, unit) {
        (true, false) => solve_lower_triangular_in_place(t, x, PAR),
        (true, true) => solve_unit_lower_triangular_in_place(t, x, PAR),
        (false, false) => solve_upper_triangular_in_place(t, x, PAR),
        (false, true) => solve_unit_upper_triangular_in_place(t, x, PAR),
    }
}
