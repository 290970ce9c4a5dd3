//! `concatenate`: operands laid end to end along one dimension.

use super::strided::{copy_box, row_major_strides, View};
use super::{expect_result, zeros};
use hlo_ir::{ArrayShape, Error, Literal, Result};

pub fn concatenate(
    operands: &[&Literal],
    dimension: usize,
    result: &ArrayShape,
) -> Result<Literal> {
    let Some(first) = operands.first() else {
        return Err(Error::invalid_argument(
            "concatenate needs at least one operand",
        ));
    };
    let first = first.array_shape()?;
    if dimension >= first.rank() {
        return Err(Error::invalid_argument(format!(
            "concatenate dimension {dimension} is out of range for {first}"
        )));
    }
    let mut dims = first.dims.clone();
    dims[dimension] = 0;
    for (i, operand) in operands.iter().enumerate() {
        let s = operand.array_shape()?;
        let same_elsewhere = s.rank() == first.rank()
            && (0..s.rank()).all(|d| d == dimension || s.dims[d] == first.dims[d]);
        if s.element_type != first.element_type || !same_elsewhere {
            return Err(Error::invalid_argument(format!(
                "concatenate operand {i} has shape {s}, which does not match operand 0 ({first}) outside dimension {dimension}"
            )));
        }
        dims[dimension] += s.dims[dimension];
    }
    expect_result(result, first.element_type, &dims)?;
    let mut out = zeros(first.element_type, &dims);
    let out_strides = row_major_strides(&dims);
    let mut position = 0usize;
    for operand in operands {
        let s = operand.array_shape()?;
        let dst_view = View {
            offset: position as isize * out_strides[dimension],
            strides: out_strides.clone(),
        };
        copy_box(
            first.element_type.byte_size(),
            &s.dims,
            out.bytes_mut()?,
            &dst_view,
            operand.bytes()?,
            &View::row_major(&s.dims),
        )?;
        position += s.dims[dimension];
    }
    Ok(out)
}
