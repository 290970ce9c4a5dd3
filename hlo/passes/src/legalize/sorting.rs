//! `sort` as an odd-even transposition network in a `while` loop, and `topk`
//! as a descending (or ascending) sort plus `slice`.
//!
//! `sort`: every operand is transposed to put the sort dimension last and
//! reshaped to `[rows, n]`. A phase compares the adjacent pairs `(i, i + 1)`
//! for even `i` (or odd `i`) of all rows at once, taken with strided `slice`s,
//! and swaps a pair in every operand when `less(right, left)`; the pairs are
//! interleaved back with `reshape` + `concatenate`. The loop runs `ceil(n/2)`
//! times an even and an odd phase, `n` phases or more, which sort any row
//! (Knuth 5.3.4). Only strictly smaller right-hand elements move left, never
//! across an equal one, so the sort is stable: for a comparator that is a
//! strict weak order the result is the evaluator's (stable merge sort) exactly,
//! `is_stable` or not. (With a comparator that is not one, XLA leaves the order
//! implementation-defined, and the two may differ.)
//!
//! The comparator is applied elementwise to the `[rows, n/2]` halves: its
//! instructions are copied with array shapes (parameters become the halves,
//! scalar constants are broadcast), so only comparators made of elementwise
//! ops (`compare`, `select`, arithmetic, `convert`, ...) are expanded; their
//! ops are legalized in a later round like any others. The network lives in a
//! new computation that the expansion `call`s.
//!
//! `topk(x, k, largest)`: `sort` of `(x, iota)` along the last dimension with a
//! `TOTALORDER` `GT` (or `LT`) comparator on `x` (NaN above `+inf`, `-0` below
//! `+0`), stable, so ties keep the lower index first, as XLA (and the
//! evaluator) order them; then the first `k` of both. Exact.

use super::{lanewise, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::{ComparisonDirection as Dir, ComparisonType};
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloComputation, InstrId, Literal, Op, Opcode, Scalar};

/// See the module docs.
pub struct SortExpander;

/// Whether `comp` is a comparator of `2 * n` parameters that applies lane by
/// lane and returns `pred`.
fn vectorizable(comp: &HloComputation, n: usize) -> bool {
    lanewise::applies_lanewise(comp, 2 * n).is_some_and(|root| root == ElementType::Pred)
}

impl Expander for SortExpander {
    fn name(&self) -> &'static str {
        "sort"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::Sort || types.is_empty() || types.iter().any(|t| t.is_complex()) {
            return None;
        }
        let mut plan = vec![
            (Opcode::While, vec![]),
            (Opcode::Call, vec![]),
            (Opcode::Add, vec![ElementType::S32]),
            (Opcode::Compare, tys(&[ElementType::S32, ElementType::Pred])),
        ];
        for &t in types {
            plan.extend([
                (Opcode::Transpose, vec![t]),
                (Opcode::Reshape, vec![t]),
                (Opcode::Slice, vec![t]),
                (Opcode::Concatenate, vec![t]),
                (Opcode::Select, tys(&[t, ElementType::Pred])),
            ]);
        }
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::Sort {
            dimension,
            comparator,
            ..
        } = instr.op
        else {
            return false;
        };
        let n = instr.operands.len();
        let Ok(comp) = b.computation(comparator) else {
            return false;
        };
        let Ok((_, dims)) = (match instr.operands.first() {
            Some(&o) => b.array(o),
            None => return false,
        }) else {
            return false;
        };
        dimension < dims.len()
            && dims[dimension] <= i32::MAX as usize
            && instr
                .operands
                .iter()
                .all(|&o| b.array(o).is_ok_and(|(_, d)| d == dims))
            && vectorizable(comp, n)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::Sort {
            dimension,
            comparator,
            ..
        } = instr.op
        else {
            return Err(Error::invalid_argument("not a sort"));
        };
        let mut types = Vec::new();
        let mut dims = Vec::new();
        for &o in &instr.operands {
            let (t, d) = b.array(o)?;
            types.push(t);
            dims = d;
        }
        let comp = b.computation(comparator)?.clone();
        let built = build_sort(&types, &dims, dimension, &comp)?;
        let callee = b.attach(&built)?;
        Ok(b.add(
            instr.shape.clone(),
            Op::Call { to_apply: callee },
            instr.operands.clone(),
        ))
    }
}

/// One phase on `[rows, n]` arrays: compare-exchange the pairs starting at
/// `start` (0 or 1).
fn phase(
    bb: &mut HloBuilder,
    comp: &HloComputation,
    ops: &[Value],
    rows: usize,
    n: usize,
    start: usize,
) -> Result<Vec<Value>> {
    let pairs = (n - start) / 2;
    if pairs == 0 {
        return Ok(ops.to_vec());
    }
    let end = start + 2 * pairs;
    let half = [rows, pairs];
    let mut lefts = Vec::new();
    let mut rights = Vec::new();
    let mut args = Vec::new();
    for &x in ops {
        let l = bb.slice(x, &[0, start], &[rows, end], &[1, 2])?;
        let r = bb.slice(x, &[0, start + 1], &[rows, end], &[1, 2])?;
        // less(right, left): the right one moves left only if strictly less.
        args.extend([r, l]);
        lefts.push(l);
        rights.push(r);
    }
    let swap = lanewise::apply(bb, comp, &args, &half)?;
    let mut out = Vec::new();
    for ((&x, l), r) in ops.iter().zip(lefts).zip(rights) {
        let new_l = bb.select(swap, r, l)?;
        let new_r = bb.select(swap, l, r)?;
        let new_l = bb.reshape(new_l, &[rows, pairs, 1])?;
        let new_r = bb.reshape(new_r, &[rows, pairs, 1])?;
        let both = bb.concatenate(&[new_l, new_r], 2)?;
        let mid = bb.reshape(both, &[rows, 2 * pairs])?;
        let mut parts = Vec::new();
        if start > 0 {
            parts.push(bb.slice(x, &[0, 0], &[rows, start], &[1, 1])?);
        }
        parts.push(mid);
        if end < n {
            parts.push(bb.slice(x, &[0, end], &[rows, n], &[1, 1])?);
        }
        out.push(if parts.len() == 1 {
            mid
        } else {
            bb.concatenate(&parts, 1)?
        });
    }
    Ok(out)
}

fn s32(bb: &mut HloBuilder, v: i32) -> Result<Value> {
    bb.constant(Literal::from_scalar(Scalar::S32(v)))
}

/// The sort of operands of `types` and `dims` along `dim` by `comp`, as a
/// computation of the operands returning what the `sort` returns.
fn build_sort(
    types: &[ElementType],
    dims: &[usize],
    dim: usize,
    comp: &HloComputation,
) -> Result<Computation> {
    let n = *dims
        .get(dim)
        .ok_or_else(|| Error::invalid_argument("sort dimension out of range"))?;
    let rows: usize = dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != dim)
        .map(|(_, &d)| d)
        .product();
    let mut perm: Vec<usize> = (0..dims.len()).filter(|&i| i != dim).collect();
    perm.push(dim);
    let moved: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    let mut f = HloBuilder::new("sort_network");
    let mut flat = Vec::new();
    for (i, &t) in types.iter().enumerate() {
        let p = f.parameter(i, Shape::array(t, dims.to_vec()), &format!("operand{i}"))?;
        let tr = f.transpose(p, &perm)?;
        flat.push(f.reshape(tr, &[rows, n])?);
    }
    let sorted = if n > 1 {
        let state_shape = {
            let mut s = vec![Shape::scalar(ElementType::S32)];
            s.extend(types.iter().map(|&t| Shape::array(t, vec![rows, n])));
            Shape::tuple(s)
        };
        let open = |bb: &mut HloBuilder| -> Result<(Value, Vec<Value>)> {
            let p = bb.parameter(0, state_shape.clone(), "state")?;
            let i = bb.get_tuple_element(p, 0)?;
            let ops = (0..types.len())
                .map(|k| bb.get_tuple_element(p, k + 1))
                .collect::<Result<Vec<_>>>()?;
            Ok((i, ops))
        };
        let passes = i32::try_from(n.div_ceil(2))
            .map_err(|_| Error::invalid_argument("sort dimension too long"))?;
        let mut cb = HloBuilder::new("sort_network_cond");
        let (i, _) = open(&mut cb)?;
        let limit = s32(&mut cb, passes)?;
        let go = cb.compare(i, limit, Dir::Lt)?;
        let cond = cb.build_computation(go)?;
        let mut body = HloBuilder::new("sort_network_body");
        let (i, ops) = open(&mut body)?;
        let ops = phase(&mut body, comp, &ops, rows, n, 0)?;
        let ops = phase(&mut body, comp, &ops, rows, n, 1)?;
        let one = s32(&mut body, 1)?;
        let next = body.binary(BinaryOp::Add, i, one)?;
        let mut state = vec![next];
        state.extend(ops);
        let out = body.tuple(&state)?;
        let body = body.build_computation(out)?;
        let zero = s32(&mut f, 0)?;
        let mut init = vec![zero];
        init.extend(flat);
        let init = f.tuple(&init)?;
        let w = f.while_loop(&cond, &body, init)?;
        (0..types.len())
            .map(|k| f.get_tuple_element(w, k + 1))
            .collect::<Result<Vec<_>>>()?
    } else {
        flat
    };
    let mut results = Vec::new();
    for s in sorted {
        let r = f.reshape(s, &moved)?;
        results.push(f.transpose(r, &inverse)?);
    }
    let root = if results.len() == 1 {
        results[0]
    } else {
        f.tuple(&results)?
    };
    f.build_computation(root)
}

/// See the module docs.
pub struct TopKExpander;

impl Expander for TopKExpander {
    fn name(&self) -> &'static str {
        "topk"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::TopK || types.iter().any(|t| t.is_complex()) {
            return None;
        }
        let value = types
            .iter()
            .copied()
            .find(|&t| t != ElementType::S32)
            .unwrap_or(ElementType::S32);
        Some(vec![
            (Opcode::Call, vec![]),
            (Opcode::Sort, tys(&[value, ElementType::S32])),
            (Opcode::Iota, vec![ElementType::S32]),
            (Opcode::Slice, vec![value]),
            (Opcode::Slice, vec![ElementType::S32]),
        ])
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::TopK { k, .. } = instr.op else {
            return false;
        };
        instr.operands.len() == 1
            && b.array(instr.operands[0]).is_ok_and(|(t, d)| {
                !t.is_complex() && d.last().is_some_and(|&n| k <= n && n <= i32::MAX as usize)
            })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::TopK { k, largest } = instr.op else {
            return Err(Error::invalid_argument("not a topk"));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        let last = dims
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::invalid_argument("topk of a scalar"))?;
        let mut cmp = HloBuilder::new("topk_order");
        let lhs = cmp.parameter(0, Shape::scalar(t), "lhs")?;
        let rhs = cmp.parameter(1, Shape::scalar(t), "rhs")?;
        cmp.parameter(2, Shape::scalar(ElementType::S32), "lhs_index")?;
        cmp.parameter(3, Shape::scalar(ElementType::S32), "rhs_index")?;
        let dir = if largest { Dir::Gt } else { Dir::Lt };
        // Floats in total order; integers and pred in their natural order.
        let order = if t.is_float() {
            cmp.compare_with_type(lhs, rhs, dir, ComparisonType::TotalOrder)?
        } else {
            cmp.compare(lhs, rhs, dir)?
        };
        let cmp = cmp.build_computation(order)?;
        let mut f = HloBuilder::new("topk");
        let xp = f.parameter(0, Shape::array(t, dims.clone()), "x")?;
        let iota = f.iota(Shape::array(ElementType::S32, dims.clone()), last)?;
        let sorted = f.sort(&[xp, iota], &cmp, last, true)?;
        let mut limits = dims.clone();
        limits[last] = k;
        let zeros = vec![0; dims.len()];
        let ones = vec![1; dims.len()];
        let mut parts = Vec::new();
        for i in 0..2 {
            let s = f.get_tuple_element(sorted, i)?;
            parts.push(f.slice(s, &zeros, &limits, &ones)?);
        }
        let root = f.tuple(&parts)?;
        let built = f.build_computation(root)?;
        let callee = b.attach(&built)?;
        Ok(b.add(instr.shape.clone(), Op::Call { to_apply: callee }, vec![x]))
    }
}
/// XLA's `TopK` custom call → the `topk` op (largest first in total order,
/// ties by index: what the target computes, whatever comparator XLA attached),
/// which [`TopKExpander`] legalizes in turn. A custom call's element types
/// are not part of its key, so the plan lists nothing; the `topk` it emits is
/// checked like any other instruction.
pub struct TopKCustomCallExpander;

/// The target name of XLA's `TopK` custom call.
pub const TOPK_TARGET: &str = "TopK";

impl Expander for TopKCustomCallExpander {
    fn name(&self) -> &'static str {
        "TopK custom call"
    }
    fn plan(&self, op: Opcode, _types: &[ElementType]) -> Option<Vec<Emitted>> {
        (op == Opcode::CustomCall).then(Vec::new)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::CustomCall(attrs) = &instr.op else {
            return false;
        };
        let leaves = instr.shape.tuple_shapes();
        attrs.target == TOPK_TARGET
            && instr.operands.len() == 1
            && leaves.len() == 2
            && leaves.iter().all(|l| l.is_array() && l.rank() >= 1)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let shape = b.instr(id).shape.clone();
        let k = shape
            .tuple_shapes()
            .first()
            .and_then(|v| v.dims().last().copied())
            .ok_or_else(|| Error::invalid_argument("TopK: the result is not (values, indices)"))?;
        let x = b.operand(0)?;
        Ok(b.add(shape, Op::TopK { k, largest: true }, vec![x]))
    }
}
