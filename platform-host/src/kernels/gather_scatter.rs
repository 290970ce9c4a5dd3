//! `gather` and `scatter` (variadic, with batching dimensions), as XLA's
//! operation semantics define them.
//!
//! Both walk the *index points* (every position of the indices array except
//! the index vector dimension). For a gather each point selects a slice of the
//! operand, whose start is clamped so the slice fits, and the slice is copied
//! into the output as a [`StridedCopy`] (an embedding lookup is one `memcpy`
//! per row). For a scatter each point combines an update window into the
//! output, in row-major order of the points; a window that does not fit the
//! operand entirely is skipped, as XLA does. Combiners that are `add`,
//! `multiply`, `maximum`, `minimum` or "take the update" run as typed loops;
//! others through the [`ScalarProgram`] evaluator. The points' (output,
//! update) run starts are collected in batches and applied in order; the
//! typed loops ask for each run's lines a few pairs ahead, since a scatter's
//! output rows are random accesses and waiting for each one was most of the
//! time.

use super::data_movement::read_index;
use super::scalar_program::{binary_reducer, ScalarProgram};
use super::strided::{unflatten, StridedCopy};
use crate::elementwise_ops::{typed_combiner, CombinerVisitor};
use crate::fusion::{fusion_output, PositionProgram};
use crate::lowering::BlockProducer;
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, thunk_on_path, BufferSlice, Thunk};
use platform_api::hlo::analysis::combiner::returned_parameter;
use platform_api::hlo::{BinaryOp, CompId, HloComputation, InstrId, Op};
use platform_api::{CompileOptions, ElementType, Error, HloModule, Result};
use std::sync::Arc;

/// How index point `p` finds its index vector and batch coordinates.
#[derive(Clone, Debug)]
struct IndexWalk {
    /// Sizes of the indices array's dimensions other than the index vector one.
    point_dims: Vec<usize>,
    /// Element stride, in the indices array, of each of those dimensions.
    point_strides: Vec<usize>,
    /// Stride between components of the index vector (0 when it is implicit).
    component_stride: usize,
    components: usize,
    index_type: ElementType,
    index_width: usize,
}

impl IndexWalk {
    fn new(
        indices: &platform_api::ArrayShape,
        index_vector_dim: usize,
        what: &str,
    ) -> Result<IndexWalk> {
        let strides = platform_api::shape::row_major_strides(&indices.dims);
        if index_vector_dim > indices.rank() {
            return Err(Error::invalid_argument(format!(
                "{what}: index_vector_dim {index_vector_dim} out of range for indices {indices}"
            )));
        }
        if !indices.element_type.is_integer() {
            return Err(Error::invalid_argument(format!(
                "{what}: indices must be integers, not {indices}"
            )));
        }
        let (components, component_stride) = if index_vector_dim == indices.rank() {
            (1, 0)
        } else {
            (indices.dims[index_vector_dim], strides[index_vector_dim])
        };
        let point_dims_idx: Vec<usize> = (0..indices.rank())
            .filter(|&d| d != index_vector_dim)
            .collect();
        Ok(IndexWalk {
            point_dims: point_dims_idx.iter().map(|&d| indices.dims[d]).collect(),
            point_strides: point_dims_idx.iter().map(|&d| strides[d]).collect(),
            component_stride,
            components,
            index_type: indices.element_type,
            index_width: indices.element_type.byte_size(),
        })
    }

    fn point_count(&self) -> usize {
        self.point_dims.iter().product()
    }

    /// Index component `k` of point `coords` (`coords` over `point_dims`).
    ///
    /// # Safety
    /// `base` must be the indices array.
    #[inline]
    unsafe fn component(&self, base: *const u8, coords: &[usize], k: usize) -> i64 {
        let off: usize = coords
            .iter()
            .zip(&self.point_strides)
            .map(|(c, s)| c * s)
            .sum::<usize>()
            + k * self.component_stride;
        // SAFETY: forwarded; the offset is inside the indices array.
        unsafe { read_index(base.add(off * self.index_width), self.index_type) }
    }
}

/// Maps an indices-array dimension to its position among the point dimensions.
fn point_position(dim: usize, index_vector_dim: usize) -> usize {
    if dim > index_vector_dim {
        dim - 1
    } else {
        dim
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::Gather {
            dnums, slice_sizes, ..
        } => gather(ctx, id, dnums, slice_sizes),
        Op::Scatter {
            dnums, to_apply, ..
        } => scatter(ctx, id, dnums, *to_apply),
        _ => Err(Error::internal("not a gather or scatter")),
    }
}

/// A gather's dimension numbers checked against its shapes: how its index
/// points are walked and where each lands in the operand and the output.
struct GatherLayout {
    walk: IndexWalk,
    /// Operand dimensions that appear in the output, in order.
    offset_operand_dims: Vec<usize>,
    /// The element stride of each output dimension that is a point
    /// dimension, in order.
    batch_out_strides: Vec<usize>,
    /// Row-major element strides of the operand and the output.
    op_strides: Vec<usize>,
    out_strides: Vec<usize>,
    /// Per operand dimension, the largest start of the slice.
    limits: Vec<i64>,
    /// (operand dimension, point dimension) of each batching pair.
    batching: Vec<(usize, usize)>,
}

impl GatherLayout {
    fn new(
        operand: &platform_api::ArrayShape,
        indices: &platform_api::ArrayShape,
        result: &platform_api::ArrayShape,
        d: &platform_api::hlo::GatherDimensionNumbers,
        slice_sizes: &[usize],
        what: &str,
    ) -> Result<GatherLayout> {
        let walk = IndexWalk::new(indices, d.index_vector_dim, what)?;
        let bad = |why: String| Error::invalid_argument(format!("{what}: {why}"));
        if slice_sizes.len() != operand.rank()
            || slice_sizes.iter().zip(&operand.dims).any(|(s, n)| s > n)
        {
            return Err(bad(format!(
                "slice sizes {slice_sizes:?} do not fit {operand}"
            )));
        }
        if d.start_index_map.len() != walk.components
            || d.start_index_map.iter().any(|&m| m >= operand.rank())
        {
            return Err(bad(format!(
                "start_index_map {:?} does not fit index vectors of {}",
                d.start_index_map, walk.components
            )));
        }
        if d.operand_batching_dims.len() != d.start_indices_batching_dims.len() {
            return Err(bad("batching dimension lists differ in length".into()));
        }
        // Operand dimensions that appear in the output, in order.
        let offset_operand_dims: Vec<usize> = (0..operand.rank())
            .filter(|x| !d.collapsed_slice_dims.contains(x) && !d.operand_batching_dims.contains(x))
            .collect();
        if offset_operand_dims.len() != d.offset_dims.len() {
            return Err(bad(format!(
                "offset_dims {:?} do not match the slice",
                d.offset_dims
            )));
        }
        let batch_out_dims: Vec<usize> = (0..result.rank())
            .filter(|x| !d.offset_dims.contains(x))
            .collect();
        if batch_out_dims.len() != walk.point_dims.len()
            || batch_out_dims
                .iter()
                .zip(&walk.point_dims)
                .any(|(&o, &n)| result.dims[o] != n)
            || d.offset_dims
                .iter()
                .zip(&offset_operand_dims)
                .any(|(&o, &od)| result.dims.get(o) != Some(&slice_sizes[od]))
        {
            return Err(bad(format!(
                "result {result} does not match indices {indices} and slice sizes {slice_sizes:?}"
            )));
        }
        let op_strides = platform_api::shape::row_major_strides(&operand.dims);
        let out_strides = platform_api::shape::row_major_strides(&result.dims);
        Ok(GatherLayout {
            batch_out_strides: batch_out_dims.iter().map(|&x| out_strides[x]).collect(),
            limits: (0..operand.rank())
                .map(|x| (operand.dims[x] - slice_sizes[x]) as i64)
                .collect(),
            batching: d
                .operand_batching_dims
                .iter()
                .zip(&d.start_indices_batching_dims)
                .map(|(&od, &id)| (od, point_position(id, d.index_vector_dim)))
                .collect(),
            walk,
            offset_operand_dims,
            op_strides,
            out_strides,
        })
    }

    /// Whether every slice is one element (and not empty).
    fn single(&self, slice_sizes: &[usize]) -> bool {
        self.offset_operand_dims
            .iter()
            .map(|&x| slice_sizes[x])
            .product::<usize>()
            == 1
    }

    /// The [`PointGather`] plan, where the gather has one.
    fn point_gather(
        &self,
        d: &platform_api::hlo::GatherDimensionNumbers,
        slice_sizes: &[usize],
        width: usize,
    ) -> Option<PointGather> {
        PointGather::new(
            &self.walk,
            &d.start_index_map,
            &self.batching,
            &self.limits,
            &self.op_strides,
            &self.batch_out_strides,
            width,
            self.single(slice_sizes),
        )
    }
}

fn gather(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    d: &platform_api::hlo::GatherDimensionNumbers,
    slice_sizes: &[usize],
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let what = format!("gather %{}", instr.name);
    let operand = ctx.operand_array(instr, 0)?;
    let indices = ctx.operand_array(instr, 1)?;
    let result = ctx.result_array(instr)?;
    let layout = GatherLayout::new(operand, indices, result, d, slice_sizes, &what)?;
    let width = operand.element_type.byte_size();
    let point_plan = layout.point_gather(d, slice_sizes, width);
    // Rows of one element take the point plan's typed loop: a row copy's
    // index dispatch, prefetch and copy call cost several times the element.
    if let Some(rows) = RowGather::new(ctx, id).filter(|r| r.form.run > 1 || point_plan.is_none()) {
        return Ok(row_gather_thunk(instr.name.clone(), rows));
    }
    let single = layout.single(slice_sizes);
    let GatherLayout {
        walk,
        offset_operand_dims,
        batch_out_strides,
        op_strides,
        out_strides,
        limits,
        batching,
        ..
    } = layout;
    let copy = StridedCopy::new(
        width,
        &offset_operand_dims
            .iter()
            .map(|&x| slice_sizes[x])
            .collect::<Vec<_>>(),
        &offset_operand_dims
            .iter()
            .map(|&x| op_strides[x] as isize)
            .collect::<Vec<_>>(),
        &d.offset_dims
            .iter()
            .map(|&x| out_strides[x] as isize)
            .collect::<Vec<_>>(),
    );
    let start_map = d.start_index_map.clone();
    let (op_slice, idx_slice, out) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.result_slice(id)?,
    );
    let rank = operand.rank();
    let slice_elems = copy.element_count().max(1);
    if let Some(plan) = point_plan {
        let points = walk.point_count();
        return Ok(thunk(instr.name.clone(), "gather", move |ctx| {
            let (x, idx, o) = (
                ctx.ptr(op_slice) as usize,
                ctx.ptr(idx_slice) as usize,
                ctx.ptr(out) as usize,
            );
            parallel_for(points, 1 << 14, |s, e| {
                // SAFETY: the buffers the plan was made for; tasks write
                // disjoint points.
                unsafe { plan.run(x as *const u8, idx as *const u8, o as *mut u8, s, e) }
            });
            Ok(())
        }));
    }
    Ok(thunk(instr.name.clone(), "gather", move |ctx| {
        let (x, idx, o) = (
            ctx.ptr(op_slice) as usize,
            ctx.ptr(idx_slice) as usize,
            ctx.ptr(out) as usize,
        );
        let points = walk.point_count();
        parallel_for(points, (1 << 14) / slice_elems + 1, |s, e| {
            let mut coords = unflatten(s, &walk.point_dims);
            let mut start = vec![0i64; rank];
            // Dimensions no index names stay 0; the others are overwritten for
            // every point (no per-point reset: tiny memsets are slow).
            for _ in s..e {
                for (k, &od) in start_map.iter().enumerate() {
                    // SAFETY: `coords` is a point of the indices array.
                    start[od] = unsafe { walk.component(idx as *const u8, &coords, k) };
                }
                for &(od, pos) in &batching {
                    start[od] = coords[pos] as i64;
                }
                let src: usize = (0..rank)
                    .map(|x| start[x].clamp(0, limits[x]) as usize * op_strides[x])
                    .sum();
                let dst: usize = coords
                    .iter()
                    .zip(&batch_out_strides)
                    .map(|(c, s)| c * s)
                    .sum();
                let (from, to) = ((x + src * width) as *const u8, (o + dst * width) as *mut u8);
                // SAFETY: the clamped start keeps the slice inside the operand;
                // each point writes its own positions of the output. A slice
                // of one element (`take_along_axis`) is one move, without
                // the copy plan's walk.
                unsafe {
                    match (single, width) {
                        (true, 4) => to
                            .cast::<u32>()
                            .write_unaligned(from.cast::<u32>().read_unaligned()),
                        (true, 8) => to
                            .cast::<u64>()
                            .write_unaligned(from.cast::<u64>().read_unaligned()),
                        (true, 2) => to
                            .cast::<u16>()
                            .write_unaligned(from.cast::<u16>().read_unaligned()),
                        (true, _) => std::ptr::copy_nonoverlapping(from, to, width),
                        _ => copy.run(from, to),
                    }
                }
                platform_api::index::next_index(&mut coords, &walk.point_dims);
            }
        });
        Ok(())
    }))
}

/// A gather of one element per index point (`take_along_axis`, a batched
/// lookup): the element's operand offset is the batch coordinates' part plus
/// each clamped index component times its stride, and the offsets into the
/// indices, the output and the operand advance by a stride per point along
/// the innermost point dimension, instead of being recomputed from the
/// coordinates (with a clamp of every operand dimension) for each point.
#[derive(Clone, Debug)]
struct PointGather {
    /// Extent of each point dimension (the indices array's, index vector
    /// dimension left out; `[1]` for a single point).
    dims: Vec<usize>,
    /// Per point dimension, the element step in the indices array, the
    /// output and the operand (the batching dimensions it names).
    idx_strides: Vec<usize>,
    out_strides: Vec<usize>,
    op_strides: Vec<usize>,
    /// Per index component: its offset in an index vector, the largest
    /// start of the operand dimension it names, and that dimension's stride.
    components: Vec<(usize, i64, usize)>,
    width: usize,
    index_type: ElementType,
}

/// An index element as an `i64` start: exact for every integer type but
/// `u64` past `i64::MAX`, which saturates (a start that large clamps to the
/// dimension's last start either way).
trait IndexValue: Copy {
    fn wide(self) -> i64;
}

macro_rules! index_value {
    ($($t:ty),*) => {$(
        impl IndexValue for $t {
            #[inline(always)]
            fn wide(self) -> i64 {
                self as i64
            }
        }
    )*};
}
index_value!(i8, i16, i32, i64, u8, u16, u32);

impl IndexValue for u64 {
    #[inline(always)]
    fn wide(self) -> i64 {
        self.min(i64::MAX as u64) as i64
    }
}

/// `$body` with `$I` the [`IndexValue`] type of integer element type `$ty`
/// (any other type reads as `u64`; callers take integer indices only).
macro_rules! with_index_type {
    ($ty:expr, $I:ident => $body:expr) => {
        with_index_type!(@arms $ty, $I, $body, S8 i8, S16 i16, S32 i32, S64 i64, U8 u8, U16 u16, U32 u32)
    };
    (@arms $ty:expr, $I:ident, $body:expr, $($e:ident $t:ty),*) => {
        match $ty {
            $(ElementType::$e => {
                type $I = $t;
                $body
            })*
            _ => {
                type $I = u64;
                $body
            }
        }
    };
}

impl PointGather {
    /// The plan, when every slice is one element, the index type is an
    /// integer, the index vector names distinct non-batching dimensions,
    /// and every batch coordinate lies inside its operand dimension (so
    /// only the index components need the clamp).
    #[allow(clippy::too_many_arguments)]
    fn new(
        walk: &IndexWalk,
        start_map: &[usize],
        batching: &[(usize, usize)],
        limits: &[i64],
        op_strides: &[usize],
        batch_out_strides: &[usize],
        width: usize,
        single: bool,
    ) -> Option<PointGather> {
        let named: Vec<usize> = start_map
            .iter()
            .copied()
            .chain(batching.iter().map(|b| b.0))
            .collect();
        let distinct = named
            .iter()
            .enumerate()
            .all(|(i, d)| !named[..i].contains(d));
        if !single
            || !walk.index_type.is_integer()
            || !matches!(width, 1 | 2 | 4 | 8 | 16)
            || !distinct
            || batching
                .iter()
                .any(|&(od, pos)| walk.point_dims[pos] as i64 - 1 > limits[od])
        {
            return None;
        }
        let mut plan = PointGather {
            dims: walk.point_dims.clone(),
            idx_strides: walk.point_strides.clone(),
            out_strides: batch_out_strides.to_vec(),
            op_strides: vec![0; walk.point_dims.len()],
            components: start_map
                .iter()
                .enumerate()
                .map(|(k, &od)| (k * walk.component_stride, limits[od], op_strides[od]))
                .collect(),
            width,
            index_type: walk.index_type,
        };
        for &(od, pos) in batching {
            plan.op_strides[pos] += op_strides[od];
        }
        if plan.dims.is_empty() {
            plan.dims.push(1);
            plan.idx_strides.push(0);
            plan.out_strides.push(0);
            plan.op_strides.push(0);
        }
        Some(plan)
    }

    /// Points `s..e` (row-major over [`Self::dims`]).
    ///
    /// # Safety
    /// `x`, `idx` and `o` are the operand, indices and output the plan was
    /// made for.
    unsafe fn run(&self, x: *const u8, idx: *const u8, o: *mut u8, s: usize, e: usize) {
        // SAFETY: forwarded.
        unsafe {
            with_index_type!(self.index_type, I => match self.width {
                1 => self.points::<I, u8>(x, idx, o, s, e),
                2 => self.points::<I, u16>(x, idx, o, s, e),
                4 => self.points::<I, u32>(x, idx, o, s, e),
                8 => self.points::<I, u64>(x, idx, o, s, e),
                _ => self.points::<I, u128>(x, idx, o, s, e),
            })
        }
    }

    /// [`Self::run`] with `I` indices and elements of `E`'s size.
    ///
    /// # Safety
    /// As [`Self::run`].
    unsafe fn points<I: IndexValue, E: Copy>(
        &self,
        x: *const u8,
        idx: *const u8,
        o: *mut u8,
        s: usize,
        e: usize,
    ) {
        let (x, idx, o) = (x.cast::<E>(), idx.cast::<I>(), o.cast::<E>());
        let r = self.dims.len();
        let dot =
            |c: &[usize], st: &[usize]| -> usize { c.iter().zip(st).map(|(a, b)| a * b).sum() };
        let mut coords = unflatten(s, &self.dims);
        let (di, dout, dop) = (
            self.idx_strides[r - 1],
            self.out_strides[r - 1],
            self.op_strides[r - 1],
        );
        let mut p = s;
        while p < e {
            let n = (self.dims[r - 1] - coords[r - 1]).min(e - p);
            let mut io = dot(&coords, &self.idx_strides);
            let mut oo = dot(&coords, &self.out_strides);
            let mut so = dot(&coords, &self.op_strides);
            // SAFETY: every offset is a point's own position of the indices
            // and the output; the operand offset is a batch coordinate
            // inside its dimension plus clamped starts.
            unsafe {
                if let [(off, lim, st)] = self.components[..] {
                    for _ in 0..n {
                        let v = idx.add(io + off).read_unaligned().wide();
                        let src = so + v.clamp(0, lim) as usize * st;
                        o.add(oo).write_unaligned(x.add(src).read_unaligned());
                        (io, oo, so) = (io + di, oo + dout, so + dop);
                    }
                } else {
                    for _ in 0..n {
                        let mut src = so;
                        for &(off, lim, st) in &self.components {
                            let v = idx.add(io + off).read_unaligned().wide();
                            src += v.clamp(0, lim) as usize * st;
                        }
                        o.add(oo).write_unaligned(x.add(src).read_unaligned());
                        (io, oo, so) = (io + di, oo + dout, so + dop);
                    }
                }
            }
            p += n;
            coords[r - 1] += n - 1;
            platform_api::index::next_index(&mut coords, &self.dims);
        }
    }
}

/// Writes `fill` over each element of `out` whose mask byte does not say
/// keep (`(mask[j] != 0) == keep_when`): every element read and stored, so
/// the loop is a vector blend, not a branch per element.
///
/// # Safety
/// `out` holds `mask.len()` elements.
unsafe fn fill_discarded<E: Copy>(out: *mut E, mask: &[u8], keep_when: bool, fill: E) {
    for (j, &m) in mask.iter().enumerate() {
        // SAFETY: the caller's contract.
        unsafe {
            let at = out.add(j);
            let v = at.read_unaligned();
            at.write_unaligned(if (m != 0) == keep_when { v } else { fill });
        }
    }
}

/// A gather that copies one contiguous run of the operand per index into
/// consecutive output positions: an embedding lookup (`jnp.take(table, idx,
/// axis=0)`). Index `i` names operand rows `i..i + k` (start clamped so they
/// fit), the slice spans every later dimension whole, and the output is the
/// index points followed by the slice. Any range of output positions can then
/// be produced on its own, which lets a fusion that consumes the gather pull
/// it in block by block ([`BlockProducer`]).
pub struct RowGather {
    table: BufferSlice,
    indices: BufferSlice,
    out: BufferSlice,
    form: RowForm,
}

/// The shape facts of a [`RowGather`]: what makes a gather one, found
/// from the computation alone (before buffers exist).
struct RowForm {
    index_type: ElementType,
    /// Bytes of one element; elements per index (the slice).
    width: usize,
    run: usize,
    /// Elements per operand row (the stride of dimension 0).
    row_elems: usize,
    /// Largest start row.
    limit: i64,
    /// Output elements.
    count: usize,
}

impl RowForm {
    fn of(comp: &HloComputation, id: InstrId) -> Option<RowForm> {
        let instr = comp.instr(id);
        let Op::Gather {
            dnums: d,
            slice_sizes,
            ..
        } = &instr.op
        else {
            return None;
        };
        let operand = comp.instr(*instr.operands.first()?).shape.as_array()?;
        let indices = comp.instr(*instr.operands.get(1)?).shape.as_array()?;
        let result = instr.shape.as_array()?;
        let rank = operand.rank();
        // One index component per point, read in place: the index vector
        // dimension is implicit or a trailing dimension of size 1.
        let ivd = d.index_vector_dim;
        let one_component =
            ivd == indices.rank() || (ivd + 1 == indices.rank() && indices.dims[ivd] == 1);
        let whole_rows = rank >= 1
            && slice_sizes.len() == rank
            && slice_sizes[0] <= operand.dims[0]
            && slice_sizes[1..] == operand.dims[1..];
        let slice_dims = rank.checked_sub(d.collapsed_slice_dims.len())?;
        let first_offset = result.rank().checked_sub(slice_dims)?;
        let offsets_trailing = d.offset_dims.len() == slice_dims
            && d.offset_dims
                .iter()
                .enumerate()
                .all(|(i, &o)| o == first_offset + i);
        let run: usize = slice_sizes.iter().product();
        let shapes_agree = indices.element_count() * run == result.element_count()
            && result.element_type == operand.element_type;
        if !(one_component
            && whole_rows
            && offsets_trailing
            && shapes_agree
            && d.start_index_map == [0]
            && d.collapsed_slice_dims
                .iter()
                .all(|&c| c == 0 && slice_sizes[0] == 1)
            && d.operand_batching_dims.is_empty()
            && indices.element_type.is_integer())
        {
            return None;
        }
        Some(RowForm {
            index_type: indices.element_type,
            width: operand.element_type.byte_size(),
            run,
            row_elems: operand.dims[1..].iter().product(),
            limit: (operand.dims[0] - slice_sizes[0]) as i64,
            count: result.element_count(),
        })
    }
}

impl RowGather {
    /// The row form of gather `id`, if it has one.
    pub fn new(ctx: &LowerCtx<'_>, id: InstrId) -> Option<RowGather> {
        let form = RowForm::of(ctx.comp, id)?;
        let instr = ctx.instr(id);
        Some(RowGather {
            table: ctx.operand_slice(instr, 0).ok()?,
            indices: ctx.operand_slice(instr, 1).ok()?,
            out: ctx.result_slice(id).ok()?,
            form,
        })
    }

    /// What it reads: the operand and the indices.
    pub fn reads(&self) -> [BufferSlice; 2] {
        [self.table, self.indices]
    }
}

impl BlockProducer for RowGather {
    fn slices(&self) -> Vec<BufferSlice> {
        vec![self.out, self.table, self.indices]
    }

    unsafe fn produce(&self, addrs: &[*mut u8], pos: usize, n: usize) {
        let (out, table, idx) = (addrs[0], addrs[1].cast_const(), addrs[2].cast_const());
        let end = (pos + n).min(self.form.count);
        let points = self.form.count / self.form.run.max(1);
        let run_bytes = self.form.run * self.form.width;
        // The rows are scattered over the table, so the hardware prefetcher
        // cannot see the next one coming and each row's first lines would
        // cost a full memory latency; the indices say where the rows are, so
        // the row `ahead` points on is requested while this one is copied,
        // keeping several rows in flight.
        let ahead = (GATHER_AHEAD_BYTES / run_bytes.max(1)).max(1);
        let mut p = pos;
        let mut first = true;
        while p < end {
            let (point, within) = (p / self.form.run, p % self.form.run);
            let len = (self.form.run - within).min(end - p);
            // SAFETY: `point` is an index of the indices array (the output
            // has `points * run` elements); the clamped start keeps the run
            // inside the operand; `p..p + len` is inside the output.
            unsafe {
                if first {
                    // A block's first rows were nobody's `ahead`.
                    for q in point + 1..(point + ahead).min(points) {
                        self.prefetch_row(table, idx, q);
                    }
                    first = false;
                }
                if point + ahead < points {
                    self.prefetch_row(table, idx, point + ahead);
                }
                let i = read_index(
                    idx.add(point * self.form.index_type.byte_size()),
                    self.form.index_type,
                );
                let src = i.clamp(0, self.form.limit) as usize * self.form.row_elems + within;
                std::ptr::copy_nonoverlapping(
                    table.add(src * self.form.width),
                    out.add(p * self.form.width),
                    len * self.form.width,
                );
            }
            p += len;
        }
    }
}

/// A gather of whole rows on its own (no fusion pulls it in): the same row
/// copies, with the same prefetching, over the whole result in parallel.
fn row_gather_thunk(name: String, rows: RowGather) -> Box<dyn Thunk> {
    let slices = rows.slices();
    thunk(name, "gather", move |ctx| {
        let addrs: Vec<usize> = slices.iter().map(|s| ctx.ptr(*s) as usize).collect();
        parallel_for(rows.form.count, 1 << 14, |s, e| {
            let addrs: Vec<*mut u8> = addrs.iter().map(|&a| a as *mut u8).collect();
            // SAFETY: this run's addresses of `slices`; the tasks' ranges
            // are disjoint parts of the result.
            unsafe { rows.produce(&addrs, s, e - s) };
        });
        Ok(())
    })
}

/// How far ahead of the row being copied [`RowGather`] requests rows (into
/// L2, so the requests do not hold the core's L1 fill buffers). A few rows in
/// flight hide the latency; requesting much farther ahead evicts rows before
/// they are copied (measured on `gather_embedding_50000x256`, 1 KiB rows).
const GATHER_AHEAD_BYTES: usize = 4 << 10;
/// Most bytes of one row requested ahead; beyond them the row is a long
/// sequential run the hardware prefetcher follows by itself.
const GATHER_AHEAD_ROW_BYTES: usize = 1 << 10;

impl RowGather {
    /// Asks for the operand row of index point `q` to be brought into cache.
    ///
    /// # Safety
    /// `q` is an index point; `table` and `idx` are this run's addresses.
    #[inline]
    unsafe fn prefetch_row(&self, table: *const u8, idx: *const u8, q: usize) {
        // SAFETY: `q` is a point of the indices array (the caller's contract).
        let i = unsafe {
            read_index(
                idx.wrapping_add(q * self.form.index_type.byte_size()),
                self.form.index_type,
            )
        };
        let start = i.clamp(0, self.form.limit) as usize * self.form.row_elems * self.form.width;
        let bytes = (self.form.run * self.form.width).min(GATHER_AHEAD_ROW_BYTES);
        let mut off = 0;
        while off < bytes {
            crate::kernels::prefetch_l2(table.wrapping_add(start + off));
            off += 64;
        }
    }
}

/// What a masked gather copies per index point.
enum MaskedForm {
    /// Whole rows ([`RowForm`]).
    Rows(RowForm),
    /// One element ([`PointGather`]: `take_along_axis`), with one index
    /// component per point and the indices and the output both in point
    /// order, so point `p` reads index `p` and writes element `p`.
    Points(PointGather),
}

impl MaskedForm {
    fn of(comp: &HloComputation, id: InstrId) -> Option<MaskedForm> {
        if let Some(rows) = RowForm::of(comp, id) {
            return Some(MaskedForm::Rows(rows));
        }
        let instr = comp.instr(id);
        let Op::Gather {
            dnums: d,
            slice_sizes,
            ..
        } = &instr.op
        else {
            return None;
        };
        let operand = comp.instr(*instr.operands.first()?).shape.as_array()?;
        let indices = comp.instr(*instr.operands.get(1)?).shape.as_array()?;
        let result = instr.shape.as_array()?;
        let layout = GatherLayout::new(operand, indices, result, d, slice_sizes, "gather").ok()?;
        let in_order = platform_api::shape::row_major_strides(&layout.walk.point_dims);
        let plan = layout.point_gather(d, slice_sizes, operand.element_type.byte_size())?;
        (layout.walk.components == 1
            && layout.walk.point_strides == in_order
            && layout.batch_out_strides == in_order
            && result.element_count() == layout.walk.point_count())
        .then_some(MaskedForm::Points(plan))
    }

    /// Elements per index point.
    fn run(&self) -> usize {
        match self {
            MaskedForm::Rows(rows) => rows.run,
            MaskedForm::Points(_) => 1,
        }
    }

    /// Elements of the result.
    fn count(&self) -> usize {
        match self {
            MaskedForm::Rows(rows) => rows.count,
            MaskedForm::Points(points) => points.dims.iter().product(),
        }
    }
}

/// A row gather seen through the select `jnp.take` puts after it (its
/// default `mode="fill"`): `select(broadcast(mask), gather, broadcast(c))`,
/// the mask one predicate per index point, broadcast over the slice. Each
/// point's slice is copied where the mask keeps it and filled with `c`
/// elsewhere, straight into the select's result: one pass that reads no
/// table row it discards, where the fusion after the gather would read every
/// gathered element back and load a broadcast predicate per element.
///
/// The mask is an expression of the fusion's operands (the bounds check of
/// the index, or just an operand), computed a chunk of points at a time
/// ([`PositionProgram`]). When the fusion that computed the indices (and
/// perhaps the mask) feeds nothing else, its expressions are computed here
/// too, from its own operands, and its results are not stored at all
/// ([`MaskedGatherPlan::elided`]): the indices, the mask and the rows are
/// one pass, as in XLA's fused loop.
pub struct MaskedGatherPlan {
    gather: InstrId,
    form: MaskedForm,
    keep_when: bool,
    /// One element: what a discarded slice is filled with.
    fill: Vec<u8>,
    mask: PositionProgram,
    /// The indices, when computed here rather than read.
    index: Option<PositionProgram>,
    elided: Vec<InstrId>,
}

/// The select's branch that is not the gather, if it is a broadcast scalar
/// constant of type `ty`: that constant's bytes.
fn broadcast_constant(comp: &HloComputation, id: InstrId, ty: ElementType) -> Option<Vec<u8>> {
    let b = comp.instr(id);
    let Op::Broadcast { dimensions } = &b.op else {
        return None;
    };
    let c = comp.instr(*b.operands.first()?);
    let scalar = c.shape.as_array()?;
    match &c.op {
        Op::Constant { literal }
            if dimensions.is_empty()
                && scalar.element_type == ty
                && scalar.element_count() == 1 =>
        {
            let bytes = literal.bytes().ok()?;
            (bytes.len() == ty.byte_size()).then(|| bytes.to_vec())
        }
        _ => None,
    }
}

impl MaskedGatherPlan {
    /// The plan for gather `gather` of computation `comp` and fusion
    /// `fusion`, its only user, if the fusion is exactly the masked select
    /// of it and the gather copies whole rows or one element per point
    /// ([`MaskedForm`]).
    pub fn new(
        module: &HloModule,
        comp: &HloComputation,
        gather: InstrId,
        fusion: InstrId,
        options: &CompileOptions,
    ) -> Option<MaskedGatherPlan> {
        let g = comp.instr(gather);
        let form = MaskedForm::of(comp, gather)?;
        let result = g.shape.as_array()?;
        let points = form.count().checked_div(form.run())?;
        let instr = comp.instr(fusion);
        let Op::Fusion { calls, .. } = &instr.op else {
            return None;
        };
        let fused = module.computations.get(calls.index())?;
        let root = fused.root_instr();
        if root.op != Op::Select || root.operands.len() != 3 || root.shape != g.shape {
            return None;
        }
        let reads_gather = |id: InstrId| match fused.instr(id).op {
            Op::Parameter { number } => instr.operands.get(number) == Some(&gather),
            _ => false,
        };
        let (on_true, on_false) = (root.operands[1], root.operands[2]);
        let ty = result.element_type;
        let (keep_when, fill) = if reads_gather(on_true) {
            (true, broadcast_constant(fused, on_false, ty)?)
        } else if reads_gather(on_false) {
            (false, broadcast_constant(fused, on_true, ty)?)
        } else {
            return None;
        };
        // The mask: a value of the point dimensions (the result's leading
        // ones), broadcast over the trailing slice dimensions; where a point
        // is one element, the select's predicate itself.
        let pred = fused.instr(root.operands[0]);
        let per_point = |m: InstrId, dims: &[usize]| {
            fused.instr(m).shape.as_array().is_some_and(|mask| {
                dims.iter().copied().eq(0..mask.rank())
                    && result.dims.get(..mask.rank()) == Some(&mask.dims[..])
                    && mask.element_count() == points
                    && mask.element_type == ElementType::Pred
            })
        };
        let m = match (&pred.op, pred.operands.first()) {
            (Op::Broadcast { dimensions }, Some(&m)) if per_point(m, dimensions) => m,
            _ if form.run() == 1
                && per_point(root.operands[0], &(0..result.rank()).collect::<Vec<_>>()) =>
            {
                root.operands[0]
            }
            _ => return None,
        };
        // The fusion that made the indices, if what it computes feeds only
        // this gather's indices and this fusion's mask.
        let users = comp.users();
        let source = fusion_output(comp, *g.operands.get(1)?).map(|(f, _)| f);
        let elided = source.and_then(|source| {
            let mut covered = vec![source];
            let mut i = 0;
            while i < covered.len() {
                let id = covered[i];
                i += 1;
                if id == comp.root {
                    return None;
                }
                for &u in &users[id.index()] {
                    match comp.instr(u).op {
                        Op::Reshape | Op::Bitcast | Op::GetTupleElement { .. } => covered.push(u),
                        _ if u == fusion => {}
                        _ if u == gather && g.operands.first() != Some(&id) => {}
                        _ => return None,
                    }
                }
            }
            Some(covered)
        });
        let indices = comp.instr(*g.operands.get(1)?).shape.as_array()?;
        // The mask, and the indices when their fusion is inlined.
        let programs = |inlined: Option<InstrId>| {
            let inline = |id: InstrId| Some(id) == inlined;
            let mask = PositionProgram::of_value(module, comp, fusion, m, &inline, options).ok()?;
            if mask.reads().contains(&gather)
                || mask.positions() != points
                || mask.element_type() != ElementType::Pred
            {
                return None;
            }
            let index = match (inlined, fusion_output(comp, g.operands[1])) {
                (Some(source), Some((f, output))) if f == source => {
                    let index =
                        PositionProgram::of_output(module, comp, f, output, &inline, options)
                            .ok()?;
                    let fits = index.positions() == points
                        && index.element_type() == indices.element_type
                        && indices.element_count() == points;
                    fits.then_some(index)
                }
                _ => None,
            };
            Some((mask, index))
        };
        // Inlined only if the programs then read none of the elided values
        // (a rename the copy does not see through would be read as is).
        let inlined = elided.as_ref().and_then(|covered| {
            let (mask, index) = programs(source)?;
            let index = index?;
            let reads_elided = mask
                .reads()
                .iter()
                .chain(index.reads())
                .any(|r| covered.contains(r));
            (!reads_elided).then_some((mask, index, covered.clone()))
        });
        // Every array the kernel reads is one buffer.
        let arrays =
            |p: &PositionProgram| p.reads().iter().all(|&r| comp.instr(r).shape.is_array());
        let inlined = inlined.filter(|(mask, index, _)| arrays(mask) && arrays(index));
        let (mask, index, elided) = match inlined {
            Some((mask, index, covered)) => (mask, Some(index), covered),
            None => {
                let (mask, _) = programs(None)?;
                if !arrays(&mask) {
                    return None;
                }
                (mask, None, Vec::new())
            }
        };
        Some(MaskedGatherPlan {
            gather,
            form,
            keep_when,
            fill,
            mask,
            index,
            elided,
        })
    }

    /// The gather.
    pub fn gather(&self) -> InstrId {
        self.gather
    }

    /// Instructions whose values nothing reads once this plan runs (the
    /// fusion that computed the indices, and its renames): buffer assignment
    /// gives them no room, and they are not lowered. The values they read
    /// live until the select instead.
    pub fn elided(&self) -> &[InstrId] {
        &self.elided
    }

    /// The values of computation `comp` the kernel reads: the table, the
    /// indices unless computed, and what the mask and the indices are
    /// computed from.
    pub fn reads(&self, comp: &HloComputation) -> Vec<InstrId> {
        let g = comp.instr(self.gather);
        let mut reads: Vec<InstrId> = g.operands.iter().take(1).copied().collect();
        if self.index.is_none() {
            reads.extend(g.operands.get(1));
        }
        reads.extend(self.mask.reads());
        reads.extend(self.index.iter().flat_map(|i| i.reads()));
        reads
    }

    /// The kernel with the buffers lowering assigned; `None` if the gather
    /// no longer has its form.
    pub fn into_kernel(self, ctx: &LowerCtx<'_>, fusion: InstrId) -> Option<MaskedGather> {
        let slices = |p: &PositionProgram| {
            p.reads()
                .iter()
                .map(|&id| ctx.result_slice(id).ok())
                .collect::<Option<Vec<_>>>()
        };
        let g = ctx.instr(self.gather);
        Some(MaskedGather {
            copies: match self.form {
                MaskedForm::Rows(_) => MaskedCopies::Rows(RowGather::new(ctx, self.gather)?),
                MaskedForm::Points(plan) if self.fill.len() == plan.width => {
                    MaskedCopies::Points(plan)
                }
                MaskedForm::Points(_) => return None,
            },
            table: ctx.operand_slice(g, 0).ok()?,
            indices: ctx.operand_slice(g, 1).ok()?,
            mask_reads: slices(&self.mask)?,
            index_reads: match &self.index {
                Some(index) => slices(index)?,
                None => Vec::new(),
            },
            mask: self.mask,
            index: self.index,
            keep_when: self.keep_when,
            fill: self.fill,
            out: ctx.result_slice(fusion).ok()?,
        })
    }
}

/// A [`MaskedGatherPlan`] with its buffers.
pub struct MaskedGather {
    copies: MaskedCopies,
    table: BufferSlice,
    indices: BufferSlice,
    mask: PositionProgram,
    mask_reads: Vec<BufferSlice>,
    index: Option<PositionProgram>,
    index_reads: Vec<BufferSlice>,
    /// The mask value that keeps the gathered slice (`false` when the
    /// select's branches are the other way round).
    keep_when: bool,
    fill: Vec<u8>,
    /// The select's result.
    out: BufferSlice,
}

/// A task's buffers for one chunk of points: the mask, and the indices
/// when computed (8 bytes a point, room for `s64`).
struct Chunk {
    mask: Vec<u8>,
    indices: Vec<u64>,
}

/// How a [`MaskedGather`] copies (see [`MaskedForm`]).
enum MaskedCopies {
    Rows(RowGather),
    Points(PointGather),
}

/// Index points whose mask and indices a [`MaskedGather`] computes at a
/// time, where each point is a row.
const POINT_CHUNK: usize = 512;
/// The same where each point is one element: a chunk's two program runs
/// have a fixed setup, which 512 elements did not repay.
const ELEMENT_CHUNK: usize = 4096;

impl MaskedGather {
    /// What it reads: the table, the indices (unless computed) and what the
    /// mask and the indices are computed from.
    pub fn reads(&self) -> Vec<BufferSlice> {
        let mut reads = vec![self.table];
        if self.index.is_none() {
            reads.push(self.indices);
        }
        reads.extend(&self.mask_reads);
        reads.extend(&self.index_reads);
        reads
    }

    /// The thunk that writes the select's result, index points split over
    /// the cores.
    pub fn into_thunk(self, name: String) -> Box<dyn Thunk> {
        let mut slices = vec![self.out, self.table, self.indices];
        slices.extend(&self.mask_reads);
        slices.extend(&self.index_reads);
        let (count, run, step) = match &self.copies {
            MaskedCopies::Rows(g) => (g.form.count, g.form.run.max(1), POINT_CHUNK),
            MaskedCopies::Points(plan) => (plan.dims.iter().product(), 1, ELEMENT_CHUNK),
        };
        let points = count / run;
        let grain = ((1 << 14) / run).max(1);
        thunk(name, "gather", move |ctx| {
            let addrs: Vec<usize> = slices.iter().map(|s| ctx.ptr(*s) as usize).collect();
            parallel_for(points, grain, |p0, p1| {
                let addrs: Vec<*const u8> = addrs.iter().map(|&a| a as *const u8).collect();
                let mut chunks = Chunk {
                    mask: vec![0; step.min(p1 - p0)],
                    indices: vec![0; step.min(p1 - p0)],
                };
                let mut chunk = p0;
                while chunk < p1 {
                    let end = (chunk + step).min(p1);
                    // SAFETY: this run's addresses of the slices; the tasks'
                    // point ranges, so their output rows, are disjoint; the
                    // chunk's buffers hold `step` points.
                    unsafe { self.points(&addrs, &mut chunks, chunk, end) };
                    chunk = end;
                }
            });
            Ok(())
        })
    }

    /// Writes the slices of index points `p0..p1`.
    ///
    /// # Safety
    /// `addrs` are this run's addresses of the output, the table, the
    /// indices, the mask's reads and the indices' reads; `p0..p1` are index
    /// points whose output rows no other thread touches, at most as many as
    /// `chunk` holds.
    unsafe fn points(&self, addrs: &[*const u8], chunk: &mut Chunk, p0: usize, p1: usize) {
        let (out, table) = (addrs[0].cast_mut(), addrs[1]);
        let mask_reads = &addrs[3..3 + self.mask_reads.len()];
        let index_reads = &addrs[3 + self.mask_reads.len()..];
        let (mask, computed) = (&mut chunk.mask, &mut chunk.indices);
        let index_width = match &self.copies {
            MaskedCopies::Rows(g) => g.form.index_type.byte_size(),
            MaskedCopies::Points(plan) => plan.index_type.byte_size(),
        };
        // SAFETY: the programs' reads, whole; the buffers have room for the
        // chunk; the points lie inside both values.
        let idx = unsafe {
            self.mask.run(mask_reads, mask.as_mut_ptr(), p0..p1);
            match &self.index {
                Some(index) => {
                    let at = computed.as_mut_ptr().cast::<u8>();
                    index.run(index_reads, at, p0..p1);
                    // Where point 0's index would be: point `q`'s is at
                    // `q * width`, inside the chunk for the chunk's points.
                    at.wrapping_sub(p0 * index_width).cast_const()
                }
                None => addrs[2],
            }
        };
        let n = p1 - p0;
        let keeps = |j: usize| (mask[j] != 0) == self.keep_when;
        let g = match &self.copies {
            MaskedCopies::Rows(g) => g,
            MaskedCopies::Points(plan) => {
                // Every point's element is copied (a discarded point's
                // clamped index still names one), then the discarded ones
                // are filled, where there are any (a mask test inside the
                // copy loop measured slower).
                // SAFETY: point `q` reads index `q` (computed ones lie at
                // `q * width` from `idx`) and writes element `q` of the
                // result ([`MaskedForm::Points`]); `p0..p1` are this task's;
                // the fill is one element.
                unsafe {
                    plan.run(table, idx, out, p0, p1);
                    // Byte folds, which vectorise 16 bytes to an instruction
                    // (counting the kept points took a tenth of the time).
                    let discards = if self.keep_when {
                        mask[..n].iter().fold(1u8, |a, &m| a & m.min(1)) == 0
                    } else {
                        mask[..n].iter().fold(0u8, |a, &m| a | m) != 0
                    };
                    if discards {
                        let (at, mask, keep) =
                            (out.add(p0 * plan.width), &mask[..n], self.keep_when);
                        let fill = self.fill.as_ptr();
                        match plan.width {
                            1 => fill_discarded(at, mask, keep, fill.read()),
                            2 => fill_discarded(
                                at.cast::<u16>(),
                                mask,
                                keep,
                                fill.cast::<u16>().read_unaligned(),
                            ),
                            4 => fill_discarded(
                                at.cast::<u32>(),
                                mask,
                                keep,
                                fill.cast::<u32>().read_unaligned(),
                            ),
                            8 => fill_discarded(
                                at.cast::<u64>(),
                                mask,
                                keep,
                                fill.cast::<u64>().read_unaligned(),
                            ),
                            _ => fill_discarded(
                                at.cast::<u128>(),
                                mask,
                                keep,
                                fill.cast::<u128>().read_unaligned(),
                            ),
                        }
                    }
                }
                return;
            }
        };
        let run_bytes = g.form.run * g.form.width;
        let ahead = (GATHER_AHEAD_BYTES / run_bytes.max(1)).max(1);
        // SAFETY (whole block): points `p0..p1` index `idx`; the clamped
        // start keeps each slice inside the table; point `q`'s output row is
        // `q * run_bytes..` of the result.
        unsafe {
            for j in 1..ahead.min(n) {
                if keeps(j) {
                    g.prefetch_row(table, idx, p0 + j);
                }
            }
            for j in 0..n {
                if j + ahead < n && keeps(j + ahead) {
                    g.prefetch_row(table, idx, p0 + j + ahead);
                }
                let q = p0 + j;
                let dst = out.add(q * run_bytes);
                if keeps(j) {
                    let i = read_index(idx.wrapping_add(q * index_width), g.form.index_type);
                    let src = i.clamp(0, g.form.limit) as usize * g.form.row_elems;
                    std::ptr::copy_nonoverlapping(table.add(src * g.form.width), dst, run_bytes);
                } else {
                    crate::elementwise_ops::fill(g.form.width, self.fill.as_ptr(), dst, g.form.run);
                }
            }
        }
    }
}

/// What a scatter combiner is.
enum Combiner {
    /// `op(current, update)` on one operand of type `ty`.
    Binary(BinaryOp, ElementType),
    /// Returns the update (a plain scatter-set).
    Replace,
    General(Arc<ScalarProgram>),
}

fn combiner(module: &HloModule, comp: CompId, n: usize, ty: ElementType) -> Result<Combiner> {
    if n == 1 {
        if let Some((op, t)) = binary_reducer(module, comp) {
            if t == ty {
                return Ok(Combiner::Binary(op, t));
            }
        }
        if let Some(c) = module.computations.get(comp.index()) {
            if c.num_parameters() == 2 && returned_parameter(c) == Some(1) {
                return Ok(Combiner::Replace);
            }
        }
    }
    Ok(Combiner::General(Arc::new(ScalarProgram::compile(
        module, comp,
    )?)))
}

/// Applies `out[o + e] = f(out[o + e], upd[u + e])` for every `e < run` and
/// every (o, u) pair a scatter visits, pair after pair: a pair is the start
/// of a run of consecutive elements in both (a window's contiguous last
/// dimension), so a row update is one vectorised loop.
type ApplyFn = Arc<dyn Fn(usize, usize, &[(usize, usize)], usize) + Send + Sync>;

fn typed_apply<T: bytemuck::Pod + Send + Sync>(
    f: impl Fn(T, T) -> T + Copy + Send + Sync + 'static,
) -> ApplyFn {
    Arc::new(
        move |out: usize, upd: usize, pairs: &[(usize, usize)], run: usize| {
            let (out, upd) = (out as *mut T, upd as *const T);
            // Compiled once per instruction-set level: a row's combine is a
            // few vector instructions, and at the baseline level (SSE2) it
            // was most of a row scatter's time.
            // SAFETY: the scatter computed every pair's run inside the output
            // and the updates, which are different buffers.
            crate::vmath::isa::dispatch!(crate::vmath::level(), I => unsafe {
                apply_pairs(out, upd, pairs, run, f)
            })
        },
    )
}

/// The body of [`typed_apply`]'s loops.
///
/// # Safety
/// For every pair `(o, u)`, `out[o..o + run]` lies in the output and
/// `upd[u..u + run]` in the updates, a different buffer.
#[inline(always)]
unsafe fn apply_pairs<T: Copy>(
    out: *mut T,
    upd: *const T,
    pairs: &[(usize, usize)],
    run: usize,
    f: impl Fn(T, T) -> T,
) {
    if run == 1 {
        for &(o, u) in pairs {
            // SAFETY: the caller's contract.
            unsafe { out.add(o).write(f(out.add(o).read(), upd.add(u).read())) };
        }
        return;
    }
    for (j, &(o, u)) in pairs.iter().enumerate() {
        // The output runs land anywhere (and the updates' may): their lines
        // are asked for a few pairs ahead, so the loads overlap the
        // arithmetic instead of waiting one by one.
        if let Some(&(o_ahead, u_ahead)) = pairs.get(j + APPLY_AHEAD) {
            for p in [
                out.wrapping_add(o_ahead),
                out.wrapping_add(o_ahead + run - 1),
            ] {
                crate::kernels::prefetch_l1(p.cast());
            }
            for p in [
                upd.wrapping_add(u_ahead),
                upd.wrapping_add(u_ahead + run - 1),
            ] {
                crate::kernels::prefetch_l1(p.cast());
            }
        }
        // SAFETY: the caller's contract, for the whole run.
        let (dst, src) = unsafe {
            (
                std::slice::from_raw_parts_mut(out.add(o), run),
                std::slice::from_raw_parts(upd.add(u), run),
            )
        };
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = f(*d, v);
        }
    }
}

/// A scatter read straight from its indices, in point order: point `p`
/// combines the `run` updates at `upd[p * run..]` into the output run at
/// `out[idx[p] * stride..]` when `idx[p]` lies in `0..=limit`. It covers a
/// scalar update into a vector (`x.at[i].add(v)`: `run` and `stride` 1) and a
/// row scatter (`segment_sum`: one output row per point).
#[derive(Clone, Copy, Debug)]
struct RowScatter {
    /// Address of the indices: `points` of them, `s64` when `wide`, else `s32`.
    idx: usize,
    wide: bool,
    points: usize,
    /// Largest index whose run fits the output (not negative).
    limit: i64,
    /// Output elements between consecutive index values.
    stride: usize,
    /// Elements per point (at least 1).
    run: usize,
    /// Addresses of the output and the updates.
    out: usize,
    upd: usize,
}

type ScatterRowsFn = Arc<dyn Fn(RowScatter) + Send + Sync>;

fn typed_scatter_rows<T: bytemuck::Pod + Send + Sync>(
    f: impl Fn(T, T) -> T + Copy + Send + Sync + 'static,
) -> ScatterRowsFn {
    Arc::new(move |a: RowScatter| {
        let (out, upd) = (a.out as *mut T, a.upd as *const T);
        // SAFETY: the scatter passes its indices (`points` of the named width),
        // its output and its updates (`points * run` elements), and a `limit`
        // and `stride` that keep every run inside the output.
        crate::vmath::isa::dispatch!(crate::vmath::level(), I => unsafe {
            match (a.wide, a.run) {
                (true, 1) => scatter_rows::<i64, T, true>(a.idx as *const i64, &a, out, upd, f),
                (false, 1) => scatter_rows::<i32, T, true>(a.idx as *const i32, &a, out, upd, f),
                (true, _) => scatter_rows::<i64, T, false>(a.idx as *const i64, &a, out, upd, f),
                (false, _) => scatter_rows::<i32, T, false>(a.idx as *const i32, &a, out, upd, f),
            }
        })
    })
}

/// [`typed_scatter_rows`] for a plain set (the update replaces the element)
/// of elements `width` bytes wide.
fn replace_rows(width: usize) -> Option<ScatterRowsFn> {
    Some(match width {
        1 => typed_scatter_rows::<u8>(|_, u| u),
        2 => typed_scatter_rows::<u16>(|_, u| u),
        4 => typed_scatter_rows::<u32>(|_, u| u),
        8 => typed_scatter_rows::<u64>(|_, u| u),
        _ => return None,
    })
}

/// See [`RowScatter`]; `SCALAR` when `run` is 1.
///
/// # Safety
/// `idx` holds `a.points` indices, `upd` `a.points * a.run` elements, and
/// `out` at least `a.limit * a.stride + a.run`; `out` and `upd` do not overlap.
#[inline(always)]
unsafe fn scatter_rows<Ix: Copy + Into<i64>, T: Copy, const SCALAR: bool>(
    idx: *const Ix,
    a: &RowScatter,
    out: *mut T,
    upd: *const T,
    f: impl Fn(T, T) -> T,
) {
    if a.limit < 0 {
        return;
    }
    // One unsigned comparison tests both ends of `0..=limit`.
    let limit = a.limit as u64;
    // SAFETY: the caller's contract.
    let idx = unsafe { std::slice::from_raw_parts(idx, a.points) };
    for (p, &i) in idx.iter().enumerate() {
        let v: i64 = i.into();
        if SCALAR {
            if v as u64 <= limit {
                // SAFETY: `0 <= v <= limit`.
                unsafe {
                    let o = out.add(v as usize * a.stride);
                    o.write(f(o.read(), upd.add(p).read()));
                }
            }
            continue;
        }
        // The output rows land anywhere: the row a few points ahead is asked
        // for now, so its loads overlap this row's arithmetic. The updates are
        // read in order, which the hardware prefetcher follows by itself.
        if let Some(&ahead) = idx.get(p + APPLY_AHEAD) {
            let w: i64 = ahead.into();
            if w as u64 <= limit {
                let row = out.wrapping_add(w as usize * a.stride);
                crate::kernels::prefetch_l1(row.cast());
                crate::kernels::prefetch_l1(row.wrapping_add(a.run - 1).cast());
            }
        }
        if v as u64 <= limit {
            // SAFETY: `0 <= v <= limit`, so the run lies in the output; point
            // `p`'s updates lie in the updates.
            let (dst, src) = unsafe {
                (
                    std::slice::from_raw_parts_mut(out.add(v as usize * a.stride), a.run),
                    std::slice::from_raw_parts(upd.add(p * a.run), a.run),
                )
            };
            for (d, &u) in dst.iter_mut().zip(src) {
                *d = f(*d, u);
            }
        }
    }
}

/// The typed loops for a binary combiner: pairs, and runs straight from the
/// indices.
fn binary_apply(op: BinaryOp, ty: ElementType) -> Option<(ApplyFn, ScatterRowsFn)> {
    struct Make;
    impl CombinerVisitor for Make {
        type Out = (ApplyFn, ScatterRowsFn);
        fn visit<T, F>(self, f: F) -> (ApplyFn, ScatterRowsFn)
        where
            T: bytemuck::Pod + Send + Sync + 'static,
            F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
        {
            (typed_apply::<T>(f), typed_scatter_rows::<T>(f))
        }
    }
    typed_combiner(op, ty, Make)
}

fn scatter(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    d: &platform_api::hlo::ScatterDimensionNumbers,
    to_apply: CompId,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let what = format!("scatter %{}", instr.name);
    let bad = |why: String| Error::invalid_argument(format!("{what}: {why}"));
    let n = instr.operands.len().saturating_sub(1) / 2;
    if n == 0 || instr.operands.len() != 2 * n + 1 {
        return Err(bad(
            "needs operands, indices and as many updates as operands".into(),
        ));
    }
    let operand = ctx.operand_array(instr, 0)?;
    let indices = ctx.operand_array(instr, n)?;
    let updates = ctx.operand_array(instr, n + 1)?;
    for k in 0..n {
        if ctx.operand_array(instr, k)?.dims != operand.dims
            || ctx.operand_array(instr, n + 1 + k)?.dims != updates.dims
        {
            return Err(bad("operands (or updates) differ in dimensions".into()));
        }
    }
    let walk = IndexWalk::new(indices, d.index_vector_dim, &what)?;
    if d.scatter_dims_to_operand_dims.len() != walk.components
        || d.scatter_dims_to_operand_dims
            .iter()
            .any(|&m| m >= operand.rank())
    {
        return Err(bad(
            "scatter_dims_to_operand_dims does not fit the index vectors".into(),
        ));
    }
    let window_operand_dims: Vec<usize> = (0..operand.rank())
        .filter(|x| !d.inserted_window_dims.contains(x) && !d.input_batching_dims.contains(x))
        .collect();
    if window_operand_dims.len() != d.update_window_dims.len() {
        return Err(bad(format!(
            "update_window_dims {:?} do not match the operand",
            d.update_window_dims
        )));
    }
    let scatter_update_dims: Vec<usize> = (0..updates.rank())
        .filter(|x| !d.update_window_dims.contains(x))
        .collect();
    if scatter_update_dims.len() != walk.point_dims.len()
        || scatter_update_dims
            .iter()
            .zip(&walk.point_dims)
            .any(|(&u, &p)| updates.dims[u] != p)
    {
        return Err(bad(format!(
            "updates {updates} do not match indices {indices}"
        )));
    }
    let window_sizes: Vec<usize> = d
        .update_window_dims
        .iter()
        .map(|&u| updates.dims[u])
        .collect();
    for (j, &od) in window_operand_dims.iter().enumerate() {
        if window_sizes[j] > operand.dims[od] {
            return Err(bad(format!(
                "update window {window_sizes:?} larger than {operand}"
            )));
        }
    }
    let op_strides = platform_api::shape::row_major_strides(&operand.dims);
    let upd_strides = platform_api::shape::row_major_strides(&updates.dims);
    let win_op_strides: Vec<usize> = window_operand_dims.iter().map(|&x| op_strides[x]).collect();
    let win_upd_strides: Vec<usize> = d
        .update_window_dims
        .iter()
        .map(|&x| upd_strides[x])
        .collect();
    let point_upd_strides: Vec<usize> = scatter_update_dims
        .iter()
        .map(|&x| upd_strides[x])
        .collect();
    let window_of = |od: usize| {
        window_operand_dims
            .iter()
            .position(|&x| x == od)
            .map(|j| window_sizes[j])
            .unwrap_or(1)
    };
    let limits: Vec<i64> = (0..operand.rank())
        .map(|x| operand.dims[x] as i64 - window_of(x) as i64)
        .collect();
    let start_map = d.scatter_dims_to_operand_dims.clone();
    let batching: Vec<(usize, usize)> = d
        .input_batching_dims
        .iter()
        .zip(&d.scatter_indices_batching_dims)
        .map(|(&od, &id)| (od, point_position(id, d.index_vector_dim)))
        .collect();
    let comb = combiner(ctx.module, to_apply, n, operand.element_type)?;
    let widths: Vec<usize> = (0..n)
        .map(|k| {
            ctx.operand_array(instr, k)
                .map(|a| a.element_type.byte_size())
        })
        .collect::<Result<_>>()?;
    let mut operands = Vec::new();
    let mut upds = Vec::new();
    for k in 0..n {
        operands.push(ctx.operand_slice(instr, k)?);
        upds.push(ctx.operand_slice(instr, n + 1 + k)?);
    }
    let idx_slice = ctx.operand_slice(instr, n)?;
    let results: Vec<BufferSlice> = ctx.result_leaves(id).to_vec();
    if results.len() != n {
        return Err(bad(format!(
            "result {} should have {n} arrays",
            instr.shape
        )));
    }
    let (apply, apply_rows) = match &comb {
        Combiner::Binary(op, ty) => binary_apply(*op, *ty).unzip(),
        // A plain set copies the update, whatever its type means.
        Combiner::Replace => (None, replace_rows(operand.element_type.byte_size())),
        Combiner::General(_) => (None, None),
    };
    let general = match comb {
        Combiner::General(p) => {
            if p.param_count() != 2 * n || p.output_types().len() != n {
                return Err(bad("combiner signature does not fit the operands".into()));
            }
            Some(p)
        }
        Combiner::Binary(..) if apply.is_none() => {
            Some(Arc::new(ScalarProgram::compile(ctx.module, to_apply)?))
        }
        _ => None,
    };
    let rank = operand.rank();
    let window_count: usize = window_sizes.iter().product();
    // The updates hold each point's window after the previous point's.
    let updates_point_major = point_upd_strides
        .iter()
        .zip(platform_api::shape::row_major_strides(&walk.point_dims))
        .all(|(&a, b)| a == b * window_count);
    // A window whose last dimension is contiguous in the operand and the
    // updates is walked in runs of that dimension (a row scatter,
    // `segment_sum`, is one run per point); `w` then walks the others.
    let run = match (
        window_sizes.last(),
        win_op_strides.last(),
        win_upd_strides.last(),
    ) {
        (Some(&size), Some(1), Some(1)) => size,
        _ => 1,
    };
    // Index vectors laid out point after point (`unit` integers each, the
    // components adjacent, or one integer when they are strided apart).
    let unit = if walk.component_stride == 1 {
        walk.components
    } else {
        1
    };
    let contiguous = walk
        .point_strides
        .iter()
        .zip(platform_api::shape::row_major_strides(&walk.point_dims))
        .all(|(a, b)| *a == b * unit);
    // See the fastest path below: one s32/s64 index per point, in point
    // order, updates point-major, and a window that is one contiguous run
    // (a row) or one element. The other start coordinates are then 0.
    let rows_direct = n == 1
        && batching.is_empty()
        && start_map.len() == 1
        && walk.components == 1
        && contiguous
        && updates_point_major
        && window_count >= 1
        && window_count == run
        && matches!(walk.index_type, ElementType::S32 | ElementType::S64);
    let why = if general.is_some() {
        Some(
            "its combiner is not one binary op of the operand's type, so a scalar \
             program is evaluated per updated element"
                .to_string(),
        )
    } else if run == 1 && window_count > 1 {
        Some(
            "its update window's last dimension is not contiguous in both the operand and \
             the updates, so the window is walked element by element"
                .to_string(),
        )
    } else {
        None
    };
    Ok(thunk_on_path(
        instr.name.clone(),
        "scatter",
        why,
        move |ctx| {
            for k in 0..n {
                let (src, dst) = (ctx.ptr(operands[k]), ctx.ptr(results[k]));
                if src != dst {
                    // SAFETY: same-size distinct buffers (skipped when buffer
                    // assignment updates the operand in place).
                    unsafe { std::ptr::copy_nonoverlapping(src, dst, results[k].size) };
                }
            }
            let outs: Vec<usize> = results.iter().map(|s| ctx.ptr(*s) as usize).collect();
            let ups: Vec<usize> = upds.iter().map(|s| ctx.ptr(*s) as usize).collect();
            let idx = ctx.ptr(idx_slice) as *const u8;
            // Fastest path (`x.at[i].add(v)`, `segment_sum`): the indices are
            // read in their own type, in order, with no pairs collected.
            if let (Some(f), true) = (&apply_rows, rows_direct) {
                f(RowScatter {
                    idx: idx as usize,
                    wide: walk.index_type == ElementType::S64,
                    points: walk.point_count(),
                    limit: limits[start_map[0]],
                    stride: op_strides[start_map[0]],
                    run,
                    out: outs[0],
                    upd: ups[0],
                });
                return Ok(());
            }
            // Indices widened to i64 once (one typed pass), then read directly.
            let index_count = walk.point_count() * walk.components;
            // SAFETY: the indices array holds `index_count` integers.
            let indices: Vec<i64> = unsafe { widen_indices(idx, index_count, walk.index_type) };
            let mut ev = general.as_ref().map(|p| p.evaluator());
            let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(PAIR_BATCH);
            let mut coords = vec![0usize; walk.point_dims.len()];
            let mut start = vec![0i64; rank];
            let points = walk.point_count();
            if window_count == 0 {
                return Ok(());
            }
            // Applies the collected (output, update) pairs in order, each the
            // start of `run` consecutive elements.
            let mut flush = |pairs: &mut Vec<(usize, usize)>, run: usize| {
                if let Some(f) = &apply {
                    f(outs[0], ups[0], pairs, run);
                } else if let Some(ev) = ev.as_mut() {
                    for &(o, u) in pairs.iter() {
                        for (o, u) in (o..o + run).zip(u..u + run) {
                            // SAFETY: `o` and `u` index the outputs and updates.
                            unsafe {
                                for k in 0..n {
                                    ev.set_param(k, (outs[k] + o * widths[k]) as *const u8);
                                    ev.set_param(n + k, (ups[k] + u * widths[k]) as *const u8);
                                }
                                ev.run();
                                for k in 0..n {
                                    ev.write_output(k, (outs[k] + o * widths[k]) as *mut u8);
                                }
                            }
                        }
                    }
                } else {
                    // Replace: the update wins.
                    for &(o, u) in pairs.iter() {
                        for k in 0..n {
                            // SAFETY: as above.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    (ups[k] + u * widths[k]) as *const u8,
                                    (outs[k] + o * widths[k]) as *mut u8,
                                    widths[k] * run,
                                )
                            };
                        }
                    }
                }
                pairs.clear();
            };
            // Fast path: scalar updates (no window), every operand dimension
            // indexed, indices laid out point after point: update `p` goes to the
            // position its index vector names.
            if window_sizes.is_empty()
                && batching.is_empty()
                && rank == start_map.len()
                && contiguous
            {
                // Per named dimension: where its component lies in a point's
                // index vector, its largest start and its stride.
                let named: Vec<(usize, u64, usize)> = start_map
                    .iter()
                    .enumerate()
                    .map(|(k, &od)| (k * walk.component_stride, limits[od] as u64, op_strides[od]))
                    .collect();
                let mut emit = |o: usize, p: usize| {
                    pairs.push((o, p));
                    if pairs.len() >= PAIR_BATCH {
                        flush(&mut pairs, 1);
                    }
                };
                match *named.as_slice() {
                    [a] => point_offsets(&indices, points, unit, [a], &mut emit),
                    [a, b] => point_offsets(&indices, points, unit, [a, b], &mut emit),
                    [a, b, c] => point_offsets(&indices, points, unit, [a, b, c], &mut emit),
                    // Four and more: the same loop over a slice.
                    _ => point_offsets(&indices, points, unit, named.as_slice(), &mut emit),
                }
                flush(&mut pairs, 1);
                return Ok(());
            }
            let outer_window = &window_sizes[..window_sizes.len() - usize::from(run > 1)];
            // One run per point (a row scatter, `segment_sum`), indices laid
            // out point after point and updates point-major: a point's start
            // is read straight from its index vector and its run of updates
            // follows the previous point's, with no coordinates kept.
            if outer_window.is_empty() && batching.is_empty() && contiguous && updates_point_major {
                'points: for p in 0..points {
                    let mut o = 0usize;
                    for (k, &od) in start_map.iter().enumerate() {
                        let v = indices[p * unit + k * walk.component_stride];
                        // One unsigned comparison tests both ends (`limits`
                        // are not negative: windows fit the operand).
                        if v as u64 > limits[od] as u64 {
                            continue 'points;
                        }
                        o += v as usize * op_strides[od];
                    }
                    pairs.push((o, p * window_count));
                    if pairs.len() >= PAIR_BATCH {
                        flush(&mut pairs, run);
                    }
                }
                flush(&mut pairs, run);
                return Ok(());
            }
            let mut w = vec![0usize; outer_window.len()];
            // As in gather: unnamed dimensions of `start` stay 0, and `w` is all
            // zeros again whenever `next_index` finishes a window.
            for _ in 0..points {
                let point_off: usize = coords
                    .iter()
                    .zip(&walk.point_strides)
                    .map(|(c, st)| c * st)
                    .sum();
                for (k, &od) in start_map.iter().enumerate() {
                    start[od] = indices[point_off + k * walk.component_stride];
                }
                for &(od, pos) in &batching {
                    start[od] = coords[pos] as i64;
                }
                let fits = (0..rank).all(|x| start[x] >= 0 && start[x] <= limits[x]);
                if fits {
                    let base: usize = (0..rank).map(|x| start[x] as usize * op_strides[x]).sum();
                    let upd_base: usize = coords
                        .iter()
                        .zip(&point_upd_strides)
                        .map(|(c, s)| c * s)
                        .sum();
                    loop {
                        let o = base
                            + w.iter()
                                .zip(&win_op_strides)
                                .map(|(a, s)| a * s)
                                .sum::<usize>();
                        let u = upd_base
                            + w.iter()
                                .zip(&win_upd_strides)
                                .map(|(a, s)| a * s)
                                .sum::<usize>();
                        pairs.push((o, u));
                        if !platform_api::index::next_index(&mut w, outer_window) {
                            break;
                        }
                    }
                    if pairs.len() >= PAIR_BATCH {
                        flush(&mut pairs, run);
                    }
                }
                platform_api::index::next_index(&mut coords, &walk.point_dims);
            }
            flush(&mut pairs, run);
            Ok(())
        },
    ))
}

/// The output offset of each scalar update whose start lies inside the
/// operand, for index vectors of the named dimensions (`(component offset,
/// largest start, stride)` each), in point order: `emit(offset, point)`.
/// Given an array (a fixed count), the loop keeps them in registers and tests
/// both ends of each start with one unsigned comparison (a negative start
/// reads as a huge one), without a branch per component.
#[inline(always)]
fn point_offsets<N: AsRef<[(usize, u64, usize)]>>(
    indices: &[i64],
    points: usize,
    unit: usize,
    named: N,
    emit: &mut impl FnMut(usize, usize),
) {
    let named = named.as_ref();
    for p in 0..points {
        let base = p * unit;
        let mut o = 0usize;
        let mut inside = true;
        for &(c, limit, stride) in named {
            let v = indices[base + c];
            inside &= v as u64 <= limit;
            o = o.wrapping_add((v as usize).wrapping_mul(stride));
        }
        if inside {
            emit(o, p);
        }
    }
}

/// Pairs collected before a combiner pass.
const PAIR_BATCH: usize = 1 << 14;

/// Pairs between a run's prefetch and its update.
const APPLY_AHEAD: usize = 16;

/// Reads `n` integer indices of type `ty` as i64 (u64 above i64::MAX saturates).
///
/// # Safety
/// `p` must hold `n` elements of `ty`.
unsafe fn widen_indices(p: *const u8, n: usize, ty: ElementType) -> Vec<i64> {
    with_index_type!(ty, I => {
        // SAFETY: forwarded; `p` holds `n` elements of `I`.
        let typed = unsafe { std::slice::from_raw_parts(p.cast::<I>(), n) };
        typed.iter().map(|&v| v.wide()).collect()
    })
}

#[cfg(test)]
mod tests {
    use crate::runner::check::{agrees_with_evaluator, random_literal};
    use platform_api::HloModule;

    /// Row scatters with an `add` combiner (`segment_sum`) of several row
    /// widths and types, with repeated and out-of-range indices, over several
    /// batches of pairs, agree with the evaluator bit for bit (each element
    /// updated in the indices' order).
    #[test]
    fn row_scatter_adds_match_the_evaluator() {
        let cases = [
            ("f32", 20000, 300, 32),
            ("f32", 4000, 50, 100),
            ("bf16", 9000, 700, 8),
            ("s32", 6000, 1000, 12),
            ("f64", 70000, 5, 1),
            // More pairs than fit one batch, in wider and narrower rows.
            ("s32", 40000, 300, 16),
            ("f32", 70000, 9, 4),
        ];
        for (k, &(ty, n, m, w)) in cases.iter().enumerate() {
            let text = format!(
                "HloModule m\nadd {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  \
                 ROOT r = {ty}[] add(a, b)\n}}\nENTRY e {{\n  x = {ty}[{m},{w}] parameter(0)\n  \
                 i = s32[{n},1] parameter(1)\n  u = {ty}[{n},{w}] parameter(2)\n  \
                 ROOT s = {ty}[{m},{w}] scatter(x, i, u), update_window_dims={{1}}, \
                 inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, \
                 index_vector_dim=1, to_apply=add\n}}\n"
            );
            check(
                &format!("segment sum {ty} {n}x{w} into {m}"),
                &text,
                m as i64,
                k,
            );
        }
        // Windows of two dimensions placed by two index components: runs
        // start anywhere in the output (the general walk).
        let text = "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                    ROOT r = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[97,13,7] parameter(0)\n  \
                    i = s32[24000,2] parameter(1)\n  u = f32[24000,5,7] parameter(2)\n  \
                    ROOT s = f32[97,13,7] scatter(x, i, u), update_window_dims={1,2}, \
                    inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, \
                    index_vector_dim=1, to_apply=add\n}\n";
        check("rank-3 windows", text, 97, 9);
    }

    /// The path that reads indices straight in their own type: s64 and s32
    /// indices (implicit and explicit index vectors), a plain set (repeated
    /// indices: the last update wins) of 1-, 2-, 4- and 8-byte elements,
    /// windows with unit dimensions around the run, and single elements
    /// placed in a rank-2 operand.
    #[test]
    fn direct_row_scatters_match_the_evaluator() {
        let add = |ty: &str| {
            format!("c {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT r = {ty}[] add(a, b)\n}}\n")
        };
        let set = |ty: &str| {
            format!("c {{\n  a = {ty}[] parameter(0)\n  ROOT b = {ty}[] parameter(1)\n}}\n")
        };
        // (combiner, operand, indices, updates, dimension numbers, limit)
        let rows = "update_window_dims={1}, inserted_window_dims={0}, \
                    scatter_dims_to_operand_dims={0}, index_vector_dim=1";
        let cases = [
            (
                add("f32"),
                "f32[300,24]",
                "s64[20000,1]",
                "f32[20000,24]",
                rows,
                300,
            ),
            (
                add("s32"),
                "s32[50,3]",
                "s64[9000]",
                "s32[9000,3]",
                rows,
                50,
            ),
            (
                set("f32"),
                "f32[300,24]",
                "s32[5000,1]",
                "f32[5000,24]",
                rows,
                300,
            ),
            (set("u8"), "u8[70,33]", "s64[3000]", "u8[3000,33]", rows, 70),
            (
                set("bf16"),
                "bf16[90,5]",
                "s32[3000,1]",
                "bf16[3000,5]",
                rows,
                90,
            ),
            (
                set("f64"),
                "f64[400]",
                "s32[3000]",
                "f64[3000]",
                "update_window_dims={}, inserted_window_dims={0}, \
              scatter_dims_to_operand_dims={0}, index_vector_dim=1",
                400,
            ),
            (
                add("f32"),
                "f32[60,1,17]",
                "s32[4000]",
                "f32[4000,1,17]",
                "update_window_dims={1,2}, inserted_window_dims={0}, \
              scatter_dims_to_operand_dims={0}, index_vector_dim=1",
                60,
            ),
            (
                add("f32"),
                "f32[60,5]",
                "s32[4000]",
                "f32[4000]",
                "update_window_dims={}, inserted_window_dims={0,1}, \
              scatter_dims_to_operand_dims={0}, index_vector_dim=1",
                60,
            ),
        ];
        for (k, (comb, x, i, u, dims, limit)) in cases.iter().enumerate() {
            let ty = x.split('[').next().unwrap();
            let text = format!(
                "HloModule m\n{comb}ENTRY e {{\n  x = {x} parameter(0)\n  i = {i} parameter(1)\n  \
                 u = {u} parameter(2)\n  ROOT s = {x} scatter(x, i, u), {dims}, to_apply=c\n}}\n"
            );
            check(
                &format!("direct scatter {k} ({ty}, {i})"),
                &text,
                *limit,
                40 + k,
            );
        }
    }

    /// Scalar updates placed by index vectors of one to four components
    /// (the loops for one, two and three and the general one), combined by
    /// `maximum` and by a plain set (repeated points: the last wins), with
    /// starts out of range at both ends.
    #[test]
    fn point_scatters_of_every_index_length() {
        let max = "c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                   ROOT r = f32[] maximum(a, b)\n}\n";
        let set = "c {\n  a = s32[] parameter(0)\n  ROOT b = s32[] parameter(1)\n}\n";
        for d in 1..=4usize {
            let dims = vec!["9"; d].join(",");
            let all = (0..d).map(|k| k.to_string()).collect::<Vec<_>>().join(",");
            for (comb, ty) in [(max, "f32"), (set, "s32")] {
                let text = format!(
                    "HloModule m\n{comb}ENTRY e {{\n  x = {ty}[{dims}] parameter(0)\n  \
                     i = s32[5000,{d}] parameter(1)\n  u = {ty}[5000] parameter(2)\n  \
                     ROOT s = {ty}[{dims}] scatter(x, i, u), update_window_dims={{}}, \
                     inserted_window_dims={{{all}}}, scatter_dims_to_operand_dims={{{all}}}, \
                     index_vector_dim=1, to_apply=c\n}}\n"
                );
                check(&format!("point scatter {d}-d {ty}"), &text, 9, 60 + d);
            }
        }
    }

    /// Single-element gathers (`table[idx]`, with the slice kept as a unit
    /// dimension or collapsed) read indices of every integer type in their
    /// own type: negative and past-the-end values clamp, and unsigned ones
    /// past `i64::MAX` (`u64`) clamp to the last start.
    #[test]
    fn point_gathers_take_every_integer_index_type() {
        let forms = [
            ("f32[5000,1]", "offset_dims={1}, collapsed_slice_dims={}"),
            ("f32[5000]", "offset_dims={}, collapsed_slice_dims={0}"),
        ];
        for (k, ity) in ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
            .iter()
            .enumerate()
        {
            for (f, (out, dims)) in forms.iter().enumerate() {
                let text = format!(
                    "HloModule m\nENTRY e {{\n  x = f32[200] parameter(0)\n  \
                     i = {ity}[5000,1] parameter(1)\n  ROOT g = {out} gather(x, i), {dims}, \
                     start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1}}\n}}\n"
                );
                check(
                    &format!("point gather {ity} {out}"),
                    &text,
                    200,
                    60 + 2 * k + f,
                );
            }
        }
    }

    /// A row scatter adds each row's updates in the indices' order: with
    /// values of many magnitudes the f32 sums differ in their last bits under
    /// any other order (the other tests' values sum exactly in any order).
    #[test]
    fn parallel_row_scatter_keeps_each_rows_order() {
        use platform_api::Literal;
        let (n, m, w) = (70000usize, 9usize, 4usize);
        let text = format!(
            "HloModule m\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT r = f32[] add(a, b)\n}}\nENTRY e {{\n  x = f32[{m},{w}] parameter(0)\n  \
             i = s32[{n},1] parameter(1)\n  u = f32[{n},{w}] parameter(2)\n  \
             ROOT s = f32[{m},{w}] scatter(x, i, u), update_window_dims={{1}}, \
             inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, \
             index_vector_dim=1, to_apply=add\n}}\n"
        );
        let x = Literal::from_slice::<f32>(&[m, w], &vec![0.0; m * w]).unwrap();
        // Rows -1..=9: the first and the last two are out of range.
        let idx: Vec<i32> = (0..n).map(|p| (p % 11) as i32 - 1).collect();
        let i = Literal::from_slice::<i32>(&[n, 1], &idx).unwrap();
        let upd: Vec<f32> = (0..n * w)
            .map(|e| {
                let h = (e as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                let scale = [1e-3f32, 1.0, 1e4][e % 3];
                (h as f32 / 16_777_216.0 - 0.5) * scale
            })
            .collect();
        let u = Literal::from_slice::<f32>(&[n, w], &upd).unwrap();
        agrees_with_evaluator("ordered parallel row scatter", &text, vec![x, i, u]);
    }

    /// Runs `text` (operand, indices, updates) with indices in `-2..limit + 2`.
    fn check(name: &str, text: &str, limit: i64, seed: usize) {
        let module = HloModule::parse(text).unwrap();
        let params = module.entry_program_shape().parameters;
        let args = params
            .iter()
            .enumerate()
            .map(|(i, s)| random_literal(s, 1000 + seed as u64 * 3 + i as u64, -2..limit + 2))
            .collect();
        agrees_with_evaluator(name, text, args);
    }
}
