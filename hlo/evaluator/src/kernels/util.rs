//! Small helpers every kernel shares: operand and shape checks that name the
//! instruction in their errors, row-major index walking with running offsets,
//! typed views of literals, and reading integer index arrays.
//!
//! Kernels work on logical row-major data (a [`Literal`]'s bytes are always
//! row-major), so "an index" here is a row-major multi-index and "an offset" is
//! the element position that index has in some array, computed incrementally
//! from per-dimension strides instead of by division per element.

use half::{bf16, f16};
use hlo_ir::shape::row_major_strides;
use hlo_ir::{ArrayShape, ElementType, Error, HloInstruction, Literal, Result, Scalar, Shape};
use num_complex::{Complex32, Complex64};

/// An `InvalidArgument` error that names the instruction (`%name (opcode): ...`).
pub(crate) fn invalid(instr: &HloInstruction, message: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("%{} ({}): {message}", instr.name, instr.opcode()))
}

/// The array shape of operand `i`, or an error naming the instruction.
pub(crate) fn operand_array<'a>(
    instr: &HloInstruction,
    operands: &[&'a Literal],
    i: usize,
) -> Result<(&'a Literal, &'a ArrayShape)> {
    let literal = operands
        .get(i)
        .copied()
        .ok_or_else(|| invalid(instr, format!("operand {i} is missing")))?;
    let shape = literal.shape().as_array().ok_or_else(|| {
        invalid(
            instr,
            format!("operand {i} must be an array, got {}", literal.shape()),
        )
    })?;
    Ok((literal, shape))
}

/// The instruction's result shape as an array.
pub(crate) fn result_array(instr: &HloInstruction) -> Result<&ArrayShape> {
    instr.shape.as_array().ok_or_else(|| {
        invalid(
            instr,
            format!("result shape must be an array, got {}", instr.shape),
        )
    })
}

/// The `i`-th element of a tuple result shape, as an array.
pub(crate) fn result_tuple_element(instr: &HloInstruction, i: usize) -> Result<&ArrayShape> {
    instr
        .shape
        .tuple_shapes()
        .get(i)
        .and_then(Shape::as_array)
        .ok_or_else(|| {
            invalid(
                instr,
                format!("result shape {} has no array element {i}", instr.shape),
            )
        })
}

/// The single element of a rank-0 operand (an init value, a padding value).
pub(crate) fn scalar_operand(
    instr: &HloInstruction,
    operands: &[&Literal],
    i: usize,
) -> Result<Scalar> {
    let (literal, shape) = operand_array(instr, operands, i)?;
    if !shape.dims.is_empty() {
        return Err(invalid(
            instr,
            format!("operand {i} must be a scalar, got {}", literal.shape()),
        ));
    }
    literal.get(0)
}

/// A literal of `shape` (layout kept as metadata) from row-major bytes.
pub(crate) fn literal_from_bytes(shape: &ArrayShape, bytes: &[u8]) -> Result<Literal> {
    Literal::from_bytes(Shape::Array(shape.clone()), bytes)
}

/// A literal of `shape` from typed row-major values.
pub(crate) fn literal_from_values<T: bytemuck::Pod>(
    shape: &ArrayShape,
    values: &[T],
) -> Result<Literal> {
    literal_from_bytes(shape, bytemuck::cast_slice(values))
}

/// Row-major strides of an array shape.
pub(crate) fn strides_of(dims: &[usize]) -> Vec<usize> {
    row_major_strides(dims)
}

/// Walks every index of `dims` in row-major order carrying two running offsets:
/// `f(a, b)` receives `sum(index[d] * strides_a[d])` and the same for `strides_b`.
/// The innermost dimension runs as a plain loop, so the cost per element is an
/// add, not a multi-index update. Nothing is visited if a dimension is 0; a
/// rank-0 walk visits `(0, 0)` once.
pub(crate) fn walk2(
    dims: &[usize],
    strides_a: &[usize],
    strides_b: &[usize],
    mut f: impl FnMut(usize, usize),
) {
    if dims.contains(&0) {
        return;
    }
    let rank = dims.len();
    if rank == 0 {
        f(0, 0);
        return;
    }
    let inner = rank - 1;
    let (n, sa, sb) = (dims[inner], strides_a[inner], strides_b[inner]);
    let mut index = vec![0usize; inner];
    let (mut base_a, mut base_b) = (0usize, 0usize);
    loop {
        let (mut a, mut b) = (base_a, base_b);
        for _ in 0..n {
            f(a, b);
            a += sa;
            b += sb;
        }
        // Advance the outer index, keeping the base offsets in step.
        let mut d = inner;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            base_a += strides_a[d];
            base_b += strides_b[d];
            if index[d] < dims[d] {
                break;
            }
            base_a -= strides_a[d] * dims[d];
            base_b -= strides_b[d] * dims[d];
            index[d] = 0;
        }
    }
}

/// Like [`walk2`] with one running offset.
pub(crate) fn walk1(dims: &[usize], strides: &[usize], mut f: impl FnMut(usize)) {
    walk2(dims, strides, strides, |a, _| f(a));
}

/// `data` (row-major with dimensions `dims`) transposed so that result
/// dimension `i` is input dimension `perm[i]`.
pub(crate) fn permute<T: Copy>(data: &[T], dims: &[usize], perm: &[usize]) -> Vec<T> {
    let in_strides = strides_of(dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let out_count: usize = out_dims.iter().product();
    let gather_strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let mut out = Vec::with_capacity(out_count);
    walk1(&out_dims, &gather_strides, |src| out.push(data[src]));
    out
}

/// Reads an integer index array as `i64`s (unsigned 64-bit values above
/// `i64::MAX` saturate, which keeps them out of bounds as they should be).
pub(crate) fn read_indices(instr: &HloInstruction, literal: &Literal) -> Result<Vec<i64>> {
    let ty = literal
        .element_type()
        .ok_or_else(|| invalid(instr, "index operand must be an array"))?;
    Ok(match ty {
        ElementType::S8 => literal.data::<i8>()?.iter().map(|&v| v as i64).collect(),
        ElementType::S16 => literal.data::<i16>()?.iter().map(|&v| v as i64).collect(),
        ElementType::S32 => literal.data::<i32>()?.iter().map(|&v| v as i64).collect(),
        ElementType::S64 => literal.data::<i64>()?.to_vec(),
        ElementType::U8 => literal.data::<u8>()?.iter().map(|&v| v as i64).collect(),
        ElementType::U16 => literal.data::<u16>()?.iter().map(|&v| v as i64).collect(),
        ElementType::U32 => literal.data::<u32>()?.iter().map(|&v| v as i64).collect(),
        ElementType::U64 => literal
            .data::<u64>()?
            .iter()
            .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
            .collect(),
        other => {
            return Err(invalid(
                instr,
                format!("indices must have an integer type, got {other}"),
            ))
        }
    })
}

/// A Rust element type that can be read back out of a [`Scalar`] of its own type.
pub(crate) trait Element: hlo_ir::NativeType + Default {
    fn from_scalar(value: Scalar) -> Option<Self>;
}

macro_rules! element {
    ($t:ty, $variant:ident) => {
        impl Element for $t {
            fn from_scalar(value: Scalar) -> Option<Self> {
                match value {
                    Scalar::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
element!(i8, S8);
element!(i16, S16);
element!(i32, S32);
element!(i64, S64);
element!(u16, U16);
element!(u32, U32);
element!(u64, U64);
element!(f16, F16);
element!(bf16, BF16);
element!(f32, F32);
element!(f64, F64);
element!(Complex32, C64);
element!(Complex64, C128);

/// `u8` stands for both `u8` and `pred` (stored as one byte holding 0 or 1).
impl Element for u8 {
    fn from_scalar(value: Scalar) -> Option<Self> {
        match value {
            Scalar::U8(v) => Some(v),
            Scalar::Pred(v) => Some(v as u8),
            _ => None,
        }
    }
}

/// Converts a typed value back to the [`Scalar`] of element type `ty` (only
/// differs from `to_scalar` for `pred`, which is viewed as `u8`).
pub(crate) fn to_scalar_of<T: Element>(value: T, ty: ElementType) -> Scalar {
    let s = value.to_scalar();
    match (ty, s) {
        (ElementType::Pred, Scalar::U8(v)) => Scalar::Pred(v != 0),
        _ => s,
    }
}

/// Total-order key of a float's bits: the unsigned integers ordered as XLA's
/// `TOTALORDER` comparison orders floats (-NaN < -inf < ... < -0 < +0 < ... <
/// +inf < +NaN).
pub(crate) fn total_order_key(bits: u64, width: u32) -> u64 {
    let sign = 1u64 << (width - 1);
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if bits & sign != 0 {
        !bits & mask
    } else {
        bits | sign
    }
}

/// An unsigned key whose integer order is the element order of `value` under
/// XLA's total order (integers by value, floats by [`total_order_key`], pred
/// false < true). `None` for complex values, which have no order.
pub(crate) fn ordered_key(value: Scalar) -> Option<u64> {
    const FLIP: u64 = 1 << 63;
    Some(match value {
        Scalar::Pred(v) => v as u64,
        Scalar::S8(v) => (v as i64 as u64) ^ FLIP,
        Scalar::S16(v) => (v as i64 as u64) ^ FLIP,
        Scalar::S32(v) => (v as i64 as u64) ^ FLIP,
        Scalar::S64(v) => (v as u64) ^ FLIP,
        Scalar::U8(v) => v as u64,
        Scalar::U16(v) => v as u64,
        Scalar::U32(v) => v as u64,
        Scalar::U64(v) => v,
        Scalar::F16(v) => total_order_key(v.to_bits() as u64, 16),
        Scalar::BF16(v) => total_order_key(v.to_bits() as u64, 16),
        Scalar::F32(v) => total_order_key(v.to_bits() as u64, 32),
        Scalar::F64(v) => total_order_key(v.to_bits(), 64),
        Scalar::C64(_) | Scalar::C128(_) => return None,
    })
}

/// Whether a scalar is a floating-point NaN.
pub(crate) fn is_nan(value: Scalar) -> bool {
    match value {
        Scalar::F16(v) => v.is_nan(),
        Scalar::BF16(v) => v.is_nan(),
        Scalar::F32(v) => v.is_nan(),
        Scalar::F64(v) => v.is_nan(),
        Scalar::C64(v) => v.re.is_nan() || v.im.is_nan(),
        Scalar::C128(v) => v.re.is_nan() || v.im.is_nan(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk2_matches_naive_offsets() {
        let dims = [2, 3, 4];
        let sa = strides_of(&dims);
        let sb = [1, 2, 6];
        let mut got = Vec::new();
        walk2(&dims, &sa, &sb, |a, b| got.push((a, b)));
        let mut want = Vec::new();
        hlo_ir::index::for_each_index(&dims, |i| {
            want.push((
                i[0] * sa[0] + i[1] * sa[1] + i[2] * sa[2],
                i[0] * sb[0] + i[1] * sb[1] + i[2] * sb[2],
            ))
        });
        assert_eq!(got, want);
        let mut n = 0;
        walk1(&[], &[], |_| n += 1);
        assert_eq!(n, 1);
        walk1(&[3, 0], &[0, 1], |_| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn permute_transposes() {
        let data: Vec<i32> = (0..6).collect();
        // [2,3] -> [3,2]
        assert_eq!(permute(&data, &[2, 3], &[1, 0]), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn total_order_keys_order_floats_like_xla() {
        let values = [
            f32::from_bits(0xffc0_0000), // -NaN
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ];
        let keys: Vec<u64> = values
            .iter()
            .map(|&v| ordered_key(Scalar::F32(v)).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        assert!(ordered_key(Scalar::S32(-1)).unwrap() < ordered_key(Scalar::S32(0)).unwrap());
    }
}
