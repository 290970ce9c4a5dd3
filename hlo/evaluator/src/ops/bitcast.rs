//! `bitcast`: the operand's bytes, as they lie in memory under the operand's
//! layout, reread as the result shape under the result's layout.
//!
//! Values in the interpreter are logical (row-major), so a bitcast is three
//! steps: lay the operand out physically, reinterpret the bytes, and read the
//! result back into logical order. XLA's optimized HLO uses this both for
//! reshapes and transposes that move no bytes (`f32[4,3]{0,1} bitcast(f32[3,4]{1,0})`)
//! and for reinterpreting an element type of the same width (`s32[] bitcast(f32[])`).

use super::strided::{copy_box, View};
use super::{logical_shape, zeros};
use hlo_ir::{ArrayShape, Error, Literal, Result};

/// For each logical dimension, its stride (in elements) in physical memory under
/// the shape's layout; row-major when the layout is absent or does not fit the rank.
fn physical_strides(shape: &ArrayShape) -> Vec<isize> {
    let rank = shape.rank();
    let minor_to_major: Vec<usize> = match &shape.layout {
        Some(l) if l.minor_to_major.len() == rank => l.minor_to_major.clone(),
        _ => (0..rank).rev().collect(),
    };
    let mut strides = vec![0isize; rank];
    let mut step = 1isize;
    for &d in &minor_to_major {
        if d < rank {
            strides[d] = step;
            step *= shape.dims[d] as isize;
        }
    }
    strides
}

fn is_row_major(shape: &ArrayShape) -> bool {
    shape
        .layout
        .as_ref()
        .is_none_or(|l| l.minor_to_major.len() != shape.rank() || l.is_row_major())
}

/// `operand` holds a value of `operand_shape` (the operand instruction's shape,
/// layout included); returns it reinterpreted as `result`.
pub fn bitcast(
    operand: &Literal,
    operand_shape: &ArrayShape,
    result: &ArrayShape,
) -> Result<Literal> {
    let have = operand.array_shape()?;
    if !have.compatible(operand_shape) {
        return Err(Error::internal(format!(
            "bitcast operand value {have} does not match its instruction shape {operand_shape}"
        )));
    }
    if operand_shape.byte_size() != result.byte_size() {
        return Err(Error::invalid_argument(format!(
            "bitcast from {operand_shape} ({} bytes) to {result} ({} bytes) changes the byte size",
            operand_shape.byte_size(),
            result.byte_size()
        )));
    }
    let in_size = operand_shape.element_type.byte_size();
    let out_size = result.element_type.byte_size();
    if is_row_major(operand_shape) && is_row_major(result) {
        return Literal::from_bytes(
            logical_shape(result.element_type, &result.dims),
            operand.bytes()?,
        );
    }
    if in_size != out_size {
        return Err(Error::unimplemented(format!(
            "bitcast from {operand_shape} to {result} changes the element width under a non-row-major layout"
        )));
    }
    // Logical operand → physical bytes.
    // (Staged in a literal for its 8-byte alignment.)
    let mut physical = zeros(operand_shape.element_type, &[operand_shape.element_count()]);
    copy_box(
        in_size,
        &operand_shape.dims,
        physical.bytes_mut()?,
        &View {
            offset: 0,
            strides: physical_strides(operand_shape),
        },
        operand.bytes()?,
        &View::row_major(&operand_shape.dims),
    )?;
    // Physical bytes → logical result.
    let mut out = zeros(result.element_type, &result.dims);
    copy_box(
        out_size,
        &result.dims,
        out.bytes_mut()?,
        &View::row_major(&result.dims),
        physical.bytes()?,
        &View {
            offset: 0,
            strides: physical_strides(result),
        },
    )?;
    Ok(out)
}
