//! `pad`: edge padding (negative values crop) and interior padding between elements.
//!
//! The result is filled with the padding value, then the operand elements that
//! land inside the result are copied as one strided box: element `i` of a
//! dimension goes to `low + i * (interior + 1)`; those falling before 0 or past
//! the end (negative edge padding) are skipped by trimming the box.

use super::strided::{copy_box, fill, row_major_strides, View};
use super::{expect_result, zeros};
use hlo_ir::PadDim;
use hlo_ir::{ArrayShape, Error, Literal, Result};

pub fn pad(
    operand: &Literal,
    padding_value: &Literal,
    config: &[PadDim],
    result: &ArrayShape,
) -> Result<Literal> {
    let op = operand.array_shape()?;
    let pv = padding_value.array_shape()?;
    if pv.element_count() != 1 || pv.element_type != op.element_type {
        return Err(Error::invalid_argument(format!(
            "the padding value {pv} is not a scalar of the operand's type {}",
            op.element_type
        )));
    }
    if config.len() != op.rank() {
        return Err(Error::invalid_argument(format!(
            "padding config has {} dimensions; the operand {op} has {}",
            config.len(),
            op.rank()
        )));
    }
    let mut dims = Vec::with_capacity(op.rank());
    for (d, p) in config.iter().enumerate() {
        let n = p.padded_size(op.dims[d]);
        if n < 0 {
            return Err(Error::invalid_argument(format!(
                "padding {}_{}_{} leaves dimension {d} of {op} with negative size",
                p.low, p.high, p.interior
            )));
        }
        dims.push(n as usize);
    }
    expect_result(result, op.element_type, &dims)?;
    let mut out = zeros(op.element_type, &dims);
    fill(out.bytes_mut()?, padding_value.bytes()?);

    let out_strides = row_major_strides(&dims);
    let in_strides = row_major_strides(&op.dims);
    let mut box_dims = Vec::with_capacity(op.rank());
    let mut src = View {
        offset: 0,
        strides: in_strides.clone(),
    };
    let mut dst = View {
        offset: 0,
        strides: Vec::with_capacity(op.rank()),
    };
    for (d, p) in config.iter().enumerate() {
        let step = p.interior as i64 + 1;
        let n = op.dims[d] as i64;
        let out_n = dims[d] as i64;
        // First operand index whose position is >= 0.
        let first = if p.low >= 0 {
            0
        } else {
            (-p.low + step - 1) / step
        };
        // One past the last operand index whose position is < out_n.
        let last = if out_n - 1 - p.low < 0 {
            0
        } else {
            ((out_n - 1 - p.low) / step + 1).min(n)
        };
        let count = (last - first).max(0) as usize;
        box_dims.push(count);
        src.offset += first as isize * in_strides[d];
        dst.offset += (p.low + first * step) as isize * out_strides[d];
        dst.strides.push(step as isize * out_strides[d]);
    }
    if box_dims.contains(&0) {
        return Ok(out);
    }
    copy_box(
        op.element_type.byte_size(),
        &box_dims,
        out.bytes_mut()?,
        &dst,
        operand.bytes()?,
        &src,
    )?;
    Ok(out)
}
