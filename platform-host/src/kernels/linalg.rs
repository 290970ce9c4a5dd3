//! `cholesky` and `triangular-solve`, batched over leading dimensions.
//!
//! Both compute in complex f64 (real types are widened with a zero imaginary
//! part and narrowed back), which keeps one implementation for f32, f64, c64
//! and c128 and gives the small matrices these ops see more accuracy than the
//! inputs carry. Cholesky of a matrix that is not positive definite yields NaN
//! from the first failing pivot on, as XLA's expansion does; the triangle it
//! does not compute is zero.

use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, Thunk};
use num_complex::{Complex32, Complex64};
use platform_api::hlo::{InstrId, Op, TriangularTranspose};
use platform_api::{ElementType, Error, Result};

/// Reads `n` elements of a float or complex type as complex f64.
///
/// # Safety
/// `p` must hold `n` elements of `ty`.
unsafe fn widen(ty: ElementType, p: *const u8, n: usize) -> Vec<Complex64> {
    // SAFETY: forwarded.
    unsafe {
        match ty {
            ElementType::F32 => std::slice::from_raw_parts(p.cast::<f32>(), n)
                .iter()
                .map(|&v| Complex64::new(v as f64, 0.0))
                .collect(),
            ElementType::F64 => std::slice::from_raw_parts(p.cast::<f64>(), n)
                .iter()
                .map(|&v| Complex64::new(v, 0.0))
                .collect(),
            ElementType::F16 => std::slice::from_raw_parts(p.cast::<half::f16>(), n)
                .iter()
                .map(|v| Complex64::new(v.to_f64(), 0.0))
                .collect(),
            ElementType::BF16 => std::slice::from_raw_parts(p.cast::<half::bf16>(), n)
                .iter()
                .map(|v| Complex64::new(v.to_f64(), 0.0))
                .collect(),
            ElementType::C64 => std::slice::from_raw_parts(p.cast::<Complex32>(), n)
                .iter()
                .map(|c| Complex64::new(c.re as f64, c.im as f64))
                .collect(),
            _ => std::slice::from_raw_parts(p.cast::<Complex64>(), n).to_vec(),
        }
    }
}

/// Writes complex f64 values as elements of `ty`.
///
/// # Safety
/// `p` must have room for `v.len()` elements of `ty`.
unsafe fn narrow(ty: ElementType, v: &[Complex64], p: *mut u8) {
    // SAFETY: forwarded.
    unsafe {
        for (i, c) in v.iter().enumerate() {
            match ty {
                ElementType::F32 => p.cast::<f32>().add(i).write(c.re as f32),
                ElementType::F64 => p.cast::<f64>().add(i).write(c.re),
                ElementType::F16 => p
                    .cast::<half::f16>()
                    .add(i)
                    .write(half::f16::from_f64(c.re)),
                ElementType::BF16 => p
                    .cast::<half::bf16>()
                    .add(i)
                    .write(half::bf16::from_f64(c.re)),
                ElementType::C64 => p
                    .cast::<Complex32>()
                    .add(i)
                    .write(Complex32::new(c.re as f32, c.im as f32)),
                _ => p.cast::<Complex64>().add(i).write(*c),
            }
        }
    }
}

fn supported(ty: ElementType) -> bool {
    ty.is_float() || ty.is_complex()
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::Cholesky { lower } => {
            let a = ctx.operand_array(instr, 0)?;
            let r = a.rank();
            if r < 2 || a.dims[r - 1] != a.dims[r - 2] || !supported(a.element_type) {
                return Err(Error::invalid_argument(format!(
                    "cholesky %{}: needs square float or complex matrices, got {a}",
                    instr.name
                )));
            }
            let n = a.dims[r - 1];
            let batch = a.element_count() / (n * n).max(1);
            let (src, out, ty, lower) = (
                ctx.operand_slice(instr, 0)?,
                ctx.result_slice(id)?,
                a.element_type,
                *lower,
            );
            let width = ty.byte_size();
            Ok(thunk(instr.name.clone(), "cholesky", move |ctx| {
                let (ps, po) = (ctx.ptr(src) as usize, ctx.ptr(out) as usize);
                parallel_for(batch, 1, |s, e| {
                    for b in s..e {
                        // SAFETY: matrix `b` of operand and result.
                        let mut m =
                            unsafe { widen(ty, (ps + b * n * n * width) as *const u8, n * n) };
                        // Work on the lower triangle; the upper case is the
                        // conjugate transpose.
                        if !lower {
                            for i in 0..n {
                                for j in 0..i {
                                    m[i * n + j] = m[j * n + i].conj();
                                }
                            }
                        }
                        let mut l = vec![Complex64::new(0.0, 0.0); n * n];
                        for j in 0..n {
                            let mut d = m[j * n + j].re;
                            for k in 0..j {
                                d -= l[j * n + k].norm_sqr();
                            }
                            let djj = if d > 0.0 { d.sqrt() } else { f64::NAN };
                            l[j * n + j] = Complex64::new(djj, 0.0);
                            for i in j + 1..n {
                                let mut v = m[i * n + j];
                                for k in 0..j {
                                    v -= l[i * n + k] * l[j * n + k].conj();
                                }
                                l[i * n + j] = v / djj;
                            }
                        }
                        let result: Vec<Complex64> = if lower {
                            l
                        } else {
                            (0..n * n).map(|x| l[(x % n) * n + x / n].conj()).collect()
                        };
                        // SAFETY: as above.
                        unsafe { narrow(ty, &result, (po + b * n * n * width) as *mut u8) };
                    }
                });
                Ok(())
            }))
        }
        Op::TriangularSolve { options } => {
            let a = ctx.operand_array(instr, 0)?;
            let b = ctx.operand_array(instr, 1)?;
            let r = a.rank();
            let bad = || {
                Error::invalid_argument(format!(
                    "triangular-solve %{}: a {a} and b {b} do not fit",
                    instr.name
                ))
            };
            if r < 2
                || b.rank() != r
                || a.dims[r - 1] != a.dims[r - 2]
                || !supported(a.element_type)
                || a.element_type != b.element_type
                || a.dims[..r - 2] != b.dims[..r - 2]
            {
                return Err(bad());
            }
            let m = a.dims[r - 1];
            let (rows, cols) = (b.dims[r - 2], b.dims[r - 1]);
            if (options.left_side && rows != m) || (!options.left_side && cols != m) {
                return Err(bad());
            }
            let batch = a.element_count() / (m * m).max(1);
            let opts = options.clone();
            let ty = a.element_type;
            let width = ty.byte_size();
            let (pa_s, pb_s, out) = (
                ctx.operand_slice(instr, 0)?,
                ctx.operand_slice(instr, 1)?,
                ctx.result_slice(id)?,
            );
            Ok(thunk(instr.name.clone(), "triangular-solve", move |ctx| {
                let (pa, pb, po) = (
                    ctx.ptr(pa_s) as usize,
                    ctx.ptr(pb_s) as usize,
                    ctx.ptr(out) as usize,
                );
                parallel_for(batch, 1, |s, e| {
                    for bi in s..e {
                        // SAFETY: matrix `bi` of each operand and of the result.
                        let (av, bv) = unsafe {
                            (
                                widen(ty, (pa + bi * m * m * width) as *const u8, m * m),
                                widen(
                                    ty,
                                    (pb + bi * rows * cols * width) as *const u8,
                                    rows * cols,
                                ),
                            )
                        };
                        let x = solve(&av, &bv, m, rows, cols, &opts);
                        // SAFETY: as above.
                        unsafe { narrow(ty, &x, (po + bi * rows * cols * width) as *mut u8) };
                    }
                });
                Ok(())
            }))
        }
        _ => Err(Error::internal("not a linear-algebra op")),
    }
}

/// Solves `op(a) x = b` (left side) or `x op(a) = b` (right side), reading only
/// the triangle of `a` that `options.lower` names.
fn solve(
    a: &[Complex64],
    b: &[Complex64],
    m: usize,
    rows: usize,
    cols: usize,
    options: &platform_api::hlo::TriangularSolveOptions,
) -> Vec<Complex64> {
    // The effective matrix op(a), with the unused triangle zeroed.
    let at = |i: usize, j: usize| -> Complex64 {
        let in_triangle = if options.lower { j <= i } else { j >= i };
        if i == j && options.unit_diagonal {
            Complex64::new(1.0, 0.0)
        } else if in_triangle {
            a[i * m + j]
        } else {
            Complex64::new(0.0, 0.0)
        }
    };
    let eff = |i: usize, j: usize| -> Complex64 {
        match options.transpose_a {
            TriangularTranspose::NoTranspose => at(i, j),
            TriangularTranspose::Transpose => at(j, i),
            TriangularTranspose::Adjoint => at(j, i).conj(),
        }
    };
    let eff_lower = options.lower == (options.transpose_a == TriangularTranspose::NoTranspose);
    let mut x = b.to_vec();
    if options.left_side {
        // Column by column: op(a) x[:, c] = b[:, c].
        for c in 0..cols {
            let order: Vec<usize> = if eff_lower {
                (0..m).collect()
            } else {
                (0..m).rev().collect()
            };
            for &i in &order {
                let mut v = x[i * cols + c];
                for &k in &order {
                    if k == i {
                        break;
                    }
                    v -= eff(i, k) * x[k * cols + c];
                }
                x[i * cols + c] = v / eff(i, i);
            }
        }
    } else {
        // Row by row: x[r, :] op(a) = b[r, :], i.e. Σ_k x[r,k] op(a)[k,j] = b[r,j].
        for r in 0..rows {
            // Lower op(a): solve from the last column; upper: from the first.
            let order: Vec<usize> = if eff_lower {
                (0..m).rev().collect()
            } else {
                (0..m).collect()
            };
            for &j in &order {
                let mut v = x[r * cols + j];
                for &k in &order {
                    if k == j {
                        break;
                    }
                    v -= x[r * cols + k] * eff(k, j);
                }
                x[r * cols + j] = v / eff(j, j);
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::hlo::TriangularSolveOptions;

    fn c(v: f64) -> Complex64 {
        Complex64::new(v, 0.0)
    }

    #[test]
    fn solves_all_four_sides_and_orientations() {
        // a lower = [[2,0],[1,4]]; stored with junk in the upper triangle.
        let a = [c(2.0), c(99.0), c(1.0), c(4.0)];
        let x_true = [c(1.0), c(-2.0), c(3.0), c(0.5)];
        let lower = |i: usize, j: usize| if j <= i { a[i * 2 + j] } else { c(0.0) };
        for left_side in [true, false] {
            for transpose_a in [
                TriangularTranspose::NoTranspose,
                TriangularTranspose::Transpose,
            ] {
                let op = |i: usize, j: usize| {
                    if transpose_a == TriangularTranspose::NoTranspose {
                        lower(i, j)
                    } else {
                        lower(j, i)
                    }
                };
                // b = op(a) x or x op(a).
                let mut b = vec![c(0.0); 4];
                for i in 0..2 {
                    for j in 0..2 {
                        for k in 0..2 {
                            b[i * 2 + j] += if left_side {
                                op(i, k) * x_true[k * 2 + j]
                            } else {
                                x_true[i * 2 + k] * op(k, j)
                            };
                        }
                    }
                }
                let opts = TriangularSolveOptions {
                    left_side,
                    lower: true,
                    unit_diagonal: false,
                    transpose_a,
                };
                let x = solve(&a, &b, 2, 2, 2, &opts);
                for (g, w) in x.iter().zip(&x_true) {
                    assert!(
                        (g - w).norm() < 1e-12,
                        "left={left_side} {transpose_a:?}: {x:?}"
                    );
                }
            }
        }
    }
}
