//! `cholesky` and `triangular-solve` on (batched) square matrices in the last
//! two dimensions.
//!
//! Both compute in f64 (or f64 complex) and round once to the result type.
//!
//! `cholesky(a), lower=true` returns `L` with `a = L Lᴴ`, reading only the
//! lower triangle of `a` and writing zeros above the diagonal; `lower=false`
//! returns `U` with `a = Uᴴ U`, reading only the upper triangle (computed, as
//! XLA does, as the lower factor of the transposed matrix, transposed back).
//! A matrix that is not positive definite — a pivot whose square root is NaN
//! (negative, or NaN inputs) — comes back entirely NaN, per matrix of the
//! batch: the behaviour of XLA's Cholesky expansion, checked against XLA CPU.
//! A zero pivot is not an error there either: it divides by zero.
//!
//! `triangular-solve(a, b)` solves `op(a) x = b` (`left_side`) or
//! `x op(a) = b`, with `op` the identity, transpose or conjugate transpose,
//! by forward or back substitution as the effective triangle requires. Only
//! the `lower` (or upper) triangle of `a` is read; with `unit_diagonal` the
//! diagonal is taken as ones and not read.

use super::util::{self, invalid, operand_array};
use super::CallComputation;
use half::{bf16, f16};
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result};
use hlo_ir::{Op, TriangularTranspose};
use num_complex::{Complex32, Complex64};

/// The values of a float or complex literal as f64 complex numbers.
fn read(instr: &HloInstruction, literal: &Literal) -> Result<Vec<Complex64>> {
    let re = |v: f64| Complex64::new(v, 0.0);
    Ok(match literal.element_type() {
        Some(ElementType::F16) => literal
            .data::<f16>()?
            .iter()
            .map(|v| re(v.to_f64()))
            .collect(),
        Some(ElementType::BF16) => literal
            .data::<bf16>()?
            .iter()
            .map(|v| re(v.to_f64()))
            .collect(),
        Some(ElementType::F32) => literal
            .data::<f32>()?
            .iter()
            .map(|&v| re(v as f64))
            .collect(),
        Some(ElementType::F64) => literal.data::<f64>()?.iter().map(|&v| re(v)).collect(),
        Some(ElementType::C64) => literal
            .data::<Complex32>()?
            .iter()
            .map(|v| Complex64::new(v.re as f64, v.im as f64))
            .collect(),
        Some(ElementType::C128) => literal.data::<Complex64>()?.to_vec(),
        other => {
            return Err(invalid(
                instr,
                format!("needs a floating-point or complex operand, got {other:?}"),
            ))
        }
    })
}

/// A literal of `shape` from f64 complex values (imaginary parts dropped for
/// real types).
fn write(shape: &ArrayShape, values: &[Complex64]) -> Result<Literal> {
    match shape.element_type {
        ElementType::F16 => util::literal_from_values(
            shape,
            &values
                .iter()
                .map(|v| f16::from_f64(v.re))
                .collect::<Vec<_>>(),
        ),
        ElementType::BF16 => util::literal_from_values(
            shape,
            &values
                .iter()
                .map(|v| bf16::from_f64(v.re))
                .collect::<Vec<_>>(),
        ),
        ElementType::F32 => util::literal_from_values(
            shape,
            &values.iter().map(|v| v.re as f32).collect::<Vec<_>>(),
        ),
        ElementType::F64 => {
            util::literal_from_values(shape, &values.iter().map(|v| v.re).collect::<Vec<_>>())
        }
        ElementType::C64 => util::literal_from_values(
            shape,
            &values
                .iter()
                .map(|v| Complex32::new(v.re as f32, v.im as f32))
                .collect::<Vec<_>>(),
        ),
        _ => util::literal_from_values(shape, values),
    }
}

/// Splits `[..., rows, cols]` into (batch count, rows, cols).
fn matrix_dims(dims: &[usize]) -> Option<(usize, usize, usize)> {
    let r = dims.len();
    if r < 2 {
        return None;
    }
    Some((dims[..r - 2].iter().product(), dims[r - 2], dims[r - 1]))
}

/// The `cholesky` kernel.
pub fn cholesky(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Cholesky { lower } = &instr.op else {
        return Err(invalid(instr, "not a cholesky"));
    };
    if operands.len() != 1 {
        return Err(invalid(
            instr,
            format!("expects 1 operand, got {}", operands.len()),
        ));
    }
    let (a, shape) = operand_array(instr, operands, 0)?;
    let result = util::result_array(instr)?;
    let dims = matrix_dims(&shape.dims).filter(|&(_, r, c)| r == c);
    let Some((batch, n, _)) = dims else {
        return Err(invalid(
            instr,
            format!("operand {} is not a batch of square matrices", a.shape()),
        ));
    };
    if result.dims != shape.dims || result.element_type != shape.element_type {
        return Err(invalid(
            instr,
            format!(
                "result {} must have the operand's shape {}",
                instr.shape,
                a.shape()
            ),
        ));
    }
    let values = read(instr, a)?;
    let mut out = vec![Complex64::new(0.0, 0.0); values.len()];
    let nan = Complex64::new(
        f64::NAN,
        if shape.element_type.is_complex() {
            f64::NAN
        } else {
            0.0
        },
    );
    for b in 0..batch {
        let m = &values[b * n * n..(b + 1) * n * n];
        // Element (i, j) of the matrix whose lower triangle is factored.
        let at = |i: usize, j: usize| if *lower { m[i * n + j] } else { m[j * n + i] };
        let mut l = vec![Complex64::new(0.0, 0.0); n * n];
        let mut failed = false;
        for j in 0..n {
            let mut pivot = at(j, j).re;
            for k in 0..j {
                pivot -= l[j * n + k].norm_sqr();
            }
            let d = pivot.sqrt();
            failed |= d.is_nan();
            l[j * n + j] = Complex64::new(d, 0.0);
            for i in j + 1..n {
                let mut s = at(i, j);
                for k in 0..j {
                    s -= l[i * n + k] * l[j * n + k].conj();
                }
                l[i * n + j] = s / d;
            }
        }
        let o = &mut out[b * n * n..(b + 1) * n * n];
        for i in 0..n {
            for j in 0..n {
                let v = if failed { nan } else { l[i * n + j] };
                if *lower {
                    o[i * n + j] = v;
                } else {
                    o[j * n + i] = v;
                }
            }
        }
    }
    write(result, &out)
}

/// The `triangular-solve` kernel.
pub fn triangular_solve(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::TriangularSolve { options } = &instr.op else {
        return Err(invalid(instr, "not a triangular-solve"));
    };
    if operands.len() != 2 {
        return Err(invalid(
            instr,
            format!("expects 2 operands, got {}", operands.len()),
        ));
    }
    let (a, a_shape) = operand_array(instr, operands, 0)?;
    let (b, b_shape) = operand_array(instr, operands, 1)?;
    let result = util::result_array(instr)?;
    let a_dims = matrix_dims(&a_shape.dims).filter(|&(_, r, c)| r == c);
    let b_dims = matrix_dims(&b_shape.dims);
    let ok = match (a_dims, b_dims) {
        (Some((ab, k, _)), Some((bb, rows, cols))) => {
            let rank = a_shape.dims.len();
            ab == bb
                && a_shape.dims[..rank - 2] == b_shape.dims[..b_shape.dims.len() - 2]
                && if options.left_side {
                    rows == k
                } else {
                    cols == k
                }
        }
        _ => false,
    };
    if !ok
        || a_shape.element_type != b_shape.element_type
        || result.dims != b_shape.dims
        || result.element_type != b_shape.element_type
    {
        return Err(invalid(
            instr,
            format!(
                "cannot solve with a={} and b={} into {} (left_side={})",
                a.shape(),
                b.shape(),
                instr.shape,
                options.left_side
            ),
        ));
    }
    let (batch, k, _) = a_dims.unwrap_or((0, 0, 0));
    let (_, rows, cols) = b_dims.unwrap_or((0, 0, 0));
    let av = read(instr, a)?;
    let mut x = read(instr, b)?;
    let transposed = options.transpose_a != TriangularTranspose::NoTranspose;
    let conjugate = options.transpose_a == TriangularTranspose::Adjoint;
    // The effective matrix op(a) is lower triangular when exactly one of
    // "a is lower" and "a is transposed" holds.
    let eff_lower = options.lower != transposed;
    for bi in 0..batch {
        let m = &av[bi * k * k..(bi + 1) * k * k];
        // Element (i, j) of op(a), read only inside its triangle.
        let t = |i: usize, j: usize| -> Complex64 {
            if i == j && options.unit_diagonal {
                return Complex64::new(1.0, 0.0);
            }
            let v = if transposed {
                m[j * k + i]
            } else {
                m[i * k + j]
            };
            if conjugate {
                v.conj()
            } else {
                v
            }
        };
        let xb = &mut x[bi * rows * cols..(bi + 1) * rows * cols];
        let order: Vec<usize> = if options.left_side == eff_lower {
            (0..k).collect()
        } else {
            (0..k).rev().collect()
        };
        if options.left_side {
            // op(a) x = b: row i of x from the rows already solved.
            for (pos, &i) in order.iter().enumerate() {
                for c in 0..cols {
                    let mut s = xb[i * cols + c];
                    for &j in &order[..pos] {
                        s -= t(i, j) * xb[j * cols + c];
                    }
                    xb[i * cols + c] = if options.unit_diagonal {
                        s
                    } else {
                        s / t(i, i)
                    };
                }
            }
        } else {
            // x op(a) = b: column j of x from the columns already solved.
            for (pos, &j) in order.iter().enumerate() {
                for r in 0..rows {
                    let mut s = xb[r * cols + j];
                    for &i in &order[..pos] {
                        s -= xb[r * cols + i] * t(i, j);
                    }
                    xb[r * cols + j] = if options.unit_diagonal {
                        s
                    } else {
                        s / t(j, j)
                    };
                }
            }
        }
    }
    write(result, &x)
}
