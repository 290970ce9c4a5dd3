//! `gather` and `scatter`, with batching dimensions.
//!
//! Both ops pair "batch" (gather) / "scatter" (scatter) positions — the
//! dimensions of the index array other than `index_vector_dim` — with a window
//! of the operand. For a position, the index vector is read from the index
//! array; component `k` is the start along operand dimension
//! `start_index_map[k]` (`scatter_dims_to_operand_dims[k]`); each operand
//! batching dimension takes its start from the position's coordinate in the
//! paired index-array batching dimension; all other starts are 0. The window
//! spans the operand dimensions that are neither collapsed/inserted nor
//! batching, in order, and lines up with the offset/update-window dimensions of
//! the result/updates.
//!
//! Out-of-bounds starts, exactly as XLA:
//! * gather clamps each start into `[0, operand_dim - slice_size]`, so the
//!   whole slice is always in bounds;
//! * scatter skips a position whose window does not lie entirely inside the
//!   operand (checked per dimension: `0 <= start` and
//!   `start + window_size <= operand_dim`), applying none of its updates.
//!
//! Scatter applies positions in row-major order of the updates' scatter
//! dimensions and, within a position, window elements in row-major order, so
//! duplicate indices combine sequentially in that order. The combiner gets
//! `(operand values..., update values...)`. A combiner that is a binary op of
//! its two parameters, or that returns the update (`.at[].set`), runs as a
//! typed loop.

use super::scalar::{typed_binary, CombineError, Subcomputation, TypedBinary};
use super::util::{self, invalid, operand_array, read_indices, Element};
use super::CallComputation;
use hlo_ir::Op;
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result, Scalar, Shape};

/// Where each batch/scatter position reads its index vector and what it maps to.
struct IndexMap {
    /// Index-array dimensions other than `index_vector_dim`, in order.
    position_dims: Vec<usize>,
    /// Strides of the index array.
    strides: Vec<usize>,
    /// Stride between index-vector components (0 when the vector is implicit).
    component_stride: usize,
    /// `operand dimension` for each index-vector component.
    start_map: Vec<usize>,
    /// `(operand dimension, position dimension number)` pairs for batching dims.
    batching: Vec<(usize, usize)>,
}

impl IndexMap {
    #[allow(clippy::too_many_arguments)]
    fn new(
        instr: &HloInstruction,
        index_dims: &[usize],
        index_vector_dim: usize,
        start_map: &[usize],
        operand_batching: &[usize],
        index_batching: &[usize],
        operand_rank: usize,
    ) -> Result<IndexMap> {
        let rank = index_dims.len();
        if index_vector_dim > rank {
            return Err(invalid(
                instr,
                format!("index_vector_dim {index_vector_dim} is beyond the indices' rank {rank}"),
            ));
        }
        let vector_len = if index_vector_dim < rank {
            index_dims[index_vector_dim]
        } else {
            1
        };
        if vector_len != start_map.len() {
            return Err(invalid(
                instr,
                format!(
                    "index vectors have {vector_len} components but {} operand dimensions are mapped",
                    start_map.len()
                ),
            ));
        }
        if start_map.iter().any(|&d| d >= operand_rank) {
            return Err(invalid(
                instr,
                format!("index map {start_map:?} names a dimension beyond the operand's rank {operand_rank}"),
            ));
        }
        let position_dims: Vec<usize> = (0..rank).filter(|&d| d != index_vector_dim).collect();
        let strides = util::strides_of(index_dims);
        let component_stride = if index_vector_dim < rank {
            strides[index_vector_dim]
        } else {
            0
        };
        if operand_batching.len() != index_batching.len() {
            return Err(invalid(
                instr,
                format!(
                    "operand batching dims {operand_batching:?} and index batching dims {index_batching:?} differ in length"
                ),
            ));
        }
        let mut batching = Vec::new();
        for (&od, &id) in operand_batching.iter().zip(index_batching) {
            let pos = position_dims.iter().position(|&d| d == id).ok_or_else(|| {
                invalid(
                    instr,
                    format!("index batching dimension {id} is not a dimension of the indices (or is the index vector)"),
                )
            })?;
            if od >= operand_rank {
                return Err(invalid(
                    instr,
                    format!("operand batching dimension {od} is beyond the operand's rank"),
                ));
            }
            batching.push((od, pos));
        }
        Ok(IndexMap {
            position_dims,
            strides,
            component_stride,
            start_map: start_map.to_vec(),
            batching,
        })
    }

    /// The sizes of the position dimensions.
    fn position_shape(&self, index_dims: &[usize]) -> Vec<usize> {
        self.position_dims.iter().map(|&d| index_dims[d]).collect()
    }

    /// Writes the (unclamped) start of every operand dimension for `position`.
    fn starts(&self, indices: &[i64], position: &[usize], starts: &mut [i64]) {
        starts.iter_mut().for_each(|s| *s = 0);
        let base: usize = position
            .iter()
            .zip(&self.position_dims)
            .map(|(&p, &d)| p * self.strides[d])
            .sum();
        for (k, &od) in self.start_map.iter().enumerate() {
            starts[od] = starts[od].saturating_add(indices[base + k * self.component_stride]);
        }
        for &(od, pos) in &self.batching {
            starts[od] = starts[od].saturating_add(position[pos] as i64);
        }
    }
}

/// Copies elements of `size` bytes from `src` to `dst` over a walk of `dims`,
/// with whole rows at once when the innermost dimension is contiguous in both.
#[allow(clippy::too_many_arguments)]
fn copy_block(
    src: &[u8],
    src_base: usize,
    src_strides: &[usize],
    dst: &mut [u8],
    dst_base: usize,
    dst_strides: &[usize],
    dims: &[usize],
    size: usize,
) {
    if let (Some(&n), Some(&1), Some(&1)) = (dims.last(), src_strides.last(), dst_strides.last()) {
        let outer = dims.len() - 1;
        let run = n * size;
        util::walk2(
            &dims[..outer],
            &src_strides[..outer],
            &dst_strides[..outer],
            |s, d| {
                let (s, d) = ((src_base + s) * size, (dst_base + d) * size);
                dst[d..d + run].copy_from_slice(&src[s..s + run]);
            },
        );
    } else {
        util::walk2(dims, src_strides, dst_strides, |s, d| {
            let (s, d) = ((src_base + s) * size, (dst_base + d) * size);
            dst[d..d + size].copy_from_slice(&src[s..s + size]);
        });
    }
}

/// The `gather` kernel.
pub fn gather(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Gather {
        dnums, slice_sizes, ..
    } = &instr.op
    else {
        return Err(invalid(instr, "not a gather"));
    };
    if operands.len() != 2 {
        return Err(invalid(
            instr,
            format!("expects 2 operands, got {}", operands.len()),
        ));
    }
    let (operand, operand_shape) = operand_array(instr, operands, 0)?;
    let (indices_lit, indices_shape) = operand_array(instr, operands, 1)?;
    let result_shape = util::result_array(instr)?;
    let op_dims = &operand_shape.dims;
    let rank = op_dims.len();
    if slice_sizes.len() != rank || slice_sizes.iter().zip(op_dims).any(|(s, d)| s > d) {
        return Err(invalid(
            instr,
            format!(
                "slice_sizes {slice_sizes:?} do not fit operand {}",
                operand.shape()
            ),
        ));
    }
    for &d in dnums
        .collapsed_slice_dims
        .iter()
        .chain(&dnums.operand_batching_dims)
    {
        if d >= rank || slice_sizes[d] != 1 {
            return Err(invalid(
                instr,
                format!("collapsed/batching dimension {d} must exist and have slice size 1"),
            ));
        }
    }
    let map = IndexMap::new(
        instr,
        &indices_shape.dims,
        dnums.index_vector_dim,
        &dnums.start_index_map,
        &dnums.operand_batching_dims,
        &dnums.start_indices_batching_dims,
        rank,
    )?;
    let window_operand_dims: Vec<usize> = (0..rank)
        .filter(|d| {
            !dnums.collapsed_slice_dims.contains(d) && !dnums.operand_batching_dims.contains(d)
        })
        .collect();
    let out_dims = &result_shape.dims;
    let position_shape = map.position_shape(&indices_shape.dims);
    let batch_out_dims: Vec<usize> = (0..out_dims.len())
        .filter(|d| !dnums.offset_dims.contains(d))
        .collect();
    let shape_ok = result_shape.element_type == operand_shape.element_type
        && dnums.offset_dims.len() == window_operand_dims.len()
        && batch_out_dims.len() == position_shape.len()
        && dnums.offset_dims.iter().all(|&d| d < out_dims.len())
        && batch_out_dims
            .iter()
            .zip(&position_shape)
            .all(|(&d, &s)| out_dims[d] == s)
        && dnums
            .offset_dims
            .iter()
            .zip(&window_operand_dims)
            .all(|(&o, &w)| out_dims[o] == slice_sizes[w]);
    if !shape_ok {
        return Err(invalid(
            instr,
            format!(
                "result shape {} does not match gathering slices {slice_sizes:?} of {} at indices {}",
                instr.shape,
                operand.shape(),
                indices_lit.shape()
            ),
        ));
    }
    for &(od, pos) in &map.batching {
        if op_dims[od] != position_shape[pos] {
            return Err(invalid(
                instr,
                format!("operand batching dimension {od} and its index batching dimension differ in size"),
            ));
        }
    }

    let indices = read_indices(instr, indices_lit)?;
    let size = operand_shape.element_type.byte_size();
    let op_strides = util::strides_of(op_dims);
    let out_strides = util::strides_of(out_dims);
    let window_sizes: Vec<usize> = window_operand_dims
        .iter()
        .map(|&d| slice_sizes[d])
        .collect();
    let window_src_strides: Vec<usize> =
        window_operand_dims.iter().map(|&d| op_strides[d]).collect();
    let window_dst_strides: Vec<usize> =
        dnums.offset_dims.iter().map(|&d| out_strides[d]).collect();
    let src = operand.bytes()?;
    let mut result = Literal::zeros(&Shape::Array(result_shape.clone()));
    let dst = result.bytes_mut()?;
    if result_shape.element_count() == 0 {
        return Ok(result);
    }

    let mut position = vec![0usize; position_shape.len()];
    let mut starts = vec![0i64; rank];
    loop {
        map.starts(&indices, &position, &mut starts);
        let mut src_base = 0usize;
        for d in 0..rank {
            let is_batching = map.batching.iter().any(|&(od, _)| od == d);
            let start = if is_batching {
                starts[d]
            } else {
                starts[d].clamp(0, (op_dims[d] - slice_sizes[d]) as i64)
            };
            src_base += start as usize * op_strides[d];
        }
        let dst_base: usize = position
            .iter()
            .zip(&batch_out_dims)
            .map(|(&p, &d)| p * out_strides[d])
            .sum();
        copy_block(
            src,
            src_base,
            &window_src_strides,
            dst,
            dst_base,
            &window_dst_strides,
            &window_sizes,
            size,
        );
        if !hlo_ir::index::next_index(&mut position, &position_shape) {
            break;
        }
    }
    Ok(result)
}

/// The `scatter` kernel.
pub fn scatter(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Scatter {
        dnums, to_apply, ..
    } = &instr.op
    else {
        return Err(invalid(instr, "not a scatter"));
    };
    if operands.len() < 3 || operands.len() % 2 != 1 {
        return Err(invalid(
            instr,
            format!(
                "expects N operands, indices and N updates; got {} operands",
                operands.len()
            ),
        ));
    }
    let n = operands.len() / 2;
    let (_, first) = operand_array(instr, operands, 0)?;
    let op_dims = first.dims.clone();
    let rank = op_dims.len();
    let (indices_lit, indices_shape) = operand_array(instr, operands, n)?;
    let (_, first_update) = operand_array(instr, operands, n + 1)?;
    let upd_dims = first_update.dims.clone();
    let mut targets = Vec::with_capacity(n);
    let mut updates = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        let (o, os) = operand_array(instr, operands, i)?;
        let (u, us) = operand_array(instr, operands, n + 1 + i)?;
        if os.dims != op_dims || us.dims != upd_dims || us.element_type != os.element_type {
            return Err(invalid(
                instr,
                format!(
                    "operand {i} ({}) and updates {i} ({}) must match operand 0 ({}) and updates 0 ({}) in shape, and each other in type",
                    o.shape(),
                    u.shape(),
                    operands[0].shape(),
                    operands[n + 1].shape()
                ),
            ));
        }
        targets.push(o);
        updates.push(u);
        types.push(os.element_type);
    }
    let out_shapes: Vec<ArrayShape> = if n == 1 {
        vec![util::result_array(instr)?.clone()]
    } else {
        (0..n)
            .map(|i| util::result_tuple_element(instr, i).cloned())
            .collect::<Result<_>>()?
    };
    for (i, s) in out_shapes.iter().enumerate() {
        if s.dims != op_dims || s.element_type != types[i] {
            return Err(invalid(
                instr,
                format!(
                    "result {i} has shape {s}, but operand {i} is {}",
                    operands[i].shape()
                ),
            ));
        }
    }
    for &d in dnums
        .inserted_window_dims
        .iter()
        .chain(&dnums.input_batching_dims)
    {
        if d >= rank {
            return Err(invalid(
                instr,
                format!("inserted/batching dimension {d} is beyond the operand's rank"),
            ));
        }
    }
    let map = IndexMap::new(
        instr,
        &indices_shape.dims,
        dnums.index_vector_dim,
        &dnums.scatter_dims_to_operand_dims,
        &dnums.input_batching_dims,
        &dnums.scatter_indices_batching_dims,
        rank,
    )?;
    let window_operand_dims: Vec<usize> = (0..rank)
        .filter(|d| {
            !dnums.inserted_window_dims.contains(d) && !dnums.input_batching_dims.contains(d)
        })
        .collect();
    let position_shape = map.position_shape(&indices_shape.dims);
    let scatter_upd_dims: Vec<usize> = (0..upd_dims.len())
        .filter(|d| !dnums.update_window_dims.contains(d))
        .collect();
    let shape_ok = dnums.update_window_dims.len() == window_operand_dims.len()
        && dnums.update_window_dims.iter().all(|&d| d < upd_dims.len())
        && scatter_upd_dims.len() == position_shape.len()
        && scatter_upd_dims
            .iter()
            .zip(&position_shape)
            .all(|(&d, &s)| upd_dims[d] == s)
        && dnums
            .update_window_dims
            .iter()
            .zip(&window_operand_dims)
            .all(|(&u, &o)| upd_dims[u] <= op_dims[o]);
    if !shape_ok {
        return Err(invalid(
            instr,
            format!(
                "updates {} do not fit operand {} with indices {}",
                operands[n + 1].shape(),
                operands[0].shape(),
                indices_lit.shape()
            ),
        ));
    }
    for &(od, pos) in &map.batching {
        if op_dims[od] != position_shape[pos] {
            return Err(invalid(
                instr,
                format!(
                    "input batching dimension {od} and its index batching dimension differ in size"
                ),
            ));
        }
    }
    // Window size in every operand dimension (1 for inserted and batching dims).
    let mut window_size = vec![1usize; rank];
    for (&u, &o) in dnums.update_window_dims.iter().zip(&window_operand_dims) {
        window_size[o] = upd_dims[u];
    }

    let mut sub = Subcomputation::new(calls, *to_apply);
    let param_types: Vec<ElementType> = types.iter().chain(types.iter()).copied().collect();
    sub.check_params(
        &format!("update computation of %{}", instr.name),
        &param_types,
    )
    .map_err(|e| invalid(instr, e.message()))?;
    if sub.num_outputs() != n {
        return Err(invalid(
            instr,
            format!(
                "update computation returns {} values for {n} operands",
                sub.num_outputs()
            ),
        ));
    }

    let indices = read_indices(instr, indices_lit)?;
    let op_strides = util::strides_of(&op_dims);
    let upd_strides = util::strides_of(&upd_dims);
    let win_dims: Vec<usize> = dnums
        .update_window_dims
        .iter()
        .map(|&d| upd_dims[d])
        .collect();
    let win_op_strides: Vec<usize> = window_operand_dims.iter().map(|&d| op_strides[d]).collect();
    let win_upd_strides: Vec<usize> = dnums
        .update_window_dims
        .iter()
        .map(|&d| upd_strides[d])
        .collect();

    // Every in-bounds position as (operand offset, updates offset) of its window start.
    let mut windows: Vec<(usize, usize)> = Vec::new();
    if upd_dims.iter().product::<usize>() > 0 {
        let mut position = vec![0usize; position_shape.len()];
        let mut starts = vec![0i64; rank];
        loop {
            map.starts(&indices, &position, &mut starts);
            let in_bounds = (0..rank).all(|d| {
                starts[d] >= 0 && starts[d] as u64 + window_size[d] as u64 <= op_dims[d] as u64
            });
            if in_bounds {
                let op_base: usize = (0..rank).map(|d| starts[d] as usize * op_strides[d]).sum();
                let upd_base: usize = position
                    .iter()
                    .zip(&scatter_upd_dims)
                    .map(|(&p, &d)| p * upd_strides[d])
                    .sum();
                windows.push((op_base, upd_base));
            }
            if !hlo_ir::index::next_index(&mut position, &position_shape) {
                break;
            }
        }
    }
    let plan = ScatterPlan {
        windows: &windows,
        win_dims: &win_dims,
        win_op_strides: &win_op_strides,
        win_upd_strides: &win_upd_strides,
    };

    if n == 1 {
        if sub.as_param() == Some(1) {
            // Replace: copy the update bytes over the operand's.
            let size = types[0].byte_size();
            let mut result = targets[0].clone();
            let src = updates[0].bytes()?;
            let dst = result.bytes_mut()?;
            for &(op_base, upd_base) in &windows {
                copy_block(
                    src,
                    upd_base,
                    plan.win_upd_strides,
                    dst,
                    op_base,
                    plan.win_op_strides,
                    plan.win_dims,
                    size,
                );
            }
            result.set_layout(out_shapes[0].layout.clone());
            return Ok(result);
        }
        if let Some((op, swapped, ty)) = sub.as_binary() {
            let errors = CombineError::default();
            let visitor = TypedScatter {
                target: targets[0],
                updates: updates[0],
                shape: &out_shapes[0],
                plan: &plan,
            };
            if let Some(result) = typed_binary(op, ty, swapped, &errors, visitor) {
                errors.take()?;
                return result;
            }
        }
    }

    // Generic path over scalars.
    let mut results: Vec<Literal> = targets.iter().map(|&t| (*t).clone()).collect();
    let sizes: Vec<usize> = types.iter().map(|t| t.byte_size()).collect();
    let upd_bytes: Vec<&[u8]> = updates.iter().map(|u| u.bytes()).collect::<Result<_>>()?;
    let mut args = vec![Scalar::Pred(false); 2 * n];
    let mut combined = vec![Scalar::Pred(false); n];
    let mut failure: Option<hlo_ir::Error> = None;
    for &(op_base, upd_base) in &windows {
        let mut offsets = Vec::new();
        util::walk2(&win_dims, &win_op_strides, &win_upd_strides, |o, u| {
            offsets.push((op_base + o, upd_base + u))
        });
        for (o, u) in offsets {
            for i in 0..n {
                args[i] = results[i].get(o)?;
                let s = sizes[i];
                args[n + i] = Scalar::from_bytes(types[i], &upd_bytes[i][u * s..u * s + s]);
            }
            if let Err(e) = sub.apply(calls, &args, &mut combined) {
                failure = Some(e);
                break;
            }
            for i in 0..n {
                results[i].set(o, combined[i]).map_err(|e| {
                    invalid(instr, format!("update computation result: {}", e.message()))
                })?;
            }
        }
        if failure.is_some() {
            break;
        }
    }
    if let Some(e) = failure {
        return Err(e.context(format!("%{} (scatter)", instr.name)));
    }
    for (r, s) in results.iter_mut().zip(&out_shapes) {
        r.set_layout(s.layout.clone());
    }
    Ok(if n == 1 {
        results.swap_remove(0)
    } else {
        Literal::tuple(results)
    })
}

struct ScatterPlan<'a> {
    windows: &'a [(usize, usize)],
    win_dims: &'a [usize],
    win_op_strides: &'a [usize],
    win_upd_strides: &'a [usize],
}

struct TypedScatter<'a> {
    target: &'a Literal,
    updates: &'a Literal,
    shape: &'a ArrayShape,
    plan: &'a ScatterPlan<'a>,
}

impl TypedBinary for TypedScatter<'_> {
    type Output = Result<Literal>;
    fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, f: F) -> Result<Literal> {
        let mut out = self.target.data::<T>()?.to_vec();
        let upd = self.updates.data::<T>()?;
        let p = self.plan;
        for &(op_base, upd_base) in p.windows {
            util::walk2(p.win_dims, p.win_op_strides, p.win_upd_strides, |o, u| {
                let o = op_base + o;
                out[o] = f(out[o], upd[upd_base + u]);
            });
        }
        util::literal_from_values(self.shape, &out)
    }
}
