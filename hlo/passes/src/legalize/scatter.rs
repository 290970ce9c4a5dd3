//! `select-and-scatter` as window-offset slices, lane-wise selection and
//! padded scatters.
//!
//! For every window offset `k` (row-major), a strided `slice` of the padded
//! operand holds each window's `k`-th element, and the same slice of a padded
//! validity mask says whether it is a real element (padding is skipped, as
//! the evaluator skips it). Scanning `k` in order, a lane takes element `k`
//! when it is valid and either nothing is selected yet or
//! `select(selected, element)` is false — the evaluator's rule, with the
//! selector applied lane-wise ([`super::lanewise`]). Then the result starts
//! as `init` everywhere; for each `k` in *reverse* row-major order, the source
//! values of the windows that selected `k` are placed at their operand
//! positions (a `pad` with interior padding `stride - 1` and edge `k`) and
//! combined there with `scatter(result, source)`. For one operand position the
//! windows reaching it with larger `k` come earlier in row-major source order,
//! so combinations happen in the evaluator's order: exact, whatever the
//! combiner.
//!
//! Applies without base or window dilation, with non-negative padding,
//! strides of at least 1, at most [`MAX_WINDOW`] window positions, and
//! selector and combiner made of elementwise scalar ops. The work lives in a
//! new computation that the expansion `call`s.

use super::{lanewise, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode, PadDim, Scalar, SliceDim, Window};

/// The most window positions expanded (each costs a few ops per lane).
const MAX_WINDOW: usize = 1024;

/// See the module docs.
pub struct SelectAndScatterExpander;

impl Expander for SelectAndScatterExpander {
    fn name(&self) -> &'static str {
        "select-and-scatter"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        if op != Opcode::SelectAndScatter || t.is_complex() {
            return None;
        }
        let pred = ElementType::Pred;
        let s32 = ElementType::S32;
        let mut plan = Vec::new();
        for ty in [t, pred, s32] {
            plan.extend([
                (Opcode::Pad, vec![ty]),
                (Opcode::Slice, vec![ty]),
                (Opcode::Broadcast, vec![ty]),
                (Opcode::Select, tys(&[ty, pred])),
            ]);
        }
        plan.extend([
            (Opcode::Compare, tys(&[s32, pred])),
            (Opcode::And, vec![pred]),
            (Opcode::Or, vec![pred]),
            (Opcode::Not, vec![pred]),
            (Opcode::Call, vec![]),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::SelectAndScatter {
            window,
            select,
            scatter,
        } = &instr.op
        else {
            return false;
        };
        let [x, s, init] = instr.operands[..] else {
            return false;
        };
        let (Ok((t, dims)), Ok((st, sdims)), Ok((it, idims))) =
            (b.array(x), b.array(s), b.array(init))
        else {
            return false;
        };
        let (Ok(sel), Ok(sc)) = (b.computation(*select), b.computation(*scatter)) else {
            return false;
        };
        let positions = window
            .dims
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.size));
        st == t
            && it == t
            && idims.is_empty()
            && window.dims.len() == dims.len()
            && sdims.len() == dims.len()
            && sdims.iter().all(|&n| n > 0)
            && matches!(positions, Some(1..=MAX_WINDOW))
            && window.dims.iter().all(|d| {
                d.base_dilation == 1
                    && d.window_dilation == 1
                    && !d.window_reversal
                    && d.stride >= 1
                    && d.padding_low >= 0
                    && d.padding_high >= 0
            })
            && lanewise::applies_lanewise(sel, 2) == Some(ElementType::Pred)
            && lanewise::applies_lanewise(sc, 2) == Some(t)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::SelectAndScatter {
            window,
            select,
            scatter,
        } = &instr.op
        else {
            return Err(Error::invalid_argument("not a select-and-scatter"));
        };
        let (x, s) = (b.operand(0)?, b.operand(1)?);
        let (t, dims) = b.array(x)?;
        let (_, sdims) = b.array(s)?;
        let sel = b.computation(*select)?.clone();
        let sc = b.computation(*scatter)?.clone();
        let built = build(t, &dims, &sdims, window, &sel, &sc)?;
        let callee = b.attach(&built)?;
        Ok(b.add(
            instr.shape.clone(),
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            instr.operands.clone(),
        ))
    }
}

fn scalar(bb: &mut HloBuilder, v: Scalar) -> Result<Value> {
    bb.constant(Literal::from_scalar(v))
}

/// The window offsets in row-major order.
fn offsets(window: &Window) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    let mut k = vec![0usize; window.dims.len()];
    loop {
        all.push(k.clone());
        if !super::window::next_window_offset(&mut k, window) {
            return all;
        }
    }
}

fn build(
    t: ElementType,
    dims: &[usize],
    sdims: &[usize],
    window: &Window,
    sel: &hlo_ir::HloComputation,
    sc: &hlo_ir::HloComputation,
) -> Result<Computation> {
    let mut f = HloBuilder::new("select_and_scatter");
    let x = f.parameter(0, Shape::array(t, dims.to_vec()), "operand")?;
    let src = f.parameter(1, Shape::array(t, sdims.to_vec()), "source")?;
    let init = f.parameter(2, Shape::scalar(t), "init")?;
    let edges = super::window::edge_padding(window);
    let padded_dims: Vec<usize> = dims
        .iter()
        .zip(&window.dims)
        .map(|(&n, d)| {
            let size = i64::try_from(n)
                .ok()
                .map(|n| n + d.padding_low + d.padding_high);
            size.and_then(|s| usize::try_from(s).ok())
                .ok_or_else(|| Error::invalid_argument("select-and-scatter pads too far"))
        })
        .collect::<Result<_>>()?;
    let xp = f.pad(x, init, &edges)?;
    let yes = scalar(&mut f, Scalar::Pred(true))?;
    let no = scalar(&mut f, Scalar::Pred(false))?;
    let ones = f.broadcast(yes, dims)?;
    let mp = f.pad(ones, no, &edges)?;
    // The slice of window offset `k` for every source element.
    let slice_at = |k: &[usize]| -> Result<Vec<SliceDim>> {
        window
            .dims
            .iter()
            .enumerate()
            .map(|(d, w)| {
                super::window::window_slice(k[d], w, sdims[d], padded_dims[d]).ok_or_else(|| {
                    Error::invalid_argument("select-and-scatter window runs past the operand")
                })
            })
            .collect()
    };
    let all = offsets(window);
    // Selection.
    let (mut sel_v, mut sel_k, mut sel_ok) = (None, None, None);
    for (i, k) in all.iter().enumerate() {
        let slice = slice_at(k)?;
        let starts: Vec<usize> = slice.iter().map(|s| s.start).collect();
        let limits: Vec<usize> = slice.iter().map(|s| s.limit).collect();
        let strides: Vec<usize> = slice.iter().map(|s| s.stride).collect();
        let v = f.slice(xp, &starts, &limits, &strides)?;
        let m = f.slice(mp, &starts, &limits, &strides)?;
        let idx = scalar(&mut f, Scalar::S32(i as i32))?;
        let idx = f.broadcast(idx, sdims)?;
        let (Some(cur_v), Some(cur_k), Some(cur_ok)) = (sel_v, sel_k, sel_ok) else {
            (sel_v, sel_k, sel_ok) = (Some(v), Some(idx), Some(m));
            continue;
        };
        let keep = lanewise::apply(&mut f, sel, &[cur_v, v], sdims)?;
        let replace = f.unary(UnaryOp::Not, keep)?;
        let empty = f.unary(UnaryOp::Not, cur_ok)?;
        let want = f.binary(BinaryOp::Or, empty, replace)?;
        let take = f.binary(BinaryOp::And, m, want)?;
        sel_v = Some(f.select(take, v, cur_v)?);
        sel_k = Some(f.select(take, idx, cur_k)?);
        sel_ok = Some(f.binary(BinaryOp::Or, cur_ok, m)?);
    }
    let (Some(sel_k), Some(sel_ok)) = (sel_k, sel_ok) else {
        return Err(Error::invalid_argument(
            "select-and-scatter with an empty window",
        ));
    };
    // Scatter, last window offset first (see the module docs).
    let mut out = f.broadcast(init, &padded_dims)?;
    let zero = scalar(&mut f, Scalar::zero(t))?;
    for (i, k) in all.iter().enumerate().rev() {
        let idx = scalar(&mut f, Scalar::S32(i as i32))?;
        let idx = f.broadcast(idx, sdims)?;
        let here = f.compare(sel_k, idx, Dir::Eq)?;
        let here = f.binary(BinaryOp::And, here, sel_ok)?;
        let place: Vec<PadDim> = window
            .dims
            .iter()
            .enumerate()
            .map(|(d, w)| {
                // Source `o` lands at `o * stride + k`; the rest is padding.
                let span = (sdims[d] - 1) * w.stride + 1;
                PadDim {
                    low: k[d] as i64,
                    high: padded_dims[d] as i64 - (k[d] + span) as i64,
                    interior: w.stride - 1,
                }
            })
            .collect();
        let mask = f.pad(here, no, &place)?;
        let vals = f.pad(src, zero, &place)?;
        let combined = lanewise::apply(&mut f, sc, &[out, vals], &padded_dims)?;
        out = f.select(mask, combined, out)?;
    }
    let crop: Vec<usize> = window.dims.iter().map(|d| d.padding_low as usize).collect();
    let limits: Vec<usize> = crop.iter().zip(dims).map(|(l, n)| l + n).collect();
    let ones_stride = vec![1; dims.len()];
    let result = f.slice(out, &crop, &limits, &ones_stride)?;
    f.build_computation(result)
}
