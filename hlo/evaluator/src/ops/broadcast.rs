//! `broadcast`: operand dimension `k` becomes result dimension `dimensions[k]`;
//! every other result dimension repeats the data (a zero stride).

use super::strided::{copy_box, row_major_strides, View};
use super::{expect_result, zeros};
use hlo_ir::{ArrayShape, Error, Literal, Result};

pub fn broadcast(operand: &Literal, dimensions: &[usize], result: &ArrayShape) -> Result<Literal> {
    let op = operand.array_shape()?;
    if dimensions.len() != op.rank() {
        return Err(Error::invalid_argument(format!(
            "broadcast of a rank-{} operand {op} names {} dimensions {dimensions:?}",
            op.rank(),
            dimensions.len()
        )));
    }
    expect_result(result, op.element_type, &result.dims)?;
    let op_strides = row_major_strides(&op.dims);
    let mut src_strides = vec![0isize; result.rank()];
    let mut used = vec![false; result.rank()];
    for (k, &d) in dimensions.iter().enumerate() {
        if d >= result.rank() || used[d] || result.dims[d] != op.dims[k] {
            return Err(Error::invalid_argument(format!(
                "broadcast dimensions {dimensions:?} do not map operand {op} into result {result}"
            )));
        }
        used[d] = true;
        src_strides[d] = op_strides[k];
    }
    let mut out = zeros(op.element_type, &result.dims);
    let src_view = View {
        offset: 0,
        strides: src_strides,
    };
    copy_box(
        op.element_type.byte_size(),
        &result.dims,
        out.bytes_mut()?,
        &View::row_major(&result.dims),
        operand.bytes()?,
        &src_view,
    )?;
    Ok(out)
}
