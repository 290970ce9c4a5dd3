//! `iota`: each element is its index along one dimension, converted to the
//! element type (integers wrap, floats round to nearest, `pred` is `index != 0`).

use super::broadcast::broadcast;
use super::zeros;
use half::{bf16, f16};
use hlo_ir::{ArrayShape, ElementType, Error, Literal, Result, Scalar};
use num_complex::{Complex32, Complex64};

/// The index `i` as an element of type `ty`.
pub fn index_as(ty: ElementType, i: usize) -> Scalar {
    use ElementType::*;
    match ty {
        Pred => Scalar::Pred(i != 0),
        S8 => Scalar::S8(i as i8),
        S16 => Scalar::S16(i as i16),
        S32 => Scalar::S32(i as i32),
        S64 => Scalar::S64(i as i64),
        U8 => Scalar::U8(i as u8),
        U16 => Scalar::U16(i as u16),
        U32 => Scalar::U32(i as u32),
        U64 => Scalar::U64(i as u64),
        F16 => Scalar::F16(f16::from_f64(i as f64)),
        BF16 => Scalar::BF16(bf16::from_f64(i as f64)),
        F32 => Scalar::F32(i as f32),
        F64 => Scalar::F64(i as f64),
        C64 => Scalar::C64(Complex32::new(i as f32, 0.0)),
        C128 => Scalar::C128(Complex64::new(i as f64, 0.0)),
        // A narrow literal stores a real value converted (wrapped or rounded).
        t if t.is_integer() => Scalar::S64(i as i64),
        _ => Scalar::F64(i as f64),
    }
}

pub fn iota(dimension: usize, result: &ArrayShape) -> Result<Literal> {
    if dimension >= result.rank() {
        return Err(Error::invalid_argument(format!(
            "iota dimension {dimension} is out of range for {result}"
        )));
    }
    let ty = result.element_type;
    if result.dims.contains(&0) {
        // No elements, whatever the other dimensions: building the index line
        // first would allocate the (possibly huge) length of `dimension`.
        return Ok(zeros(ty, &result.dims));
    }
    let n = result.dims[dimension];
    let mut line = zeros(ty, &[n]);
    let size = ty.byte_size();
    let bytes = line.bytes_mut()?;
    for i in 0..n {
        index_as(ty, i).write_bytes(&mut bytes[i * size..(i + 1) * size]);
    }
    broadcast(&line, &[dimension], result)
}
