//! `pad` and `reduce-window` from slices, concatenations and `reduce`.
//!
//! * `pad`: interior padding of `k` along a dimension of `n` is a new axis
//!   after it, concatenated with a `k`-wide broadcast block of the padding value,
//!   reshaped back (`n * (k + 1)`) and sliced to drop the last `k`; then
//!   negative edges become a `slice`, positive ones a `concatenate` with
//!   broadcast blocks. Exact (only data movement).
//! * `reverse`: one size-1 `slice` per index along each reversed dimension,
//!   concatenated in the opposite order (dimensions up to [`MAX_REVERSE`]).
//!   Exact.
//! * `reduce-window` (one input, no base dilation): every window offset `k` is
//!   a strided `slice` of the (padded) input holding, for every output, its
//!   `k`-th window element; the slices are stacked along a new last dimension
//!   in row-major window order and reduced over it with the same reducer. The
//!   evaluator folds each window's valid elements in row-major window order
//!   starting from the init, which is what `reduce` over the stack does, so the
//!   result is the same bits, provided padding positions (which
//!   `reduce-window` skips but the stack holds) are neutral: with padding, the
//!   expansion applies only when the init is a constant identity of a reducer
//!   that is one binary op (`add` of ±0, `multiply` of 1, `maximum` of -inf or
//!   the least integer, `minimum` of +inf or the greatest, `or`/`and` of
//!   false/true). That covers the windows JAX emits (pooling, cumulative sums).
//!   The stack holds `window size × output size` elements, so windows are
//!   bounded ([`MAX_STACK`]).

use super::{single, tys, Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::native::Scalar;
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode, PadDim, SliceDim, Window};

/// The most elements a `reduce-window` expansion may stack.
pub const MAX_STACK: usize = 1 << 24;

/// The longest dimension [`ReverseExpander`] unrolls.
pub const MAX_REVERSE: usize = 4096;

/// `pad` → `slice` + `concatenate` of broadcast blocks (+ `reshape` for
/// interior padding).
pub struct PadExpander;

impl Expander for PadExpander {
    fn name(&self) -> &'static str {
        "pad"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Pad).then(|| {
            vec![
                (Opcode::Slice, vec![t]),
                (Opcode::Concatenate, vec![t]),
                (Opcode::Broadcast, vec![t]),
                (Opcode::Reshape, vec![t]),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::Pad { config } = b.instr(id).op.clone() else {
            return Err(Error::internal("pad expander on a non-pad"));
        };
        let (x, v) = (b.operand(0)?, b.operand(1)?);
        pad_with(b, x, v, &config)
    }
}

/// A window's edge padding as a `pad` configuration (no interior padding).
pub(super) fn edge_padding(window: &Window) -> Vec<PadDim> {
    window
        .dims
        .iter()
        .map(|d| PadDim {
            low: d.padding_low,
            high: d.padding_high,
            interior: 0,
        })
        .collect()
}

/// `x` padded with the scalar `v` by `config`.
fn pad_with(b: &mut Emitter<'_, '_>, x: InstrId, v: InstrId, config: &[PadDim]) -> Result<InstrId> {
    let (t, mut dims) = b.array(x)?;
    if config.len() != dims.len() {
        return Err(Error::invalid_argument(format!(
            "pad: {} padding dimensions for an operand of rank {}",
            config.len(),
            dims.len()
        )));
    }
    let crop = |p: i64| usize::try_from(-p).unwrap_or(0);
    let mut cur = x;
    // Interior padding first, as `pad` defines it; the edges apply to the
    // interior-padded array.
    for (dim, p) in config.iter().enumerate() {
        let (n, k) = (dims[dim], p.interior);
        if k == 0 || n == 0 {
            continue;
        }
        let overflow = || Error::invalid_argument("pad: interior padding overflows");
        let mut with_axis = dims.clone();
        with_axis.insert(dim + 1, 1);
        let r = b.add(Shape::array(t, with_axis.clone()), Op::Reshape, vec![cur]);
        with_axis[dim + 1] = k;
        let block = b.add(
            Shape::array(t, with_axis.clone()),
            Op::Broadcast { dimensions: vec![] },
            vec![v],
        );
        with_axis[dim + 1] = k.checked_add(1).ok_or_else(overflow)?;
        let joined = b.add(
            Shape::array(t, with_axis),
            Op::Concatenate { dimension: dim + 1 },
            vec![r, block],
        );
        let mut flat = dims.clone();
        flat[dim] = n.checked_mul(k + 1).ok_or_else(overflow)?;
        let flat_id = b.add(Shape::array(t, flat.clone()), Op::Reshape, vec![joined]);
        let slice: Vec<SliceDim> = flat
            .iter()
            .enumerate()
            .map(|(d, &len)| SliceDim {
                start: 0,
                limit: if d == dim { len - k } else { len },
                stride: 1,
            })
            .collect();
        dims[dim] = flat[dim] - k;
        cur = b.add(
            Shape::array(t, dims.clone()),
            Op::Slice { slice },
            vec![flat_id],
        );
    }
    for (dim, p) in config.iter().enumerate() {
        let (lo, hi) = (p.low.max(0) as usize, p.high.max(0) as usize);
        if lo == 0 && hi == 0 {
            continue;
        }
        let (_, cur_dims) = b.array(cur)?;
        let mut parts = Vec::with_capacity(3);
        let block = |b: &mut Emitter<'_, '_>, n: usize| {
            let mut bd = cur_dims.clone();
            bd[dim] = n;
            b.add(
                Shape::array(t, bd),
                Op::Broadcast { dimensions: vec![] },
                vec![v],
            )
        };
        if lo > 0 {
            parts.push(block(b, lo));
        }
        parts.push(cur);
        if hi > 0 {
            parts.push(block(b, hi));
        }
        let mut out = cur_dims.clone();
        out[dim] += lo + hi;
        cur = b.add(
            Shape::array(t, out),
            Op::Concatenate { dimension: dim },
            parts,
        );
    }
    // Negative padding crops, after the positive edges: a negative high may
    // crop into the low padding (`2_-2` on an empty dimension is valid).
    if config.iter().any(|d| d.low < 0 || d.high < 0) {
        let (_, padded) = b.array(cur)?;
        let mut slice = Vec::with_capacity(padded.len());
        let mut out = Vec::with_capacity(padded.len());
        for (&d, p) in padded.iter().zip(config) {
            let start = crop(p.low);
            let limit = d
                .checked_sub(crop(p.high))
                .filter(|&l| l >= start)
                .ok_or_else(|| Error::invalid_argument("pad crops more than the operand has"))?;
            slice.push(SliceDim {
                start,
                limit,
                stride: 1,
            });
            out.push(limit - start);
        }
        cur = b.add(Shape::array(t, out), Op::Slice { slice }, vec![cur]);
    }
    Ok(cur)
}

/// `reverse` → size-1 slices concatenated in reverse order.
pub struct ReverseExpander;

impl Expander for ReverseExpander {
    fn name(&self) -> &'static str {
        "reverse"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Reverse)
            .then(|| vec![(Opcode::Slice, vec![t]), (Opcode::Concatenate, vec![t])])
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let dims = b.instr(id).shape.dims();
        matches!(&b.instr(id).op, Op::Reverse { dimensions }
            if dimensions.iter().all(|&d| dims.get(d).is_some_and(|&n| n <= MAX_REVERSE)))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::Reverse { dimensions } = b.instr(id).op.clone() else {
            return Err(Error::internal("reverse expander on another op"));
        };
        let mut cur = b.operand(0)?;
        let (t, dims) = b.array(cur)?;
        for dim in dimensions {
            let n = *dims
                .get(dim)
                .ok_or_else(|| Error::invalid_argument("reverse: a dimension out of range"))?;
            if n <= 1 {
                continue;
            }
            let mut one = dims.clone();
            one[dim] = 1;
            let pieces: Vec<InstrId> = (0..n)
                .rev()
                .map(|i| {
                    let slice = dims
                        .iter()
                        .enumerate()
                        .map(|(d, &len)| match d == dim {
                            true => SliceDim {
                                start: i,
                                limit: i + 1,
                                stride: 1,
                            },
                            false => SliceDim {
                                start: 0,
                                limit: len,
                                stride: 1,
                            },
                        })
                        .collect();
                    b.add(Shape::array(t, one.clone()), Op::Slice { slice }, vec![cur])
                })
                .collect();
            cur = b.add(
                Shape::array(t, dims.clone()),
                Op::Concatenate { dimension: dim },
                pieces,
            );
        }
        Ok(cur)
    }
}

/// `reduce-window` → slices stacked and reduced.
pub struct ReduceWindowExpander;

impl Expander for ReduceWindowExpander {
    fn name(&self) -> &'static str {
        "reduce-window"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::ReduceWindow).then(|| {
            vec![
                (Opcode::Pad, vec![t]),
                (Opcode::Slice, vec![t]),
                (Opcode::Reshape, vec![t]),
                (Opcode::Concatenate, vec![t]),
                (Opcode::Reduce, tys(&[t])),
            ]
        })
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::ReduceWindow { window, to_apply } = &instr.op else {
            return false;
        };
        if instr.operands.len() != 2
            || !instr.shape.is_array()
            || window
                .dims
                .iter()
                .any(|d| d.base_dilation != 1 || d.stride == 0)
        {
            return false;
        }
        let k: Option<usize> = window
            .dims
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.size));
        let stack = k.and_then(|k| k.checked_mul(instr.shape.element_count()));
        if !matches!(stack, Some(s) if s <= MAX_STACK) || k == Some(0) {
            return false;
        }
        let padded = window
            .dims
            .iter()
            .any(|d| d.padding_low != 0 || d.padding_high != 0);
        !padded || init_is_identity(b, instr.operands[1], *to_apply)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::ReduceWindow { window, to_apply } = &instr.op else {
            return Err(Error::internal("reduce-window expander on another op"));
        };
        let (x, init) = (b.operand(0)?, b.operand(1)?);
        let (t, in_dims) = b.array(x)?;
        let out_dims = instr.shape.dims().to_vec();
        if window.dims.len() != in_dims.len() || out_dims.len() != in_dims.len() {
            return Err(Error::invalid_argument(format!(
                "%{}: the window does not fit the operand",
                instr.name
            )));
        }
        let config = edge_padding(window);
        let padded = if config.iter().all(|p| p.low == 0 && p.high == 0) {
            x
        } else {
            let (_, pd) = b.array(x)?;
            let mut dims = Vec::with_capacity(pd.len());
            for (n, p) in pd.iter().zip(&config) {
                let size = i64::try_from(*n).ok().map(|n| n + p.low + p.high);
                dims.push(size.and_then(|s| usize::try_from(s).ok()).ok_or_else(|| {
                    Error::invalid_argument("reduce-window pads to a negative size")
                })?);
            }
            b.add(Shape::array(t, dims), Op::Pad { config }, vec![x, init])
        };
        let (_, padded_dims) = b.array(padded)?;
        let mut stack_dims = out_dims.clone();
        stack_dims.push(1);
        let mut slices = Vec::new();
        let mut offset = vec![0usize; window.dims.len()];
        loop {
            let mut slice = Vec::with_capacity(offset.len());
            for (d, w) in window.dims.iter().enumerate() {
                let dim =
                    window_slice(offset[d], w, out_dims[d], padded_dims[d]).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "%{}: the window runs past the operand",
                            instr.name
                        ))
                    })?;
                slice.push(dim);
            }
            let s = b.add(
                Shape::array(t, out_dims.clone()),
                Op::Slice { slice },
                vec![padded],
            );
            slices.push(b.add(Shape::array(t, stack_dims.clone()), Op::Reshape, vec![s]));
            if !next_window_offset(&mut offset, window) {
                break;
            }
        }
        let rank = out_dims.len();
        let stacked = if slices.len() == 1 {
            slices[0]
        } else {
            let mut all = out_dims.clone();
            all.push(slices.len());
            b.add(
                Shape::array(t, all),
                Op::Concatenate { dimension: rank },
                slices,
            )
        };
        Ok(b.add(
            Shape::array(t, out_dims),
            Op::Reduce {
                dimensions: vec![rank],
                to_apply: *to_apply,
            },
            vec![stacked, init],
        ))
    }
}

/// Steps `offset` to the next window position in row-major order; `false`
/// once every position has been visited.
pub(super) fn next_window_offset(offset: &mut [usize], window: &hlo_ir::Window) -> bool {
    for d in (0..offset.len()).rev() {
        offset[d] += 1;
        if offset[d] < window.dims.get(d).map_or(0, |w| w.size) {
            return true;
        }
        offset[d] = 0;
    }
    false
}

/// The strided slice of one dimension holding, for each of `out` outputs, the
/// element at window position `k`; `None` if it runs past `len`.
pub(super) fn window_slice(
    k: usize,
    w: &hlo_ir::WindowDim,
    out: usize,
    len: usize,
) -> Option<SliceDim> {
    let start = k.checked_mul(w.window_dilation)?;
    let limit = match out {
        0 => start,
        n => start.checked_add((n - 1).checked_mul(w.stride)?)? + 1,
    };
    (limit <= len).then_some(SliceDim {
        start,
        limit,
        stride: w.stride,
    })
}

/// Whether `init` is a constant identity of `reducer` (see the module docs).
fn init_is_identity(b: &Emitter<'_, '_>, init: InstrId, reducer: hlo_ir::CompId) -> bool {
    let Op::Constant { literal } = &b.instr(init).op else {
        return false;
    };
    let Ok(value) = literal.get_first() else {
        return false;
    };
    let Ok(comp) = b.computation(reducer) else {
        return false;
    };
    let root = comp.instr(comp.root);
    let Op::Binary(op) = root.op else {
        return false;
    };
    let params = comp.parameters();
    let binds_params = root.operands.len() == 2
        && params.len() == 2
        && root.operands.iter().all(|o| params.contains(o))
        && root.operands[0] != root.operands[1];
    if !binds_params {
        return false;
    }
    let ty = value.element_type();
    let is = |v: f64| matches!(super::scalar_of(ty, v), Ok(s) if same_value(&s, &value));
    match op {
        BinaryOp::Add => is(0.0) || is(-0.0),
        BinaryOp::Multiply => is(1.0),
        BinaryOp::Or | BinaryOp::Xor => is(0.0),
        BinaryOp::And => is(-1.0) || (ty == ElementType::Pred && is(1.0)),
        BinaryOp::Maximum => {
            (ty.is_float() && is(f64::NEG_INFINITY)) || is_int_extreme(&value, false)
        }
        BinaryOp::Minimum => (ty.is_float() && is(f64::INFINITY)) || is_int_extreme(&value, true),
        _ => false,
    }
}

/// Bitwise equality of two scalars (so `-0` differs from `+0`).
fn same_value(a: &Scalar, b: &Scalar) -> bool {
    let mut x = [0u8; 16];
    let mut y = [0u8; 16];
    let n = a.element_type().byte_size();
    a.element_type() == b.element_type() && {
        a.write_bytes(&mut x[..n]);
        b.write_bytes(&mut y[..n]);
        x == y
    }
}

/// Whether an integer scalar is its type's greatest (`max`) or least value.
fn is_int_extreme(v: &Scalar, max: bool) -> bool {
    match *v {
        Scalar::S8(x) => x == if max { i8::MAX } else { i8::MIN },
        Scalar::S16(x) => x == if max { i16::MAX } else { i16::MIN },
        Scalar::S32(x) => x == if max { i32::MAX } else { i32::MIN },
        Scalar::S64(x) => x == if max { i64::MAX } else { i64::MIN },
        Scalar::U8(x) => x == if max { u8::MAX } else { 0 },
        Scalar::U16(x) => x == if max { u16::MAX } else { 0 },
        Scalar::U32(x) => x == if max { u32::MAX } else { 0 },
        Scalar::U64(x) => x == if max { u64::MAX } else { 0 },
        _ => false,
    }
}
