//! `transpose`: result dimension `i` is operand dimension `permutation[i]`.

use super::strided::{copy_box, row_major_strides, View};
use super::zeros;
use hlo_ir::{ArrayShape, Error, Literal, Result};

pub fn transpose(operand: &Literal, permutation: &[usize], result: &ArrayShape) -> Result<Literal> {
    let op = operand.array_shape()?;
    let mut seen = vec![false; op.rank()];
    let valid = permutation.len() == op.rank()
        && permutation
            .iter()
            .all(|&p| p < op.rank() && !std::mem::replace(&mut seen[p], true));
    if !valid {
        return Err(Error::invalid_argument(format!(
            "{permutation:?} is not a permutation of the dimensions of {op}"
        )));
    }
    let dims: Vec<usize> = permutation.iter().map(|&p| op.dims[p]).collect();
    super::expect_result(result, op.element_type, &dims)?;
    let op_strides = row_major_strides(&op.dims);
    let src_view = View {
        offset: 0,
        strides: permutation.iter().map(|&p| op_strides[p]).collect(),
    };
    let mut out = zeros(op.element_type, &dims);
    copy_box(
        op.element_type.byte_size(),
        &dims,
        out.bytes_mut()?,
        &View::row_major(&dims),
        operand.bytes()?,
        &src_view,
    )?;
    Ok(out)
}
