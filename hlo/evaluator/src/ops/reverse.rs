//! `reverse`: the listed dimensions run backwards (a negative stride from the far end).

use super::strided::{copy_box, row_major_strides, View};
use super::zeros;
use hlo_ir::{Error, Literal, Result};

pub fn reverse(operand: &Literal, dimensions: &[usize]) -> Result<Literal> {
    let op = operand.array_shape()?;
    let mut view = View::row_major(&op.dims);
    let strides = row_major_strides(&op.dims);
    let mut seen = vec![false; op.rank()];
    for &d in dimensions {
        if d >= op.rank() || std::mem::replace(&mut seen[d], true) {
            return Err(Error::invalid_argument(format!(
                "reverse dimensions {dimensions:?} are not distinct dimensions of {op}"
            )));
        }
        if op.dims[d] > 0 {
            view.offset += (op.dims[d] as isize - 1) * strides[d];
        }
        view.strides[d] = -strides[d];
    }
    let mut out = zeros(op.element_type, &op.dims);
    copy_box(
        op.element_type.byte_size(),
        &op.dims,
        out.bytes_mut()?,
        &View::row_major(&op.dims),
        operand.bytes()?,
        &view,
    )?;
    Ok(out)
}
