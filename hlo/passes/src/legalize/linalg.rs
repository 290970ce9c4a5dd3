//! `cholesky` and `triangular-solve` of real (`f32`/`f64`) matrices as the
//! evaluator's loops in `f64`.
//!
//! The evaluator factors in `f64` complex arithmetic and rounds once; with
//! real inputs every imaginary part is `+0`, and its operations reduce to
//! these real ones, which the expansion performs in the same order: for
//! column `j`, `pivot = a_jj - l_j0^2 - l_j1^2 - ...` and `s_i = a_ij - p_i0 -
//! p_i1 - ...` with `p = l_ik l_jk + 0` (the complex product's `+0`), as
//! left-to-right `add` `reduce`s of `[a, -p_0, -p_1, ...]` from `-0` (the
//! entries beyond `j` are `-0`, which change nothing); `d = sqrt(pivot)`; `l_ij
//! = s_i / d`. A matrix with a NaN pivot comes back all NaN. `lower=false` factors the
//! transpose and transposes back, as the evaluator does. The loop over columns
//! is a `while` with `dynamic-slice`/`dynamic-update-slice` in a new `call`ed
//! computation. Exact for finite inputs (with infinities the evaluator's
//! imaginary parts can turn NaN where these stay real).
//!
//! `triangular-solve`: the evaluator substitutes in `f64` complex arithmetic;
//! the expansion carries the imaginary parts too (zeros, whose signs the
//! complex formulas move around; `op(a)`'s is `-0` for the adjoint), so every
//! operation is the evaluator's: `s = b_i - sum_j t_ij x_j` as left-to-right
//! `add` `reduce`s over the solved rows (the others masked to `-0`), the
//! division by the diagonal as `num_complex` divides (`(s t + s' t') / (t^2 +
//! t'^2)`), none with a unit diagonal. Right-side solves are left-side solves
//! of the transposes (complex products commute bit for bit); back substitution
//! is forward substitution of the reversed system. A `while` over rows in a
//! new `call`ed computation; rounded once. Exact.

use super::{all_of_type, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode, Scalar, TriangularTranspose};

const F64: ElementType = ElementType::F64;
const S32: ElementType = ElementType::S32;
const PRED: ElementType = ElementType::Pred;

/// See the module docs.
pub struct CholeskyExpander;

impl Expander for CholeskyExpander {
    fn name(&self) -> &'static str {
        "cholesky"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        if op != Opcode::Cholesky || !matches!(t, ElementType::F32 | ElementType::F64) {
            return None;
        }
        let mut plan = all_of_type(
            F64,
            &[
                Opcode::Add,
                Opcode::Multiply,
                Opcode::Divide,
                Opcode::Negate,
                Opcode::Sqrt,
                Opcode::Broadcast,
                Opcode::Reshape,
                Opcode::Transpose,
                Opcode::Concatenate,
                Opcode::DynamicSlice,
                Opcode::DynamicUpdateSlice,
            ],
        );
        plan.push((Opcode::Reduce, vec![F64]));
        plan.extend(all_of_type(
            PRED,
            &[Opcode::Or, Opcode::And, Opcode::Broadcast],
        ));
        plan.extend([
            (Opcode::Convert, tys(&[t, F64])),
            (Opcode::Compare, tys(&[F64, PRED])),
            (Opcode::Compare, tys(&[S32, PRED])),
            (Opcode::Select, tys(&[F64, PRED])),
            (Opcode::Add, vec![S32]),
            (Opcode::Iota, vec![S32]),
            (Opcode::Broadcast, vec![S32]),
            (Opcode::DynamicSlice, tys(&[F64, S32])),
            (Opcode::DynamicUpdateSlice, tys(&[F64, S32])),
            (Opcode::While, vec![]),
            (Opcode::Call, vec![]),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let Some(&x) = b.instr(id).operands.first() else {
            return false;
        };
        b.array(x).is_ok_and(|(_, d)| {
            let r = d.len();
            r >= 2 && d[r - 1] == d[r - 2] && d[r - 1] < 1 << 20 && d[r - 1] > 0
        }) && b.array(id).is_ok()
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::Cholesky { lower } = b.instr(id).op else {
            return Err(Error::invalid_argument("not a cholesky"));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        let built = build_cholesky(t, &dims, lower)?;
        let callee = b.attach(&built)?;
        let shape = b.instr(id).shape.clone();
        Ok(b.add(
            shape,
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            vec![x],
        ))
    }
}

fn constant(f: &mut HloBuilder, v: Scalar, dims: &[usize]) -> Result<Value> {
    let c = f.constant(Literal::from_scalar(v))?;
    if dims.is_empty() {
        return Ok(c);
    }
    f.broadcast(c, dims)
}

/// `[b, n, n]` with the last two dimensions swapped.
fn swap_last(f: &mut HloBuilder, x: Value) -> Result<Value> {
    f.transpose(x, &[0, 2, 1])
}

/// `for i in 0..n { carried = body(i, carried) }` as a `while` loop in `f`;
/// returns the final carried values.
fn counted_loop(
    f: &mut HloBuilder,
    name: &str,
    n: usize,
    carried: &[Value],
    body: impl FnOnce(&mut HloBuilder, Value, &[Value]) -> Result<Vec<Value>>,
) -> Result<Vec<Value>> {
    let mut shapes = vec![Shape::scalar(S32)];
    for &v in carried {
        shapes.push(f.shape(v)?.clone());
    }
    let state = Shape::tuple(shapes);
    let count = carried.len();
    let open = |bb: &mut HloBuilder| -> Result<(Value, Vec<Value>)> {
        let p = bb.parameter(0, state.clone(), "state")?;
        let i = bb.get_tuple_element(p, 0)?;
        let rest = (1..=count)
            .map(|k| bb.get_tuple_element(p, k))
            .collect::<Result<Vec<_>>>()?;
        Ok((i, rest))
    };
    let mut cb = HloBuilder::new(format!("{name}_cond"));
    let (i, _) = open(&mut cb)?;
    let limit = constant(&mut cb, Scalar::S32(n as i32), &[])?;
    let go = cb.compare(i, limit, Dir::Lt)?;
    let cond = cb.build_computation(go)?;
    let mut bb = HloBuilder::new(format!("{name}_body"));
    let (i, rest) = open(&mut bb)?;
    let next = body(&mut bb, i, &rest)?;
    let one = constant(&mut bb, Scalar::S32(1), &[])?;
    let i1 = bb.binary(BinaryOp::Add, i, one)?;
    let mut out = vec![i1];
    out.extend(next);
    let out = bb.tuple(&out)?;
    let body = bb.build_computation(out)?;
    let i0 = constant(f, Scalar::S32(0), &[])?;
    let mut init = vec![i0];
    init.extend_from_slice(carried);
    let init = f.tuple(&init)?;
    let w = f.while_loop(&cond, &body, init)?;
    (1..=count).map(|k| f.get_tuple_element(w, k)).collect()
}

fn build_cholesky(t: ElementType, dims: &[usize], lower: bool) -> Result<Computation> {
    let r = dims.len();
    let n = dims[r - 1];
    let batch: usize = dims[..r - 2].iter().product();
    let cube = [batch, n, n];
    let mut f = HloBuilder::new("cholesky");
    let x = f.parameter(0, Shape::array(t, dims.to_vec()), "a")?;
    let x = f.reshape(x, &cube)?;
    let x = if t == F64 { x } else { f.convert(x, F64)? };
    // The matrix whose lower triangle is factored.
    let a = if lower { x } else { swap_last(&mut f, x)? };
    let l0 = constant(&mut f, Scalar::F64(0.0), &cube)?;
    let ok = constant(&mut f, Scalar::Pred(false), &[batch])?;
    let done = counted_loop(&mut f, "cholesky", n, &[a, l0, ok], |bb, j, v| {
        let [a_in, l, failed] = v[..] else {
            return Err(Error::internal("cholesky loop state"));
        };
        let zero = constant(bb, Scalar::S32(0), &[])?;
        let add = Computation::scalar_binary("sum", BinaryOp::Add, F64)?;
        let neg_zero = constant(bb, Scalar::F64(-0.0), &[])?;
        // Row j of L: l_jk (zero for k >= j).
        let row = bb.dynamic_slice(l, &[zero, j, zero], &[batch, 1, n])?;
        // The pivot.
        let ajj = bb.dynamic_slice(a_in, &[zero, j, j], &[batch, 1, 1])?;
        let ajj = bb.reshape(ajj, &[batch, 1])?;
        let row2 = bb.reshape(row, &[batch, n])?;
        let sq = bb.binary(BinaryOp::Multiply, row2, row2)?;
        let nsq = bb.unary(UnaryOp::Negate, sq)?;
        let terms = bb.concatenate(&[ajj, nsq], 1)?;
        let pivot = bb.reduce(&[terms], &[neg_zero], &add, &[1])?;
        let d = bb.unary(UnaryOp::Sqrt, pivot)?;
        let d_nan = bb.compare(d, d, Dir::Ne)?;
        let failed = bb.binary(BinaryOp::Or, failed, d_nan)?;
        // s_i = a_ij - sum_k (l_ik l_jk + 0), for every row i.
        let col_a = bb.dynamic_slice(a_in, &[zero, zero, j], &[batch, n, 1])?;
        let rows = bb.broadcast_in_dim(row2, &[batch, n, n], &[0, 2])?;
        let p = bb.binary(BinaryOp::Multiply, l, rows)?;
        let plus0 = constant(bb, Scalar::F64(0.0), &cube)?;
        let p = bb.binary(BinaryOp::Add, p, plus0)?;
        let np = bb.unary(UnaryOp::Negate, p)?;
        let terms = bb.concatenate(&[col_a, np], 2)?;
        let s = bb.reduce(&[terms], &[neg_zero], &add, &[2])?;
        // l_ij = s_i / d (a complex divided by a real: each part by d).
        let db = bb.broadcast_in_dim(d, &[batch, n], &[0])?;
        let below = bb.binary(BinaryOp::Divide, s, db)?;
        // Column j: below the diagonal, d on it, zero above.
        let i = bb.iota(Shape::array(S32, vec![batch, n]), 1)?;
        let jb = bb.broadcast(j, &[batch, n])?;
        let is_below = bb.compare(i, jb, Dir::Gt)?;
        let is_diag = bb.compare(i, jb, Dir::Eq)?;
        let zeros = constant(bb, Scalar::F64(0.0), &[batch, n])?;
        let upper = bb.select(is_diag, db, zeros)?;
        let col = bb.select(is_below, below, upper)?;
        let col = bb.reshape(col, &[batch, n, 1])?;
        let l = bb.dynamic_update_slice(l, col, &[zero, zero, j])?;
        Ok(vec![a_in, l, failed])
    })?;
    let (l, failed) = (done[1], done[2]);
    let failed = f.broadcast_in_dim(failed, &cube, &[0])?;
    let nan = constant(&mut f, Scalar::F64(f64::NAN), &cube)?;
    let l = f.select(failed, nan, l)?;
    let l = if lower { l } else { swap_last(&mut f, l)? };
    let l = if t == F64 { l } else { f.convert(l, t)? };
    let out = f.reshape(l, dims)?;
    f.build_computation(out)
}

/// See the module docs.
pub struct TriangularSolveExpander;

impl Expander for TriangularSolveExpander {
    fn name(&self) -> &'static str {
        "triangular-solve"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::TriangularSolve {
            return None;
        }
        let mut plan = CholeskyExpander.plan(Opcode::Cholesky, types)?;
        let t = super::single(types)?;
        plan.extend([
            (Opcode::Reverse, vec![F64]),
            (Opcode::Subtract, vec![F64]),
            (Opcode::Convert, tys(&[t, F64])),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::TriangularSolve { options } = &instr.op else {
            return false;
        };
        let [a, x] = instr.operands[..] else {
            return false;
        };
        let (Ok((ta, ad)), Ok((tb, bd))) = (b.array(a), b.array(x)) else {
            return false;
        };
        let (ra, rb) = (ad.len(), bd.len());
        ta == tb
            && ra >= 2
            && ra == rb
            && ad[ra - 1] == ad[ra - 2]
            && ad[..ra - 2] == bd[..rb - 2]
            && ad[ra - 1] > 0
            && ad[ra - 1] <= crate::legalize::window::MAX_REVERSE
            && bd[rb - 1] > 0
            && bd[rb - 2] > 0
            && ad[ra - 1]
                == if options.left_side {
                    bd[rb - 2]
                } else {
                    bd[rb - 1]
                }
            && b.array(id).is_ok_and(|(t, d)| t == tb && d == bd)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::TriangularSolve { options } = b.instr(id).op.clone() else {
            return Err(Error::invalid_argument("not a triangular-solve"));
        };
        let (a, x) = (b.operand(0)?, b.operand(1)?);
        let (t, ad) = b.array(a)?;
        let (_, bd) = b.array(x)?;
        let built = build_solve(t, &ad, &bd, &options)?;
        let callee = b.attach(&built)?;
        let shape = b.instr(id).shape.clone();
        Ok(b.add(
            shape,
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            vec![a, x],
        ))
    }
}

fn build_solve(
    t: ElementType,
    ad: &[usize],
    bd: &[usize],
    options: &hlo_ir::TriangularSolveOptions,
) -> Result<Computation> {
    let r = ad.len();
    let k = ad[r - 1];
    let batch: usize = ad[..r - 2].iter().product();
    let (rows, cols) = (bd[r - 2], bd[r - 1]);
    let mut f = HloBuilder::new("triangular_solve");
    let a = f.parameter(0, Shape::array(t, ad.to_vec()), "a")?;
    let x = f.parameter(1, Shape::array(t, bd.to_vec()), "b")?;
    let a = f.reshape(a, &[batch, k, k])?;
    let x = f.reshape(x, &[batch, rows, cols])?;
    let (a, x) = if t == F64 {
        (a, x)
    } else {
        (f.convert(a, F64)?, f.convert(x, F64)?)
    };
    let transposed = options.transpose_a != TriangularTranspose::NoTranspose;
    let conjugate = options.transpose_a == TriangularTranspose::Adjoint;
    let eff_lower = options.lower != transposed;
    // op(a); for right-side solves its transpose, and the rhs transposed.
    let op_a = if transposed { swap_last(&mut f, a)? } else { a };
    let (m, rhs, lower) = if options.left_side {
        (op_a, x, eff_lower)
    } else {
        (swap_last(&mut f, op_a)?, swap_last(&mut f, x)?, !eff_lower)
    };
    // Back substitution: the reversed system is lower.
    let (m, rhs) = if lower {
        (m, rhs)
    } else {
        (f.reverse(m, &[1, 2])?, f.reverse(rhs, &[1])?)
    };
    let width = f.shape(rhs)?.dims()[2];
    let cube = [batch, k, width];
    // The imaginary part of every t(i, j): -0 for the adjoint.
    let t_im = if conjugate { -0.0 } else { 0.0 };

    let im0 = constant(&mut f, Scalar::F64(0.0), &cube)?;
    let done = counted_loop(&mut f, "triangular_solve", k, &[m, rhs, im0], |bb, i, v| {
        let [m_in, xre, xim] = v[..] else {
            return Err(Error::internal("triangular-solve loop state"));
        };
        let zero = constant(bb, Scalar::S32(0), &[])?;
        let add = Computation::scalar_binary("sum", BinaryOp::Add, F64)?;
        let neg_zero = constant(bb, Scalar::F64(-0.0), &[])?;
        // Row i of the matrix, broadcast over the rhs columns: t(i, j).
        let row = bb.dynamic_slice(m_in, &[zero, i, zero], &[batch, 1, k])?;
        let row = bb.reshape(row, &[batch, k])?;
        let tr = bb.broadcast_in_dim(row, &cube, &[0, 1])?;
        let ti = constant(bb, Scalar::F64(t_im), &cube)?;
        // p = t(i, j) x_j, the complex product.
        let a_x = bb.binary(BinaryOp::Multiply, tr, xre)?;
        let b_y = bb.binary(BinaryOp::Multiply, ti, xim)?;
        let p_re = bb.binary(BinaryOp::Subtract, a_x, b_y)?;
        let a_y = bb.binary(BinaryOp::Multiply, tr, xim)?;
        let b_x = bb.binary(BinaryOp::Multiply, ti, xre)?;
        let p_im = bb.binary(BinaryOp::Add, a_y, b_x)?;
        // Only the rows solved so far (j < i) count.
        let j = bb.iota(Shape::array(S32, cube.to_vec()), 1)?;
        let ib = bb.broadcast(i, &cube)?;
        let solved = bb.compare(j, ib, Dir::Lt)?;
        let nz = constant(bb, Scalar::F64(-0.0), &cube)?;
        let mut s = Vec::new();
        for (x_part, p) in [(xre, p_re), (xim, p_im)] {
            let np = bb.unary(UnaryOp::Negate, p)?;
            let np = bb.select(solved, np, nz)?;
            let own = bb.dynamic_slice(x_part, &[zero, i, zero], &[batch, 1, width])?;
            let terms = bb.concatenate(&[own, np], 1)?;
            s.push(bb.reduce(&[terms], &[neg_zero], &add, &[1])?);
        }
        let (s_re, s_im) = (s[0], s[1]);
        let (v_re, v_im) = if options.unit_diagonal {
            (s_re, s_im)
        } else {
            // num_complex: (s_re d + s_im e, s_im d - s_re e) / (d d + e e).
            let dg = bb.dynamic_slice(m_in, &[zero, i, i], &[batch, 1, 1])?;
            let dg = bb.reshape(dg, &[batch])?;
            let d = bb.broadcast_in_dim(dg, &[batch, width], &[0])?;
            let e = constant(bb, Scalar::F64(t_im), &[batch, width])?;
            let dd = bb.binary(BinaryOp::Multiply, d, d)?;
            let ee = bb.binary(BinaryOp::Multiply, e, e)?;
            let norm = bb.binary(BinaryOp::Add, dd, ee)?;
            let rd = bb.binary(BinaryOp::Multiply, s_re, d)?;
            let ie = bb.binary(BinaryOp::Multiply, s_im, e)?;
            let re = bb.binary(BinaryOp::Add, rd, ie)?;
            let id_ = bb.binary(BinaryOp::Multiply, s_im, d)?;
            let re_e = bb.binary(BinaryOp::Multiply, s_re, e)?;
            let im = bb.binary(BinaryOp::Subtract, id_, re_e)?;
            (
                bb.binary(BinaryOp::Divide, re, norm)?,
                bb.binary(BinaryOp::Divide, im, norm)?,
            )
        };
        let v_re = bb.reshape(v_re, &[batch, 1, width])?;
        let v_im = bb.reshape(v_im, &[batch, 1, width])?;
        let xre = bb.dynamic_update_slice(xre, v_re, &[zero, i, zero])?;
        let xim = bb.dynamic_update_slice(xim, v_im, &[zero, i, zero])?;
        Ok(vec![m_in, xre, xim])
    })?;
    let sol = done[1];
    let sol = if lower { sol } else { f.reverse(sol, &[1])? };
    let sol = if options.left_side {
        sol
    } else {
        swap_last(&mut f, sol)?
    };
    let sol = if t == F64 { sol } else { f.convert(sol, t)? };
    let out = f.reshape(sol, bd)?;
    f.build_computation(out)
}
