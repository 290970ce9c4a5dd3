//! Ops that move elements without arithmetic: broadcast, transpose, slice,
//! dynamic-slice, dynamic-update-slice, concatenate, pad, reverse, iota.
//!
//! All but iota and pad are planned at compile time as [`StridedCopy`]s (see
//! [`super::strided`]); dynamic slices add a start offset read from their index
//! operands at run time, clamped as XLA clamps (`start = clamp(start, 0,
//! operand_dim - slice_dim)`). A pad is written row by row ([`PadRows`]), so
//! the padding and the operand's elements are stored in one pass.

use super::strided::StridedCopy;
use super::types::Pred;
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, ExecuteContext, Thunk};
use crate::with_real;
use num_traits::AsPrimitive;
use platform_api::hlo::{InstrId, Op};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::Broadcast { dimensions } => broadcast(ctx, id, dimensions),
        Op::Transpose { dimensions } => transpose(ctx, id, dimensions),
        Op::Slice { slice } => {
            let operand = ctx.operand_array(instr, 0)?;
            let result = ctx.result_array(instr)?;
            if slice.len() != operand.rank() {
                return Err(Error::invalid_argument(format!(
                    "slice %{}: {} slice dimensions for an operand of rank {}",
                    instr.name,
                    slice.len(),
                    operand.rank()
                )));
            }
            let strides = StridedCopy::row_major(&operand.dims);
            let mut offset = 0isize;
            let mut src_strides = Vec::new();
            for (d, s) in slice.iter().enumerate() {
                if !s.is_empty() && (s.start >= operand.dims[d] || s.limit > operand.dims[d]) {
                    return Err(Error::invalid_argument(format!(
                        "slice %{}: [{}:{}] is outside dimension {d} of {operand}",
                        instr.name, s.start, s.limit
                    )));
                }
                offset += s.start as isize * strides[d];
                src_strides.push(strides[d] * s.stride as isize);
            }
            copy_thunk(ctx, id, &result.dims, offset, &src_strides)
        }
        Op::Reverse { dimensions } => {
            let operand = ctx.operand_array(instr, 0)?;
            let strides = StridedCopy::row_major(&operand.dims);
            let mut offset = 0isize;
            let mut src_strides = strides.clone();
            for &d in dimensions {
                if d >= operand.rank() {
                    return Err(Error::invalid_argument(format!(
                        "reverse %{}: dimension {d} out of range",
                        instr.name
                    )));
                }
                if operand.dims[d] > 0 {
                    offset += (operand.dims[d] as isize - 1) * strides[d];
                }
                src_strides[d] = -strides[d];
            }
            copy_thunk(ctx, id, &operand.dims, offset, &src_strides)
        }
        Op::DynamicSlice { sizes } => dynamic_slice(ctx, id, sizes),
        Op::DynamicUpdateSlice => dynamic_update_slice(ctx, id),
        Op::Concatenate { dimension } => concatenate(ctx, id, *dimension),
        Op::Pad { config } => pad(ctx, id, config),
        Op::Iota { dimension } => iota(ctx, id, *dimension),
        _ => Err(Error::internal(format!(
            "%{} is not a data-movement op",
            instr.name
        ))),
    }
}

/// A thunk copying operand 0 through a strided view into the result.
fn copy_thunk(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    dims: &[usize],
    src_offset: isize,
    src_strides: &[isize],
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    if dims != result.dims.as_slice() {
        return Err(Error::invalid_argument(format!(
            "%{}: computed dimensions {dims:?} differ from the result shape {result}",
            instr.name
        )));
    }
    let width = result.element_type.byte_size();
    let plan = StridedCopy::new(width, dims, src_strides, &StridedCopy::row_major(dims));
    let (src, out) = (ctx.operand_slice(instr, 0)?, ctx.result_slice(id)?);
    let byte_offset = src_offset * width as isize;
    Ok(thunk(
        instr.name.clone(),
        instr.opcode().name(),
        move |ctx| {
            // SAFETY: the plan stays inside the operand (checked against its shape
            // at compile time) and writes exactly the result, a different buffer.
            unsafe { plan.run(ctx.ptr(src).offset(byte_offset), ctx.ptr(out)) };
            Ok(())
        },
    ))
}

fn broadcast(ctx: &LowerCtx<'_>, id: InstrId, dimensions: &[usize]) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let result = ctx.result_array(instr)?;
    if dimensions.len() != operand.rank() {
        return Err(Error::invalid_argument(format!(
            "broadcast %{}: {} dimensions given for an operand of rank {}",
            instr.name,
            dimensions.len(),
            operand.rank()
        )));
    }
    let in_strides = StridedCopy::row_major(&operand.dims);
    let mut src_strides = vec![0isize; result.rank()];
    for (k, &d) in dimensions.iter().enumerate() {
        if d >= result.rank() || result.dims[d] != operand.dims[k] {
            return Err(Error::invalid_argument(format!(
                "broadcast %{}: operand dimension {k} ({}) cannot become result dimension {d} of {result}",
                instr.name, operand.dims[k]
            )));
        }
        src_strides[d] = in_strides[k];
    }
    copy_thunk(ctx, id, &result.dims, 0, &src_strides)
}

fn transpose(ctx: &LowerCtx<'_>, id: InstrId, perm: &[usize]) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let mut seen = perm.to_vec();
    seen.sort_unstable();
    if seen != (0..operand.rank()).collect::<Vec<_>>() {
        return Err(Error::invalid_argument(format!(
            "transpose %{}: {perm:?} is not a permutation of {} dimensions",
            instr.name,
            operand.rank()
        )));
    }
    let in_strides = StridedCopy::row_major(&operand.dims);
    let dims: Vec<usize> = perm.iter().map(|&p| operand.dims[p]).collect();
    let src_strides: Vec<isize> = perm.iter().map(|&p| in_strides[p]).collect();
    copy_thunk(ctx, id, &dims, 0, &src_strides)
}

/// Reads a scalar start index of any integer type, widened to i64.
///
/// # Safety
/// `ptr` must point at one element of `ty`.
pub(crate) unsafe fn read_index(ptr: *const u8, ty: ElementType) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        match ty {
            ElementType::S8 => ptr.cast::<i8>().read() as i64,
            ElementType::S16 => ptr.cast::<i16>().read() as i64,
            ElementType::S32 => ptr.cast::<i32>().read() as i64,
            ElementType::S64 => ptr.cast::<i64>().read(),
            ElementType::U8 => ptr.read() as i64,
            ElementType::U16 => ptr.cast::<u16>().read() as i64,
            ElementType::U32 => ptr.cast::<u32>().read() as i64,
            // u64 above i64::MAX clamps to the largest start like any large index.
            ElementType::U64 => ptr.cast::<u64>().read().min(i64::MAX as u64) as i64,
            _ => 0,
        }
    }
}

/// Start indices from scalar operands `first..first+rank`, clamped so a window
/// of `window` fits in `dims`; returns the element offset.
struct DynamicStart {
    indices: Vec<(BufferSlice, ElementType)>,
    limits: Vec<i64>,
    strides: Vec<isize>,
}

impl DynamicStart {
    fn new(
        ctx: &LowerCtx<'_>,
        instr: &platform_api::HloInstruction,
        first: usize,
        dims: &[usize],
        window: &[usize],
    ) -> Result<Self> {
        let rank = dims.len();
        if window.len() != rank || instr.operands.len() < first + rank {
            return Err(Error::invalid_argument(format!(
                "%{}: needs {rank} scalar start indices and a window of rank {rank}",
                instr.name
            )));
        }
        let mut indices = Vec::new();
        let mut limits = Vec::new();
        for d in 0..rank {
            let shape = ctx.operand_array(instr, first + d)?;
            if shape.rank() != 0 || !shape.element_type.is_integer() {
                return Err(Error::invalid_argument(format!(
                    "%{}: start index {d} must be an integer scalar, not {shape}",
                    instr.name
                )));
            }
            if window[d] > dims[d] {
                return Err(Error::invalid_argument(format!(
                    "%{}: window {window:?} does not fit in {dims:?}",
                    instr.name
                )));
            }
            indices.push((ctx.operand_slice(instr, first + d)?, shape.element_type));
            limits.push((dims[d] - window[d]) as i64);
        }
        Ok(DynamicStart {
            indices,
            limits,
            strides: StridedCopy::row_major(dims),
        })
    }

    fn offset(&self, ctx: &ExecuteContext<'_>) -> isize {
        let mut offset = 0isize;
        for (d, (slice, ty)) in self.indices.iter().enumerate() {
            // SAFETY: a scalar of the checked integer type.
            let start = unsafe { read_index(ctx.ptr(*slice), *ty) };
            offset += start.clamp(0, self.limits[d]) as isize * self.strides[d];
        }
        offset
    }
}

fn dynamic_slice(ctx: &LowerCtx<'_>, id: InstrId, sizes: &[usize]) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let result = ctx.result_array(instr)?;
    if sizes != result.dims.as_slice() {
        return Err(Error::invalid_argument(format!(
            "dynamic-slice %{}: sizes {sizes:?} differ from the result {result}",
            instr.name
        )));
    }
    let start = DynamicStart::new(ctx, instr, 1, &operand.dims, sizes)?;
    let width = result.element_type.byte_size();
    let plan = StridedCopy::new(
        width,
        sizes,
        &StridedCopy::row_major(&operand.dims),
        &StridedCopy::row_major(sizes),
    );
    let (src, out) = (ctx.operand_slice(instr, 0)?, ctx.result_slice(id)?);
    Ok(thunk(instr.name.clone(), "dynamic-slice", move |ctx| {
        let offset = start.offset(ctx) * width as isize;
        // SAFETY: the clamped start keeps the window inside the operand.
        unsafe { plan.run(ctx.ptr(src).offset(offset), ctx.ptr(out)) };
        Ok(())
    }))
}

fn dynamic_update_slice(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let update = ctx.operand_array(instr, 1)?;
    if update.rank() != operand.rank() {
        return Err(Error::invalid_argument(format!(
            "dynamic-update-slice %{}: update {update} and operand {operand} differ in rank",
            instr.name
        )));
    }
    let start = DynamicStart::new(ctx, instr, 2, &operand.dims, &update.dims)?;
    let width = operand.element_type.byte_size();
    let plan = StridedCopy::new(
        width,
        &update.dims,
        &StridedCopy::row_major(&update.dims),
        &StridedCopy::row_major(&operand.dims),
    );
    let (src, upd, out) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.result_slice(id)?,
    );
    Ok(thunk(
        instr.name.clone(),
        "dynamic-update-slice",
        move |ctx| {
            let (ps, po) = (ctx.ptr(src), ctx.ptr(out));
            // SAFETY: operand and result have the same size; when buffer
            // assignment gave them the same memory the copy is skipped.
            unsafe {
                if ps != po {
                    std::ptr::copy_nonoverlapping(ps, po, out.size);
                }
            }
            let offset = start.offset(ctx) * width as isize;
            // SAFETY: the clamped start keeps the update inside the result; the
            // update is a different buffer.
            unsafe { plan.run(ctx.ptr(upd), po.offset(offset)) };
            Ok(())
        },
    ))
}

fn concatenate(ctx: &LowerCtx<'_>, id: InstrId, dimension: usize) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    if dimension >= result.rank() {
        return Err(Error::invalid_argument(format!(
            "concatenate %{}: dimension {dimension} out of range for {result}",
            instr.name
        )));
    }
    let width = result.element_type.byte_size();
    let out_strides = StridedCopy::row_major(&result.dims);
    let mut parts = Vec::new();
    let mut at = 0usize;
    for k in 0..instr.operands.len() {
        let shape = ctx.operand_array(instr, k)?;
        let fits = shape.rank() == result.rank()
            && (0..result.rank()).all(|d| d == dimension || shape.dims[d] == result.dims[d]);
        if !fits {
            return Err(Error::invalid_argument(format!(
                "concatenate %{}: operand {k} {shape} does not fit {result} along dimension {dimension}",
                instr.name
            )));
        }
        let plan = StridedCopy::new(
            width,
            &shape.dims,
            &StridedCopy::row_major(&shape.dims),
            &out_strides,
        );
        let offset = (at as isize) * out_strides[dimension] * width as isize;
        parts.push((ctx.operand_slice(instr, k)?, plan, offset));
        at += shape.dims[dimension];
    }
    if at != result.dims[dimension] {
        return Err(Error::invalid_argument(format!(
            "concatenate %{}: operands add up to {at} along dimension {dimension}, the result has {}",
            instr.name, result.dims[dimension]
        )));
    }
    let out = ctx.result_slice(id)?;
    Ok(thunk(instr.name.clone(), "concatenate", move |ctx| {
        let po = ctx.ptr(out);
        for (src, plan, offset) in &parts {
            // SAFETY: each operand lands in its own band of the result.
            unsafe { plan.run(ctx.ptr(*src), po.offset(*offset)) };
        }
        Ok(())
    }))
}

fn pad(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    config: &[platform_api::hlo::PadDim],
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let result = ctx.result_array(instr)?;
    if config.len() != operand.rank() {
        return Err(Error::invalid_argument(format!(
            "pad %{}: {} padding dimensions for an operand of rank {}",
            instr.name,
            config.len(),
            operand.rank()
        )));
    }
    let in_strides = StridedCopy::row_major(&operand.dims);
    let out_strides = StridedCopy::row_major(&result.dims);
    let mut dims = Vec::new();
    let (mut src_offset, mut dst_offset) = (0isize, 0isize);
    let mut src_strides = Vec::new();
    let mut dst_strides = Vec::new();
    let mut empty = false;
    for (d, p) in config.iter().enumerate() {
        let n = operand.dims[d] as i64;
        let step = p.interior as i64 + 1;
        let out_n = result.dims[d] as i64;
        if p.padded_size(operand.dims[d]) != out_n {
            return Err(Error::invalid_argument(format!(
                "pad %{}: padding {}_{}_{} of {n} elements gives {} but the result has {out_n}",
                instr.name,
                p.low,
                p.high,
                p.interior,
                p.padded_size(operand.dims[d])
            )));
        }
        // Operand elements i with 0 <= low + i*step < out_n survive cropping.
        let first = if p.low >= 0 {
            0
        } else {
            (-p.low + step - 1) / step
        };
        let last = if n == 0 {
            -1
        } else {
            ((out_n - 1 - p.low).div_euclid(step)).min(n - 1)
        };
        if last < first {
            empty = true;
            dims.push(0);
        } else {
            dims.push((last - first + 1) as usize);
        }
        src_offset += first as isize * in_strides[d];
        dst_offset += (p.low + first * step) as isize * out_strides[d];
        src_strides.push(in_strides[d]);
        dst_strides.push(out_strides[d] * step as isize);
    }
    let width = result.element_type.byte_size();
    let (src, value, out) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.result_slice(id)?,
    );
    if let Some(rows) = PadRows::new(width, &operand.dims, &result.dims, config) {
        return Ok(thunk(instr.name.clone(), "pad", move |ctx| {
            // SAFETY: the plan was made for these operand and result shapes,
            // and the result is a buffer of its own.
            unsafe { rows.run(ctx.ptr(src), ctx.ptr(value), ctx.ptr(out)) };
            Ok(())
        }));
    }
    let plan = StridedCopy::new(width, &dims, &src_strides, &dst_strides);
    let fill = StridedCopy::new(width, &result.dims, &vec![0; result.rank()], &out_strides);
    let (src_bytes, dst_bytes) = (src_offset * width as isize, dst_offset * width as isize);
    Ok(thunk(instr.name.clone(), "pad", move |ctx| {
        let po = ctx.ptr(out);
        // SAFETY: the fill writes the whole result from the scalar padding
        // value; the copy writes the surviving operand elements inside it.
        unsafe {
            fill.run(ctx.ptr(value), po);
            if !empty {
                plan.run(ctx.ptr(src).offset(src_bytes), po.offset(dst_bytes));
            }
        }
        Ok(())
    }))
}

/// Elements of one row's interior-padded stretch filled and then stored into
/// at a time, so both passes stay in L1.
const PAD_STRETCH: usize = 4096;

/// An output dimension outside the row of a [`PadRows`] plan.
#[derive(Clone, Copy, Debug)]
struct PadAxis {
    low: i64,
    /// `interior + 1`: the distance between consecutive operand elements.
    step: i64,
    /// The operand's extent.
    n: i64,
    /// The operand's stride, in scalars.
    stride: usize,
}

impl PadAxis {
    /// The operand index that lands at output position `o`, if one does.
    fn source(&self, o: usize) -> Option<usize> {
        let r = o as i64 - self.low;
        if r < 0 || r % self.step != 0 || r / self.step >= self.n {
            return None;
        }
        Some((r / self.step) as usize)
    }
}

/// A pad written one output row at a time, each byte once: a row that no
/// operand row lands in is filled, one that receives an operand row gets its
/// edges filled and its operand elements copied, with the gaps between them
/// (interior padding) filled in the same pass. Filling the whole result and
/// then storing the operand through a strided view wrote every line of the
/// result twice, the second time after it had left the cache.
///
/// The row is the innermost padded dimension; the unpadded dimensions after
/// it are one element of `block` scalars, so `[N, C]` padded along `N` copies
/// whole `C` runs.
#[derive(Debug)]
struct PadRows {
    width: usize,
    /// Output extents of the dimensions before the row.
    outer_dims: Vec<usize>,
    outer: Vec<PadAxis>,
    block: usize,
    /// The row's output length, in elements of `block` scalars.
    row_len: usize,
    /// The first operand element that lands in the row, how many do, the
    /// output position of the first and the distance between them.
    first: usize,
    count: usize,
    start: usize,
    step: usize,
}

impl PadRows {
    /// The plan for elements of `width` bytes, or `None` for widths without
    /// a native type and scalars.
    fn new(
        width: usize,
        in_dims: &[usize],
        out_dims: &[usize],
        config: &[platform_api::hlo::PadDim],
    ) -> Option<PadRows> {
        if !matches!(width, 1 | 2 | 4 | 8 | 16) || in_dims.is_empty() {
            return None;
        }
        let padded = |p: &platform_api::hlo::PadDim| p.low != 0 || p.high != 0 || p.interior != 0;
        let k = config.iter().rposition(padded).unwrap_or(0);
        let block: usize = out_dims[k + 1..].iter().product();
        let in_strides = StridedCopy::row_major(in_dims);
        let outer = (0..k)
            .map(|d| PadAxis {
                low: config[d].low,
                step: config[d].interior as i64 + 1,
                n: in_dims[d] as i64,
                stride: in_strides[d] as usize,
            })
            .collect();
        let (p, n, out) = (&config[k], in_dims[k] as i64, out_dims[k] as i64);
        let step = p.interior as i64 + 1;
        let first = if p.low >= 0 {
            0
        } else {
            (-p.low + step - 1) / step
        };
        let last = if n == 0 {
            -1
        } else {
            (out - 1 - p.low).div_euclid(step).min(n - 1)
        };
        let count = (last - first + 1).max(0) as usize;
        Some(PadRows {
            width,
            outer_dims: out_dims[..k].to_vec(),
            outer,
            block,
            row_len: out_dims[k],
            first: first.max(0) as usize,
            count,
            start: if count == 0 {
                0
            } else {
                (p.low + first * step) as usize
            },
            step: step as usize,
        })
    }

    /// # Safety
    /// `src` holds the operand, `value` one element, and `out` the result,
    /// a buffer apart from both, of the shapes the plan was made for.
    unsafe fn run(&self, src: *const u8, value: *const u8, out: *mut u8) {
        crate::with_width!(self.width, W => {
            // SAFETY: forwarded.
            unsafe { self.run_typed::<W>(src.cast(), value.cast::<W>().read_unaligned(), out.cast()) }
        }, _ => unreachable!("PadRows::new takes native widths only"));
    }

    unsafe fn run_typed<W: Copy + Send + Sync>(&self, src: *const W, v: W, out: *mut W) {
        let row = self.row_len * self.block;
        let rows: usize = self.outer_dims.iter().product();
        if rows == 0 || row == 0 {
            return;
        }
        let (src_a, out_a) = (src as usize, out as usize);
        parallel_for(rows, (super::strided::COPY_GRAIN / row).max(1), |r0, r1| {
            let mut index = super::strided::unflatten(r0, &self.outer_dims);
            for r in r0..r1 {
                let mut offset = Some(0usize);
                for (axis, &o) in self.outer.iter().zip(&index) {
                    offset = offset.zip(axis.source(o)).map(|(x, i)| x + i * axis.stride);
                }
                // SAFETY: row `r` lies inside the result; an operand row
                // named by `offset` inside the operand (the plan's shapes).
                unsafe {
                    let dst = std::slice::from_raw_parts_mut((out_a as *mut W).add(r * row), row);
                    match offset {
                        None => dst.fill(v),
                        Some(off) => self.row((src_a as *const W).add(off), dst, v),
                    }
                }
                platform_api::index::next_index(&mut index, &self.outer_dims);
            }
        });
    }

    /// Writes one output row that receives the operand row at `src`.
    ///
    /// # Safety
    /// `src` holds the operand row (`block` scalars per element).
    unsafe fn row<W: Copy>(&self, src: *const W, dst: &mut [W], v: W) {
        let (b, step) = (self.block, self.step);
        if self.count == 0 {
            dst.fill(v);
            return;
        }
        let begin = self.start * b;
        let end = (self.start + (self.count - 1) * step + 1) * b;
        dst[..begin].fill(v);
        dst[end..].fill(v);
        // SAFETY: the caller's contract; `first + count` elements exist.
        let from = unsafe { std::slice::from_raw_parts(src.add(self.first * b), self.count * b) };
        let data = &mut dst[begin..end];
        if step == 1 {
            data.copy_from_slice(from);
        } else if b > 1 {
            // Each element and the gap after it (none after the last).
            for (elem, to) in from.chunks_exact(b).zip(data.chunks_mut(step * b)) {
                to[..b].copy_from_slice(elem);
                to[b..].fill(v);
            }
        } else {
            let per = (PAD_STRETCH / step).max(1);
            // A stretch of `per` elements and their gaps (the last shorter).
            for (part, to) in from.chunks(per).zip(data.chunks_mut(per * step)) {
                to.fill(v);
                for (d, &x) in to.iter_mut().step_by(step).zip(part) {
                    *d = x;
                }
            }
        }
    }
}

type IotaFn = Arc<dyn Fn(*mut u8, usize, usize, usize, usize) + Send + Sync>;

fn iota_kernel<T: bytemuck::Pod>(value: impl Fn(u64) -> T + Send + Sync + 'static) -> IotaFn {
    // Fills positions [start, end) of the flat result: position p holds
    // (p / inner) % size.
    Arc::new(
        move |out: *mut u8, start: usize, end: usize, inner: usize, size: usize| {
            let out = out.cast::<T>();
            for p in start..end {
                // SAFETY: the thunk passes the result's base and a range inside it.
                unsafe { out.add(p).write(value(((p / inner) % size) as u64)) };
            }
        },
    )
}

fn iota(ctx: &LowerCtx<'_>, id: InstrId, dimension: usize) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    if dimension >= result.rank() {
        return Err(Error::invalid_argument(format!(
            "iota %{}: dimension {dimension} out of range for {result}",
            instr.name
        )));
    }
    let ty = result.element_type;
    let kernel: IotaFn = with_real!(ty, T => iota_kernel::<T>(|v: u64| -> T { v.as_() }), _ => match ty {
        ElementType::Pred => iota_kernel::<Pred>(|v| Pred((v != 0) as u8)),
        ElementType::C64 => iota_kernel::<num_complex::Complex32>(|v| num_complex::Complex32::new(v as f32, 0.0)),
        ElementType::C128 => iota_kernel::<num_complex::Complex64>(|v| num_complex::Complex64::new(v as f64, 0.0)),
        _ => return Err(Error::unimplemented(format!("iota of {ty}"))),
    });
    let inner: usize = result.dims[dimension + 1..].iter().product();
    let size = result.dims[dimension];
    let n = result.element_count();
    let out = ctx.result_slice(id)?;
    Ok(thunk(instr.name.clone(), "iota", move |ctx| {
        let po = ctx.ptr(out) as usize;
        parallel_for(n, 1 << 15, |s, e| {
            kernel(po as *mut u8, s, e, inner.max(1), size.max(1))
        });
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use crate::runner::check::{agrees_with_evaluator, random_literal};
    use platform_api::HloModule;

    /// Pads by rows (`PadRows`) of every native width, with interior, negative
    /// and trailing unpadded dimensions, rows longer than one stretch, and
    /// enough rows to run in parallel, agree with the evaluator.
    #[test]
    fn pads_by_rows_match_the_evaluator() {
        let cases = [
            ("f32[7,9]", "1_2_1x0_0_2"),
            ("f32[300,300]", "1_1_1x1_1_1"),
            ("s32[5,4,6]", "0_0_0x2_1_0x-1_1_1"),
            ("bf16[6,8,3]", "1_1_1x0_0_0x0_0_0"),
            ("u8[33,17]", "-2_3_2x1_-3_1"),
            ("f64[4,5,2]", "0_0_1x0_0_0x0_0_0"),
            ("f64[40,5,2]", "0_0_0x-1_-1_2x0_0_0"),
            ("pred[9]", "2_2_3"),
            ("c128[3,4]", "1_0_1x0_1_0"),
            ("f32[3000]", "0_0_1"),
            ("f16[2,4500]", "0_0_0x1_1_2"),
            ("s8[3,4,5]", "0_0_0x0_0_0x0_0_0"),
            ("f32[4,3]", "-3_-2_1x0_0_0"),
            ("s32[2,3]", "0_0_0x-5_-5_4"),
        ];
        for (k, (shape, padding)) in cases.iter().enumerate() {
            let ty = &shape[..shape.find('[').unwrap()];
            let dims: Vec<i64> = shape[shape.find('[').unwrap() + 1..shape.len() - 1]
                .split(',')
                .map(|d| d.parse().unwrap())
                .collect();
            let out: Vec<String> = padding
                .split('x')
                .zip(&dims)
                .map(|(p, &n)| {
                    let p: Vec<i64> = p.split('_').map(|v| v.parse().unwrap()).collect();
                    (p[0] + p[1] + n + (n - 1).max(0) * p[2]).to_string()
                })
                .collect();
            let text = format!(
                "HloModule m\nENTRY e {{\n  x = {shape} parameter(0)\n  v = {ty}[] parameter(1)\n  \
                 ROOT p = {ty}[{}] pad(x, v), padding={padding}\n}}\n",
                out.join(",")
            );
            let module = HloModule::parse(&text).unwrap();
            let params = module.entry_program_shape().parameters;
            let args = params
                .iter()
                .enumerate()
                .map(|(i, s)| random_literal(s, 77 + k as u64 * 2 + i as u64, -100..100))
                .collect();
            agrees_with_evaluator(&format!("pad {shape} {padding}"), &text, args);
        }
    }

    /// Strided slices whose innermost stride is small (the shuffled runs) or
    /// not, of every native width and several ranks, agree with the
    /// evaluator.
    #[test]
    fn strided_slices_match_the_evaluator() {
        let cases = [
            ("f32[64,99]", "[1:64:2], [0:99:3]", "32,33"),
            ("bf16[9,40]", "[0:9:1], [1:40:2]", "9,20"),
            ("u8[5,6,70]", "[1:5:2], [0:6:5], [3:70:4]", "2,2,17"),
            ("f64[2,3,31]", "[0:2:1], [0:3:2], [0:31:3]", "2,2,11"),
            ("c128[10,11]", "[0:10:1], [2:11:4]", "10,3"),
            ("s32[1000]", "[5:1000:5]", "199"),
            ("pred[8,3]", "[0:8:1], [0:3:2]", "8,2"),
        ];
        for (k, (shape, slice, out)) in cases.iter().enumerate() {
            let ty = &shape[..shape.find('[').unwrap()];
            let text = format!(
                "HloModule m\nENTRY e {{\n  x = {shape} parameter(0)\n  \
                 ROOT s = {ty}[{out}] slice(x), slice={{{slice}}}\n}}\n"
            );
            let module = HloModule::parse(&text).unwrap();
            let params = module.entry_program_shape().parameters;
            let args = vec![random_literal(&params[0], 501 + k as u64, -100..100)];
            agrees_with_evaluator(&format!("slice {shape} {slice}"), &text, args);
        }
    }
}
