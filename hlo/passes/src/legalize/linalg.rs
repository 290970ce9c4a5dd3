//! `cholesky` of real (`f32`/`f64`) matrices as the evaluator's column loop in
//! `f64`.
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

use super::{all_of_type, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode, Scalar};

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
        Ok(b.add(shape, Op::Call { to_apply: callee }, vec![x]))
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
    let state = Shape::tuple(vec![
        Shape::scalar(S32),
        Shape::array(F64, cube.to_vec()),
        Shape::array(F64, cube.to_vec()),
        Shape::array(PRED, vec![batch]),
    ]);
    let open = |bb: &mut HloBuilder| -> Result<[Value; 4]> {
        let p = bb.parameter(0, state.clone(), "state")?;
        Ok([
            bb.get_tuple_element(p, 0)?,
            bb.get_tuple_element(p, 1)?,
            bb.get_tuple_element(p, 2)?,
            bb.get_tuple_element(p, 3)?,
        ])
    };
    let mut cb = HloBuilder::new("cholesky_cond");
    let [j, ..] = open(&mut cb)?;
    let limit = constant(&mut cb, Scalar::S32(n as i32), &[])?;
    let go = cb.compare(j, limit, Dir::Lt)?;
    let cond = cb.build_computation(go)?;

    let mut bb = HloBuilder::new("cholesky_body");
    let [j, a_in, l, failed] = open(&mut bb)?;
    let zero = constant(&mut bb, Scalar::S32(0), &[])?;
    let add = Computation::scalar_binary("sum", BinaryOp::Add, F64)?;
    let neg_zero = constant(&mut bb, Scalar::F64(-0.0), &[])?;
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
    let plus0 = constant(&mut bb, Scalar::F64(0.0), &cube)?;
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
    let zeros = constant(&mut bb, Scalar::F64(0.0), &[batch, n])?;
    let upper = bb.select(is_diag, db, zeros)?;
    let col = bb.select(is_below, below, upper)?;
    let col = bb.reshape(col, &[batch, n, 1])?;
    let l = bb.dynamic_update_slice(l, col, &[zero, zero, j])?;
    let one = constant(&mut bb, Scalar::S32(1), &[])?;
    let j1 = bb.binary(BinaryOp::Add, j, one)?;
    let out = bb.tuple(&[j1, a_in, l, failed])?;
    let body = bb.build_computation(out)?;

    let j0 = constant(&mut f, Scalar::S32(0), &[])?;
    let l0 = constant(&mut f, Scalar::F64(0.0), &cube)?;
    let ok = constant(&mut f, Scalar::Pred(false), &[batch])?;
    let init = f.tuple(&[j0, a, l0, ok])?;
    let w = f.while_loop(&cond, &body, init)?;
    let l = f.get_tuple_element(w, 2)?;
    let failed = f.get_tuple_element(w, 3)?;
    let failed = f.broadcast_in_dim(failed, &cube, &[0])?;
    let nan = constant(&mut f, Scalar::F64(f64::NAN), &cube)?;
    let l = f.select(failed, nan, l)?;
    let l = if lower { l } else { swap_last(&mut f, l)? };
    let l = if t == F64 { l } else { f.convert(l, t)? };
    let out = f.reshape(l, dims)?;
    f.build_computation(out)
}
