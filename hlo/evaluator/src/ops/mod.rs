//! The operations the evaluator implements itself, one concept per module.
//!
//! Every function here takes operand literals and the instruction's attributes
//! and returns a new literal; none knows about the evaluator. Values are
//! *logical*: row-major, whatever layout the HLO shapes name. Only [`bitcast`]
//! looks at layouts, because only bitcast gives them meaning.
//!
//! Shapes are validated where an op would otherwise index out of bounds, so a
//! module that skipped the verifier gets an error naming the mismatch, not a
//! panic.

pub mod batch_norm;
pub mod bitcast;
pub mod broadcast;
pub mod concatenate;
pub mod iota;
pub mod pad;
pub mod reverse;
pub mod rng;
pub mod rng_bit_generator;
pub mod slicing;
pub mod strided;
pub mod transpose;

use hlo_ir::{ArrayShape, ElementType, Error, Literal, Result, Shape};

/// A layout-free array shape.
pub fn logical_shape(element_type: ElementType, dims: &[usize]) -> Shape {
    Shape::array(element_type, dims.to_vec())
}

/// A zero-filled array literal of the given type and dimensions.
pub fn zeros(element_type: ElementType, dims: &[usize]) -> Literal {
    Literal::zeros(&logical_shape(element_type, dims))
}

/// Checks that an op's declared result has the element type and dimensions it computes.
pub fn expect_result(result: &ArrayShape, element_type: ElementType, dims: &[usize]) -> Result<()> {
    if result.element_type != element_type || result.dims != dims {
        return Err(Error::invalid_argument(format!(
            "the instruction's shape is {result}, but its operands give {}",
            ArrayShape::new(element_type, dims.to_vec())
        )));
    }
    Ok(())
}

/// The array shape of a literal operand, with the operand's position in errors.
pub fn operand_shape<'a>(literal: &'a Literal, what: &str) -> Result<&'a ArrayShape> {
    literal.array_shape().map_err(|e| e.context(what))
}

/// Reads an integer scalar operand (an index) as `i64`, saturating unsigned
/// values above `i64::MAX` (they are clamped to the array bounds anyway).
pub fn index_scalar(literal: &Literal, what: &str) -> Result<i64> {
    let shape = operand_shape(literal, what)?;
    if shape.element_count() != 1 || !(shape.element_type.is_integer()) {
        return Err(Error::invalid_argument(format!(
            "{what} must be an integer scalar, got {shape}"
        )));
    }
    let v = literal.get(0)?;
    Ok(match v {
        hlo_ir::Scalar::U64(u) => i64::try_from(u).unwrap_or(i64::MAX),
        other => other.to_i64().unwrap_or(0),
    })
}
