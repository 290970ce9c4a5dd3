//! `sort` as a bitonic sorting network in a `while` loop, and `topk` as a
//! descending (or ascending) sort plus `slice`.
//!
//! `sort`: every operand is transposed to put the sort dimension last,
//! reshaped to `[rows, n]`, padded to rows of a power of two `N` and
//! flattened. Each `while` iteration is one stage of Batcher's bitonic
//! network on all rows at once: position `i` fetches its partner `i ^ j` with a
//! `gather` and both keep the right one of the pair, so a sort takes
//! `log2(N) (log2(N) + 1) / 2` iterations of elementwise work (210 for a
//! million elements), not `n`. The network is not stable by itself: lanes
//! carry their original positions, and the comparator's order is completed
//! with them (equivalent lanes in position order, padding last). So for a
//! comparator that is a strict weak order the result is the evaluator's
//! (stable merge sort) exactly, `is_stable` or not. (With a comparator that is
//! not one, XLA leaves the order implementation-defined, and the two may
//! differ.)
//!
//! The comparator is applied elementwise to whole `[rows * N]` arrays: its
//! instructions are copied with array shapes (parameters become the arrays,
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
use hlo_ir::attrs::{ComparisonDirection as Dir, ComparisonType, GatherDimensionNumbers, PadDim};
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloComputation, InstrId, Literal, Op, Opcode};

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
        let s32 = ElementType::S32;
        let pred = ElementType::Pred;
        let mut plan = vec![
            (Opcode::While, vec![]),
            (Opcode::Call, vec![]),
            (Opcode::Add, vec![s32]),
            (Opcode::Xor, vec![s32]),
            (Opcode::And, vec![s32]),
            (Opcode::ShiftRightLogical, vec![s32]),
            (Opcode::Compare, tys(&[s32, pred])),
            (Opcode::And, vec![pred]),
            (Opcode::Or, vec![pred]),
            (Opcode::Xor, vec![pred]),
            (Opcode::Select, tys(&[s32, pred])),
            (Opcode::Select, tys(&[pred, pred])),
            (Opcode::Iota, vec![s32]),
            (Opcode::Broadcast, vec![s32]),
            (Opcode::Reshape, vec![s32]),
            (Opcode::Gather, tys(&[s32, s32])),
        ];
        for &t in types {
            plan.extend([
                (Opcode::Transpose, vec![t]),
                (Opcode::Reshape, vec![t]),
                (Opcode::Pad, vec![t]),
                (Opcode::Slice, vec![t]),
                (Opcode::Gather, tys(&[t, s32])),
                (Opcode::Select, tys(&[t, pred])),
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
        let rows = dims
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != dimension)
            .try_fold(1usize, |acc, (_, &d)| acc.checked_mul(d));
        dimension < dims.len()
            && rows.is_some_and(|r| r == 0 || network_len(r, dims[dimension]).is_some())
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
        b.call_built(&built, instr.shape.clone(), instr.operands.clone())
    }
}

use super::s32_constant as s32;

/// `rows * n` rounded up to whole rows of a power of two, if the positions
/// fit in `s32` (the network computes partner positions in `s32`).
fn network_len(rows: usize, n: usize) -> Option<(usize, usize)> {
    let padded = n.checked_next_power_of_two()?;
    let total = rows.checked_mul(padded)?;
    (total <= i32::MAX as usize).then_some((padded, total))
}

/// `comp` (a strict weak order, `less`) made total and stable on lanes of
/// `[len]`: `before(a, b)` holds where lane `a` must precede lane `b`. A lane
/// is a value of every operand plus its original position `idx`; positions
/// `>= n` are padding, which follows everything. Equivalent lanes keep their
/// original order.
#[allow(clippy::too_many_arguments)]
fn before(
    bb: &mut HloBuilder,
    comp: &HloComputation,
    a: &[Value],
    a_idx: Value,
    b: &[Value],
    b_idx: Value,
    n: Value,
    len: usize,
) -> Result<Value> {
    let interleave = |x: &[Value], y: &[Value]| -> Vec<Value> {
        x.iter().zip(y).flat_map(|(&p, &q)| [p, q]).collect()
    };
    let a_less = lanewise::apply(bb, comp, &interleave(a, b), &[len])?;
    let b_less = lanewise::apply(bb, comp, &interleave(b, a), &[len])?;
    let a_valid = bb.compare(a_idx, n, Dir::Lt)?;
    let b_padding = bb.compare(b_idx, n, Dir::Ge)?;
    let a_first = bb.compare(a_idx, b_idx, Dir::Lt)?;
    // (!b_less & a_first) == (b_less ^ a_first) & a_first
    let tie = bb.binary(BinaryOp::Xor, b_less, a_first)?;
    let tie = bb.binary(BinaryOp::And, tie, a_first)?;
    let ordered = bb.binary(BinaryOp::Or, a_less, tie)?;
    let ordered = bb.binary(BinaryOp::Or, b_padding, ordered)?;
    bb.binary(BinaryOp::And, a_valid, ordered)
}

/// The sort of operands of `types` and `dims` along `dim` by `comp`, as a
/// computation of the operands returning what the `sort` returns.
///
/// Each row is padded to a power of two `N` and sorted by a bitonic network
/// (Batcher): `log2(N) * (log2(N) + 1) / 2` stages, one `while` iteration
/// each. A stage with block size `k` and distance `j` pairs position `i` with
/// `i ^ j` (fetched with a `gather`) and keeps the earlier of the pair at the
/// lower position where `i & k == 0`, at the higher elsewhere. The order is
/// made total with the original positions, so the result is the stable sort's
/// exactly, whatever `is_stable` says (for a comparator that is a strict weak
/// order; with one that is not, XLA leaves the order open).
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
    let sorted = if n > 1 && rows > 0 {
        let (padded, len) = network_len(rows, n)
            .ok_or_else(|| Error::invalid_argument("sort too large for the network"))?;
        let s32_len = Shape::array(ElementType::S32, vec![len]);
        let state_shape = {
            let mut s = vec![
                Shape::scalar(ElementType::S32),
                Shape::scalar(ElementType::S32),
                s32_len.clone(),
            ];
            s.extend(types.iter().map(|&t| Shape::array(t, vec![len])));
            Shape::tuple(s)
        };
        // (k, j, original positions, operands...)
        let open = |bb: &mut HloBuilder| -> Result<(Value, Value, Value, Vec<Value>)> {
            let p = bb.parameter(0, state_shape.clone(), "state")?;
            let k = bb.get_tuple_element(p, 0)?;
            let j = bb.get_tuple_element(p, 1)?;
            let idx = bb.get_tuple_element(p, 2)?;
            let ops = (0..types.len())
                .map(|o| bb.get_tuple_element(p, o + 3))
                .collect::<Result<Vec<_>>>()?;
            Ok((k, j, idx, ops))
        };
        let padded_s32 =
            i32::try_from(padded).map_err(|_| Error::invalid_argument("sort too large"))?;
        let n_s32 = i32::try_from(n).map_err(|_| Error::invalid_argument("sort too large"))?;

        let mut cb = HloBuilder::new("sort_network_cond");
        let (k, _, _, _) = open(&mut cb)?;
        let last = s32(&mut cb, padded_s32)?;
        let go = cb.compare(k, last, Dir::Le)?;
        let cond = cb.build_computation(go)?;

        let mut body = HloBuilder::new("sort_network_body");
        let (k, j, idx, ops) = open(&mut body)?;
        let at = body.iota(s32_len.clone(), 0)?;
        let jb = body.broadcast(j, &[len])?;
        let kb = body.broadcast(k, &[len])?;
        let partner = body.binary(BinaryOp::Xor, at, jb)?;
        let mask = s32(&mut body, padded_s32 - 1)?;
        let mask = body.broadcast(mask, &[len])?;
        let in_row = body.binary(BinaryOp::And, at, mask)?;
        let zero = s32(&mut body, 0)?;
        let zeros = body.broadcast(zero, &[len])?;
        let block_bit = body.binary(BinaryOp::And, in_row, kb)?;
        let ascending = body.compare(block_bit, zeros, Dir::Eq)?;
        let pair_bit = body.binary(BinaryOp::And, at, jb)?;
        let lower = body.compare(pair_bit, zeros, Dir::Eq)?;
        let dnums = GatherDimensionNumbers {
            offset_dims: vec![],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            operand_batching_dims: vec![],
            start_indices_batching_dims: vec![],
            index_vector_dim: 1,
        };
        let mut mine = vec![idx];
        mine.extend(ops.iter().copied());
        let theirs = mine
            .iter()
            .map(|&x| body.gather(x, partner, dnums.clone(), &[1], false))
            .collect::<Result<Vec<_>>>()?;
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        for (&m, &t) in mine.iter().zip(&theirs) {
            lo.push(body.select(lower, m, t)?);
            hi.push(body.select(lower, t, m)?);
        }
        let nb = s32(&mut body, n_s32)?;
        let nb = body.broadcast(nb, &[len])?;
        let hi_first = before(&mut body, comp, &hi[1..], hi[0], &lo[1..], lo[0], nb, len)?;
        let lo_first = before(&mut body, comp, &lo[1..], lo[0], &hi[1..], hi[0], nb, len)?;
        let swap = body.select(ascending, hi_first, lo_first)?;
        let next: Vec<Value> = mine
            .iter()
            .zip(&theirs)
            .map(|(&m, &t)| body.select(swap, t, m))
            .collect::<Result<_>>()?;
        // (k, j) -> (k, j / 2), or (2k, k) once j reaches 1.
        let one = s32(&mut body, 1)?;
        let merged = body.compare(j, one, Dir::Eq)?;
        let half = body.binary(BinaryOp::ShiftRightLogical, j, one)?;
        let doubled = body.binary(BinaryOp::Add, k, k)?;
        let next_k = body.select(merged, doubled, k)?;
        let next_j = body.select(merged, k, half)?;
        let mut state = vec![next_k, next_j];
        state.extend(next);
        let out = body.tuple(&state)?;
        let body = body.build_computation(out)?;

        let mut init = vec![s32(&mut f, 2)?, s32(&mut f, 1)?];
        init.push(f.iota(Shape::array(ElementType::S32, vec![rows, padded]), 1)?);
        for (&x, &t) in flat.iter().zip(types) {
            let fill = f.constant(Literal::zeros(&Shape::scalar(t)))?;
            let pad = [
                PadDim::default(),
                PadDim {
                    low: 0,
                    high: (padded - n) as i64,
                    interior: 0,
                },
            ];
            init.push(f.pad(x, fill, &pad)?);
        }
        for v in init.iter_mut().skip(2) {
            *v = f.reshape(*v, &[len])?;
        }
        let init = f.tuple(&init)?;
        let w = f.while_loop(&cond, &body, init)?;
        let mut out = Vec::new();
        for o in 0..types.len() {
            let x = f.get_tuple_element(w, o + 3)?;
            let x = f.reshape(x, &[rows, padded])?;
            out.push(f.slice(x, &[0, 0], &[rows, n], &[1, 1])?);
        }
        out
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
        Ok(b.add(
            instr.shape.clone(),
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            vec![x],
        ))
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
