//! `slice`, `dynamic-slice` and `dynamic-update-slice`.
//!
//! Dynamic start indices are clamped exactly as XLA specifies: each start is
//! moved into `[0, operand_dim - size]`, so the slice (or the update) always
//! lies wholly inside the operand. A start of any integer type is accepted;
//! unsigned values are never read as negative.

use super::strided::{copy_box, row_major_strides, View};
use super::{expect_result, index_scalar, zeros};
use hlo_ir::SliceDim;
use hlo_ir::{ArrayShape, Error, Literal, Result};

pub fn slice(operand: &Literal, slice: &[SliceDim], result: &ArrayShape) -> Result<Literal> {
    let op = operand.array_shape()?;
    if slice.len() != op.rank() {
        return Err(Error::invalid_argument(format!(
            "slice names {} dimensions of the rank-{} operand {op}",
            slice.len(),
            op.rank()
        )));
    }
    for (d, s) in slice.iter().enumerate() {
        if s.stride == 0 || s.start > s.limit || s.limit > op.dims[d] {
            return Err(Error::invalid_argument(format!(
                "slice [{}:{}:{}] is not within dimension {d} of {op}",
                s.start, s.limit, s.stride
            )));
        }
    }
    let dims: Vec<usize> = slice.iter().map(SliceDim::len).collect();
    expect_result(result, op.element_type, &dims)?;
    let strides = row_major_strides(&op.dims);
    let view = View {
        offset: slice
            .iter()
            .zip(&strides)
            .map(|(s, &st)| s.start as isize * st)
            .sum(),
        strides: slice
            .iter()
            .zip(&strides)
            .map(|(s, &st)| s.stride as isize * st)
            .collect(),
    };
    let mut out = zeros(op.element_type, &dims);
    copy_box(
        op.element_type.byte_size(),
        &dims,
        out.bytes_mut()?,
        &View::row_major(&dims),
        operand.bytes()?,
        &view,
    )?;
    Ok(out)
}

/// Reads start indices given either as one scalar operand per dimension or (the
/// older form) as a single rank-1 operand, and clamps each to `[0, dim - size]`.
fn clamped_starts(
    starts: &[&Literal],
    operand_dims: &[usize],
    sizes: &[usize],
) -> Result<Vec<usize>> {
    let rank = operand_dims.len();
    let scalar_form = starts.len() == rank && starts.iter().all(|s| s.dims().is_empty());
    let raw: Vec<i64> = if scalar_form {
        starts
            .iter()
            .enumerate()
            .map(|(i, s)| index_scalar(s, &format!("start index {i}")))
            .collect::<Result<_>>()?
    } else if starts.len() == 1 && starts[0].dims() == [rank] {
        let v = starts[0];
        if !v.array_shape()?.element_type.is_integer() {
            return Err(Error::invalid_argument(format!(
                "start indices {} are not integers",
                v.shape()
            )));
        }
        (0..rank)
            .map(|i| Ok(v.get(i)?.to_i64().unwrap_or(0)))
            .collect::<Result<_>>()?
    } else {
        return Err(Error::invalid_argument(format!(
            "{} start index operand(s) do not give one integer scalar per dimension of a rank-{rank} operand",
            starts.len()
        )));
    };
    Ok(raw
        .iter()
        .zip(operand_dims.iter().zip(sizes))
        .map(|(&start, (&dim, &size))| start.clamp(0, (dim - size) as i64) as usize)
        .collect())
}

pub fn dynamic_slice(
    operand: &Literal,
    starts: &[&Literal],
    sizes: &[usize],
    result: &ArrayShape,
) -> Result<Literal> {
    let op = operand.array_shape()?;
    if sizes.len() != op.rank() || sizes.iter().zip(&op.dims).any(|(s, d)| s > d) {
        return Err(Error::invalid_argument(format!(
            "dynamic_slice_sizes {sizes:?} do not fit the operand {op}"
        )));
    }
    expect_result(result, op.element_type, sizes)?;
    let starts = clamped_starts(starts, &op.dims, sizes)?;
    let strides = row_major_strides(&op.dims);
    let view = View {
        offset: starts
            .iter()
            .zip(&strides)
            .map(|(&s, &st)| s as isize * st)
            .sum(),
        strides,
    };
    let mut out = zeros(op.element_type, sizes);
    copy_box(
        op.element_type.byte_size(),
        sizes,
        out.bytes_mut()?,
        &View::row_major(sizes),
        operand.bytes()?,
        &view,
    )?;
    Ok(out)
}

/// Writes `update` into `operand` (which is modified in place and returned).
pub fn dynamic_update_slice(
    mut operand: Literal,
    update: &Literal,
    starts: &[&Literal],
) -> Result<Literal> {
    let op = operand.array_shape()?.clone();
    let up = update.array_shape()?;
    if up.element_type != op.element_type
        || up.rank() != op.rank()
        || up.dims.iter().zip(&op.dims).any(|(u, d)| u > d)
    {
        return Err(Error::invalid_argument(format!(
            "the update {up} does not fit inside the operand {op}"
        )));
    }
    let starts = clamped_starts(starts, &op.dims, &up.dims)?;
    let strides = row_major_strides(&op.dims);
    let view = View {
        offset: starts
            .iter()
            .zip(&strides)
            .map(|(&s, &st)| s as isize * st)
            .sum(),
        strides,
    };
    copy_box(
        op.element_type.byte_size(),
        &up.dims,
        operand.bytes_mut()?,
        &view,
        update.bytes()?,
        &View::row_major(&up.dims),
    )?;
    Ok(operand)
}
