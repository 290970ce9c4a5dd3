//! Data movement: iota, broadcast, reshape, transpose, slices, concatenate, pad,
//! reverse, bitcast, dimension sizes and gather.

use super::{check_dims, check_sorted, dims_text, element_count, plain, Cx};
use crate::attrs::{GatherDimensionNumbers, PadDim, SliceDim};
use crate::error::Result;
use crate::shape::{ArrayShape, ElementType, Shape};

pub(super) fn iota(cx: &Cx, dimension: usize) -> Result<Shape> {
    cx.count(0)?;
    let a = cx.declared_array()?;
    if a.dims.is_empty() {
        return Err(cx.err(format!(
            "the result must have rank at least 1, got {}",
            plain(a)
        )));
    }
    if dimension >= a.rank() {
        return Err(cx.err(format!(
            "iota_dimension {dimension} is out of range for {}",
            plain(a)
        )));
    }
    if a.element_type.is_pred() {
        return Err(cx.err("the element type must be integer, floating point or complex, not pred"));
    }
    Ok(plain(a))
}

/// HLO `broadcast`: operand dimension `i` becomes result dimension
/// `dimensions[i]`, which must have the same size; the other result dimensions
/// come from the declared shape.
pub(super) fn broadcast(cx: &Cx, dimensions: &[usize]) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let out = cx.declared_array()?;
    if dimensions.len() != a.rank() {
        return Err(cx.err(format!(
            "dimensions {} must name one result dimension per operand dimension of {}",
            dims_text(dimensions),
            plain(a)
        )));
    }
    check_dims(cx, "dimensions", dimensions, out.rank())?;
    for (i, &d) in dimensions.iter().enumerate() {
        if a.dims[i] != out.dims[d] {
            return Err(cx.err(format!(
                "operand {} dimension {i} (size {}) cannot become dimension {d} of {} (size {})",
                plain(a),
                a.dims[i],
                Shape::array(out.element_type, out.dims.clone()),
                out.dims[d]
            )));
        }
    }
    Ok(Shape::array(a.element_type, out.dims.clone()))
}

/// Number of elements, or an error naming the shape when it overflows.
fn elements(cx: &Cx, a: &ArrayShape) -> Result<usize> {
    element_count(&a.dims).ok_or_else(|| cx.err(format!("{} has too many elements", plain(a))))
}

pub(super) fn reshape(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let out = cx.declared_array()?;
    let target = Shape::array(a.element_type, out.dims.clone());
    let (from, to) = (elements(cx, a)?, elements(cx, out)?);
    if from != to {
        return Err(cx.err(format!(
            "cannot reshape {} ({from} elements) to {target} ({to} elements)",
            plain(a)
        )));
    }
    Ok(target)
}

/// `dynamic-reshape(operand, size_0, ..., size_n-1)`: the declared shape gives the
/// bounds, one `s32[]` operand per result dimension gives the runtime size.
pub(super) fn dynamic_reshape(cx: &Cx) -> Result<Shape> {
    cx.at_least(1)?;
    let a = cx.array(0, "the operand")?;
    let out = cx.declared_array()?;
    cx.count(out.rank() + 1)?;
    for i in 1..cx.operands.len() {
        let s = cx.operand(i)?;
        if !super::is_scalar_of(s, ElementType::S32) {
            return Err(cx.err(format!("size operand {i} must be s32[], got {s}")));
        }
    }
    let target = ArrayShape {
        element_type: a.element_type,
        dims: out.dims.clone(),
        dynamic: out.dynamic.clone(),
        layout: None,
    };
    let (from, to) = (elements(cx, a)?, elements(cx, out)?);
    if from != to {
        return Err(cx.err(format!(
            "cannot reshape {} ({from} elements) to {} ({to} elements)",
            plain(a),
            plain(&target)
        )));
    }
    Ok(Shape::Array(target))
}

/// `transpose`: result dimension `i` is operand dimension `dimensions[i]`.
pub(super) fn transpose(cx: &Cx, dimensions: &[usize]) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    if dimensions.len() != a.rank() {
        return Err(cx.err(format!(
            "dimensions {} is not a permutation of the dimensions of {}",
            dims_text(dimensions),
            plain(a)
        )));
    }
    check_dims(cx, "dimensions", dimensions, a.rank())?;
    let dims: Vec<usize> = dimensions.iter().map(|&d| a.dims[d]).collect();
    Ok(Shape::array(a.element_type, dims))
}

pub(super) fn slice(cx: &Cx, slice: &[SliceDim]) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    if slice.len() != a.rank() {
        return Err(cx.err(format!(
            "{} slice ranges given for {} of rank {}",
            slice.len(),
            plain(a),
            a.rank()
        )));
    }
    let mut dims = Vec::with_capacity(slice.len());
    for (d, s) in slice.iter().enumerate() {
        if s.stride == 0 || s.start > s.limit || s.limit > a.dims[d] {
            return Err(cx.err(format!(
                "slice range [{}:{}:{}] of dimension {d} is invalid for {} (need start <= limit <= {}, stride >= 1)",
                s.start,
                s.limit,
                s.stride,
                plain(a),
                a.dims[d]
            )));
        }
        dims.push(s.len());
    }
    Ok(Shape::array(a.element_type, dims))
}

/// Checks the start-index operands of `dynamic-slice` / `dynamic-update-slice`
/// (operands `first..`): one integer scalar per dimension of the same type, or the
/// older form of one rank-1 integer vector.
fn check_start_indices(cx: &Cx, first: usize, a: &ArrayShape) -> Result<()> {
    let indices = cx.operands.get(first..).unwrap_or(&[]);
    if let [single] = indices {
        if let Shape::Array(v) = single {
            if v.rank() == 1 {
                if !v.element_type.is_integer() || v.dims[0] != a.rank() {
                    return Err(cx.err(format!(
                        "the start index vector {single} must hold {} integers for {}",
                        a.rank(),
                        plain(a)
                    )));
                }
                return Ok(());
            }
        }
    }
    if indices.len() != a.rank() {
        return Err(cx.err(format!(
            "{} start indices given for {} of rank {}",
            indices.len(),
            plain(a),
            a.rank()
        )));
    }
    let mut first_type = None;
    for (i, s) in indices.iter().enumerate() {
        let ok = matches!(s, Shape::Array(x) if x.dims.is_empty() && x.element_type.is_integer());
        if !ok {
            return Err(cx.err(format!(
                "start index {i} must be an integer scalar, got {s}"
            )));
        }
        let t = s.element_type();
        if *first_type.get_or_insert(t) != t {
            return Err(cx.err(format!(
                "start indices must all have one type, got {} and {s}",
                indices[0]
            )));
        }
    }
    Ok(())
}

pub(super) fn dynamic_slice(cx: &Cx, sizes: &[usize]) -> Result<Shape> {
    cx.at_least(1)?;
    let a = cx.array(0, "the operand")?;
    check_start_indices(cx, 1, a)?;
    if sizes.len() != a.rank() {
        return Err(cx.err(format!(
            "dynamic_slice_sizes {} must have one size per dimension of {}",
            dims_text(sizes),
            plain(a)
        )));
    }
    for (d, (&size, &bound)) in sizes.iter().zip(&a.dims).enumerate() {
        if size > bound {
            return Err(cx.err(format!(
                "slice size {size} of dimension {d} exceeds {}",
                plain(a)
            )));
        }
    }
    Ok(Shape::array(a.element_type, sizes.to_vec()))
}

pub(super) fn dynamic_update_slice(cx: &Cx) -> Result<Shape> {
    cx.at_least(2)?;
    let a = cx.array(0, "the operand")?;
    let update = cx.array(1, "the update")?;
    check_start_indices(cx, 2, a)?;
    if update.element_type != a.element_type || update.rank() != a.rank() {
        return Err(cx.err(format!(
            "update {} must have the element type and rank of the operand {}",
            plain(update),
            plain(a)
        )));
    }
    if update.dims.iter().zip(&a.dims).any(|(u, o)| u > o) {
        return Err(cx.err(format!(
            "update {} is larger than the operand {}",
            plain(update),
            plain(a)
        )));
    }
    Ok(plain(a))
}

pub(super) fn concatenate(cx: &Cx, dimension: usize) -> Result<Shape> {
    cx.at_least(1)?;
    let first = cx.array(0, "operand 0")?;
    if dimension >= first.rank() {
        return Err(cx.err(format!(
            "dimension {dimension} is out of range for {}",
            plain(first)
        )));
    }
    let mut dims = first.dims.clone();
    for i in 1..cx.operands.len() {
        let a = cx.array(i, &format!("operand {i}"))?;
        let same_other_dims = a.rank() == first.rank()
            && (0..a.rank()).all(|d| d == dimension || a.dims[d] == first.dims[d]);
        if a.element_type != first.element_type || !same_other_dims {
            return Err(cx.err(format!(
                "operand shapes {} and {} differ in more than dimension {dimension}",
                plain(first),
                plain(a)
            )));
        }
        dims[dimension] = dims[dimension]
            .checked_add(a.dims[dimension])
            .ok_or_else(|| cx.err("the result is too large"))?;
    }
    Ok(Shape::array(first.element_type, dims))
}

/// Size of a dimension of `n` elements after padding (`None` if absurdly large).
fn padded_size(n: usize, p: &PadDim) -> Option<i128> {
    let interior = (n as i128 - 1).max(0).checked_mul(p.interior as i128)?;
    (p.low as i128)
        .checked_add(n as i128)?
        .checked_add(interior)?
        .checked_add(p.high as i128)
}

pub(super) fn pad(cx: &Cx, config: &[PadDim]) -> Result<Shape> {
    cx.count(2)?;
    let a = cx.array(0, "the operand")?;
    let value = cx.operand(1)?;
    if !super::is_scalar_of(value, a.element_type) {
        return Err(cx.err(format!(
            "the padding value must be a scalar of the operand's type, got {value} for {}",
            plain(a)
        )));
    }
    if config.len() != a.rank() {
        return Err(cx.err(format!(
            "the padding config has {} dimensions, the operand {} has {}",
            config.len(),
            plain(a),
            a.rank()
        )));
    }
    let mut dims = Vec::with_capacity(config.len());
    for (d, p) in config.iter().enumerate() {
        let size = padded_size(a.dims[d], p);
        let size = size.and_then(|s| usize::try_from(s).ok()).ok_or_else(|| {
            cx.err(format!(
                "padding {}_{}_{} of dimension {d} of {} gives size {}",
                p.low,
                p.high,
                p.interior,
                plain(a),
                size.map_or("too large".to_string(), |s| s.to_string())
            ))
        })?;
        dims.push(size);
    }
    Ok(Shape::array(a.element_type, dims))
}

pub(super) fn reverse(cx: &Cx, dimensions: &[usize]) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    check_dims(cx, "dimensions", dimensions, a.rank())?;
    Ok(plain(a))
}

/// `bitcast`: any array shape with the same number of bytes (XLA also uses it to
/// change the element type between types of equal width, `f32[]` to `s32[]`).
pub(super) fn bitcast(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let out = cx.declared_array()?;
    let bytes = |x: &ArrayShape| {
        element_count(&x.dims).and_then(|n| n.checked_mul(x.element_type.byte_size()))
    };
    match (bytes(a), bytes(out)) {
        (Some(from), Some(to)) if from == to => Ok(plain(out)),
        (from, to) => Err(cx.err(format!(
            "cannot reinterpret {} ({} bytes) as {} ({} bytes)",
            plain(a),
            from.map_or("too many".to_string(), |n| n.to_string()),
            plain(out),
            to.map_or("too many".to_string(), |n| n.to_string()),
        ))),
    }
}

pub(super) fn get_dimension_size(cx: &Cx, dimension: usize) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    if dimension >= a.rank() {
        return Err(cx.err(format!(
            "dimension {dimension} is out of range for {}",
            plain(a)
        )));
    }
    Ok(Shape::scalar(ElementType::S32))
}

pub(super) fn set_dimension_size(cx: &Cx, dimension: usize) -> Result<Shape> {
    cx.count(2)?;
    let a = cx.array(0, "the operand")?;
    let size = cx.operand(1)?;
    if dimension >= a.rank() {
        return Err(cx.err(format!(
            "dimension {dimension} is out of range for {}",
            plain(a)
        )));
    }
    if !super::is_scalar_of(size, ElementType::S32) {
        return Err(cx.err(format!("the size operand must be s32[], got {size}")));
    }
    let mut out = a.clone();
    out.layout = None;
    out.dynamic.resize(out.dims.len(), false);
    out.dynamic[dimension] = true;
    Ok(Shape::Array(out))
}

/// `gather(operand, start_indices)` with XLA's dimension numbers, including the
/// batching dimensions.
pub(super) fn gather(cx: &Cx, dn: &GatherDimensionNumbers, slice_sizes: &[usize]) -> Result<Shape> {
    cx.count(2)?;
    let operand = cx.array(0, "the operand")?;
    let indices = cx.array(1, "the start indices")?;
    if !indices.element_type.is_integer() {
        return Err(cx.err(format!(
            "start indices must be integers, got {}",
            plain(indices)
        )));
    }
    let ivd = dn.index_vector_dim;
    if ivd > indices.rank() {
        return Err(cx.err(format!(
            "index_vector_dim {ivd} is out of range for start indices {}",
            plain(indices)
        )));
    }
    // Indices of rank r with index_vector_dim == r read as [..., 1].
    let mut expanded = indices.dims.clone();
    if ivd == expanded.len() {
        expanded.push(1);
    }
    let rank = operand.rank();
    check_sorted(cx, "offset_dims", &dn.offset_dims)?;
    let out_rank = dn.offset_dims.len() + expanded.len() - 1;
    if let Some(&d) = dn.offset_dims.iter().find(|&&d| d >= out_rank) {
        return Err(cx.err(format!(
            "offset_dims {} names dimension {d}, but the result has rank {out_rank}",
            dims_text(&dn.offset_dims)
        )));
    }
    if dn.start_index_map.len() != expanded[ivd] {
        return Err(cx.err(format!(
            "start_index_map {} has {} entries, but dimension {ivd} of the start indices {} has size {}",
            dims_text(&dn.start_index_map),
            dn.start_index_map.len(),
            plain(indices),
            expanded[ivd]
        )));
    }
    check_dims(cx, "start_index_map", &dn.start_index_map, rank)?;
    check_dims(cx, "collapsed_slice_dims", &dn.collapsed_slice_dims, rank)?;
    check_sorted(cx, "collapsed_slice_dims", &dn.collapsed_slice_dims)?;
    check_dims(cx, "operand_batching_dims", &dn.operand_batching_dims, rank)?;
    check_sorted(cx, "operand_batching_dims", &dn.operand_batching_dims)?;
    check_dims(
        cx,
        "start_indices_batching_dims",
        &dn.start_indices_batching_dims,
        expanded.len(),
    )?;
    if dn.start_indices_batching_dims.contains(&ivd) {
        return Err(cx.err(format!(
            "start_indices_batching_dims {} must not contain index_vector_dim {ivd}",
            dims_text(&dn.start_indices_batching_dims)
        )));
    }
    if let Some(d) = dn
        .collapsed_slice_dims
        .iter()
        .chain(&dn.start_index_map)
        .find(|d| dn.operand_batching_dims.contains(d))
    {
        return Err(cx.err(format!(
            "operand dimension {d} is a batching dimension and cannot also be collapsed or indexed"
        )));
    }
    if dn.operand_batching_dims.len() != dn.start_indices_batching_dims.len() {
        return Err(cx.err(format!(
            "operand_batching_dims {} and start_indices_batching_dims {} differ in length",
            dims_text(&dn.operand_batching_dims),
            dims_text(&dn.start_indices_batching_dims)
        )));
    }
    for (&o, &s) in dn
        .operand_batching_dims
        .iter()
        .zip(&dn.start_indices_batching_dims)
    {
        if operand.dims[o] != expanded[s] {
            return Err(cx.err(format!(
                "batching dimension {o} of the operand {} and dimension {s} of the start indices {} differ in size",
                plain(operand),
                plain(indices)
            )));
        }
    }
    if slice_sizes.len() != rank {
        return Err(cx.err(format!(
            "slice_sizes {} must have one size per dimension of the operand {}",
            dims_text(slice_sizes),
            plain(operand)
        )));
    }
    let window_dims =
        dn.offset_dims.len() + dn.collapsed_slice_dims.len() + dn.operand_batching_dims.len();
    if window_dims != rank {
        return Err(cx.err(format!(
            "offset_dims {}, collapsed_slice_dims {} and operand_batching_dims {} must together account for the {rank} dimensions of the operand {}",
            dims_text(&dn.offset_dims),
            dims_text(&dn.collapsed_slice_dims),
            dims_text(&dn.operand_batching_dims),
            plain(operand)
        )));
    }
    for (d, (&size, &bound)) in slice_sizes.iter().zip(&operand.dims).enumerate() {
        if size > bound {
            return Err(cx.err(format!(
                "slice size {size} of dimension {d} exceeds the operand {}",
                plain(operand)
            )));
        }
    }
    for &d in dn
        .collapsed_slice_dims
        .iter()
        .chain(&dn.operand_batching_dims)
    {
        if slice_sizes[d] > 1 {
            return Err(cx.err(format!(
                "dimension {d} is collapsed or batching, so its slice size must be at most 1, got {}",
                slice_sizes[d]
            )));
        }
    }
    // Result: offset dimensions take the sizes of the slice dimensions that are
    // neither collapsed nor batching, in order; the other dimensions are the start
    // indices' dimensions without index_vector_dim, in order.
    let mut slice_dims = (0..rank)
        .filter(|d| !dn.collapsed_slice_dims.contains(d) && !dn.operand_batching_dims.contains(d))
        .map(|d| slice_sizes[d]);
    let mut batch_dims = (0..expanded.len())
        .filter(|&d| d != ivd)
        .map(|d| expanded[d]);
    let mut dims = Vec::with_capacity(out_rank);
    for i in 0..out_rank {
        let next = if dn.offset_dims.contains(&i) {
            slice_dims.next()
        } else {
            batch_dims.next()
        };
        dims.push(next.ok_or_else(|| cx.err("inconsistent dimension numbers"))?);
    }
    Ok(Shape::array(operand.element_type, dims))
}
