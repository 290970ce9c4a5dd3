//! Data-movement operations on [`Literal`]s, for constant folding.
//!
//! These move whole elements (as bytes) and never compute with them, so they are
//! exact for every element type. Each checks its arguments and returns an error,
//! never panics, on shapes that do not fit. They walk the result's indices once,
//! which is what constant folding needs for the small constants it folds; the
//! interpreter has its own optimized copying engine.

use crate::error::{Error, Result};
use crate::hlo::{PadDim, SliceDim};
use crate::index::for_each_index;
use crate::literal::Literal;
use crate::native::Scalar;
use crate::semantics::convert_scalar;
use crate::shape::{row_major_strides, ArrayShape, ElementType, Shape};

fn array<'a>(lit: &'a Literal, what: &str) -> Result<&'a ArrayShape> {
    lit.array_shape().map_err(|_| {
        Error::invalid_argument(format!("{what}: expected an array, got {}", lit.shape()))
    })
}

/// A literal of `result`'s shape whose element at each index is the source
/// element at the linear index `source` returns for it (`None`: keep `fill`).
fn gather(
    what: &str,
    src: &Literal,
    result: &ArrayShape,
    fill: Option<&[u8]>,
    mut source: impl FnMut(&[usize]) -> Option<usize>,
) -> Result<Literal> {
    let s = array(src, what)?;
    if s.element_type != result.element_type {
        return Err(Error::invalid_argument(format!(
            "{what}: operand {} and result {} differ in element type",
            src.shape(),
            result
        )));
    }
    let size = s.element_type.byte_size();
    let mut out = Literal::zeros(&Shape::Array(result.clone()));
    let src_bytes = src.bytes()?;
    let out_bytes = out.bytes_mut()?;
    if let Some(fill) = fill {
        for chunk in out_bytes.chunks_exact_mut(size) {
            chunk.copy_from_slice(fill);
        }
    }
    let mut k = 0usize;
    let mut failure = None;
    for_each_index(&result.dims, |index| {
        if failure.is_none() {
            if let Some(from) = source(index) {
                match src_bytes.get(from * size..from * size + size) {
                    Some(bytes) => out_bytes[k * size..k * size + size].copy_from_slice(bytes),
                    None => failure = Some(from),
                }
            }
        }
        k += 1;
    });
    if let Some(from) = failure {
        return Err(Error::internal(format!(
            "{what}: source element {from} is outside the operand {}",
            src.shape()
        )));
    }
    Ok(out)
}

/// `transpose(x), dimensions=perm`: result dimension `i` is operand dimension
/// `perm[i]`.
pub fn transpose_literal(x: &Literal, perm: &[usize]) -> Result<Literal> {
    let s = array(x, "transpose")?;
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if !sorted.iter().copied().eq(0..s.rank()) {
        return Err(Error::invalid_argument(format!(
            "transpose: {perm:?} is not a permutation of the dimensions of {}",
            x.shape()
        )));
    }
    let strides = row_major_strides(&s.dims);
    let result = ArrayShape::new(s.element_type, perm.iter().map(|&p| s.dims[p]).collect());
    gather("transpose", x, &result, None, |index| {
        Some(index.iter().zip(perm).map(|(&i, &p)| i * strides[p]).sum())
    })
}

/// `broadcast(x), dimensions=dims` into `result`: operand dimension `k` is
/// result dimension `dims[k]`.
pub fn broadcast_literal(x: &Literal, dims: &[usize], result: &ArrayShape) -> Result<Literal> {
    let s = array(x, "broadcast")?;
    let fits = dims.len() == s.rank()
        && dims
            .iter()
            .zip(&s.dims)
            .all(|(&d, &n)| result.dims.get(d) == Some(&n));
    if !fits {
        return Err(Error::invalid_argument(format!(
            "broadcast: {} does not broadcast into {result} along {dims:?}",
            x.shape()
        )));
    }
    let strides = row_major_strides(&s.dims);
    gather("broadcast", x, result, None, |index| {
        Some(
            dims.iter()
                .zip(&strides)
                .map(|(&d, &st)| index[d] * st)
                .sum(),
        )
    })
}

/// `slice(x), slice={[start:limit:stride], ...}`.
pub fn slice_literal(x: &Literal, slice: &[SliceDim]) -> Result<Literal> {
    let s = array(x, "slice")?;
    let fits = slice.len() == s.rank()
        && slice
            .iter()
            .zip(&s.dims)
            .all(|(d, &n)| d.stride > 0 && d.start <= d.limit && d.limit <= n);
    if !fits {
        return Err(Error::invalid_argument(format!(
            "slice: {slice:?} does not fit {}",
            x.shape()
        )));
    }
    let strides = row_major_strides(&s.dims);
    let result = ArrayShape::new(s.element_type, slice.iter().map(SliceDim::len).collect());
    gather("slice", x, &result, None, |index| {
        Some(
            index
                .iter()
                .zip(slice)
                .zip(&strides)
                .map(|((&i, d), &st)| (d.start + i * d.stride) * st)
                .sum(),
        )
    })
}

/// `reverse(x), dimensions=dims`.
pub fn reverse_literal(x: &Literal, dims: &[usize]) -> Result<Literal> {
    let s = array(x, "reverse")?;
    if dims.iter().any(|&d| d >= s.rank()) {
        return Err(Error::invalid_argument(format!(
            "reverse: dimensions {dims:?} out of range for {}",
            x.shape()
        )));
    }
    let strides = row_major_strides(&s.dims);
    let mut reversed = vec![false; s.rank()];
    for &d in dims {
        reversed[d] = true;
    }
    let result = ArrayShape::new(s.element_type, s.dims.clone());
    gather("reverse", x, &result, None, |index| {
        Some(
            index
                .iter()
                .enumerate()
                .map(|(d, &i)| {
                    let i = if reversed[d] { s.dims[d] - 1 - i } else { i };
                    i * strides[d]
                })
                .sum(),
        )
    })
}

/// `pad(x, value), padding=config` (negative padding crops).
pub fn pad_literal(x: &Literal, value: &Literal, config: &[PadDim]) -> Result<Literal> {
    let s = array(x, "pad")?;
    let v = array(value, "pad value")?;
    if v.element_type != s.element_type || v.rank() != 0 || config.len() != s.rank() {
        return Err(Error::invalid_argument(format!(
            "pad: operand {} with value {} and {} padding dimensions",
            x.shape(),
            value.shape(),
            config.len()
        )));
    }
    let mut dims = Vec::with_capacity(s.rank());
    for (p, &n) in config.iter().zip(&s.dims) {
        let size = p.padded_size(n);
        if size < 0 {
            return Err(Error::invalid_argument(format!(
                "pad: padding {p:?} crops more than the {n} elements of {}",
                x.shape()
            )));
        }
        dims.push(size as usize);
    }
    if super::checked_count(&dims).is_none() {
        return Err(Error::invalid_argument(format!(
            "pad: padding {config:?} of {} gives too many elements",
            x.shape()
        )));
    }
    let strides = row_major_strides(&s.dims);
    let result = ArrayShape::new(s.element_type, dims);
    gather("pad", x, &result, Some(value.bytes()?), |index| {
        let mut linear = 0;
        for (d, &i) in index.iter().enumerate() {
            // Position relative to the first operand element.
            let rel = i as i64 - config[d].low;
            let step = config[d].interior as i64 + 1;
            if rel < 0 || rel % step != 0 {
                return None;
            }
            let k = (rel / step) as usize;
            if k >= s.dims[d] {
                return None;
            }
            linear += k * strides[d];
        }
        Some(linear)
    })
}

/// `concatenate(parts...), dimensions={dimension}`.
pub fn concatenate_literals(parts: &[&Literal], dimension: usize) -> Result<Literal> {
    let first = parts
        .first()
        .ok_or_else(|| Error::invalid_argument("concatenate: no operands"))?;
    let f = array(first, "concatenate")?;
    if dimension >= f.rank() {
        return Err(Error::invalid_argument(format!(
            "concatenate: dimension {dimension} out of range for {}",
            first.shape()
        )));
    }
    let mut total = 0;
    for part in parts {
        let p = array(part, "concatenate")?;
        let same_other_dims =
            p.rank() == f.rank() && (0..f.rank()).all(|d| d == dimension || p.dims[d] == f.dims[d]);
        if p.element_type != f.element_type || !same_other_dims {
            return Err(Error::invalid_argument(format!(
                "concatenate: operands {} and {} do not fit along dimension {dimension}",
                first.shape(),
                part.shape()
            )));
        }
        total += p.dims[dimension];
    }
    let mut dims = f.dims.clone();
    dims[dimension] = total;
    let size = f.element_type.byte_size();
    let mut out = Literal::zeros(&Shape::array(f.element_type, dims.clone()));
    // Row-major: the result is `outer` blocks, each the concatenation of every
    // part's block of `dims[dimension..]` elements.
    let outer: usize = f.dims[..dimension].iter().product();
    let out_bytes = out.bytes_mut()?;
    let mut at = 0;
    for o in 0..outer {
        for part in parts {
            let block = part.dims()[dimension..].iter().product::<usize>() * size;
            let bytes = part.bytes()?;
            let src = bytes.get(o * block..(o + 1) * block).ok_or_else(|| {
                Error::internal(format!("concatenate: operand {} is short", part.shape()))
            })?;
            out_bytes[at..at + block].copy_from_slice(src);
            at += block;
        }
    }
    Ok(out)
}

/// `iota`, `iota_dimension=dimension`, of shape `result`: each element is its
/// index along `dimension`, converted to the element type as `convert` would.
pub fn iota_literal(result: &ArrayShape, dimension: usize) -> Result<Literal> {
    if dimension >= result.rank() || result.element_type == ElementType::Pred {
        return Err(Error::invalid_argument(format!(
            "iota: dimension {dimension} of {result}"
        )));
    }
    let mut out = Literal::zeros(&Shape::array(result.element_type, result.dims.clone()));
    // One converted value per position along the dimension, then copied.
    let values: Vec<Scalar> = (0..result.dims[dimension])
        .map(|i| convert_scalar(Scalar::S64(i as i64), result.element_type))
        .collect();
    let mut k = 0;
    let mut failure = None;
    for_each_index(&result.dims, |index| {
        if let Err(e) = out.set(k, values[index[dimension]]) {
            failure.get_or_insert(e);
        }
        k += 1;
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota_vec(n: usize) -> Literal {
        Literal::vector(&(0..n as i32).collect::<Vec<_>>())
    }

    #[test]
    fn movement_ops_place_elements_where_the_semantics_say() {
        let x = iota_vec(6).reshape(&[2, 3]).unwrap();
        let t = transpose_literal(&x, &[1, 0]).unwrap();
        assert_eq!(t.dims(), &[3, 2]);
        assert_eq!(t.data::<i32>().unwrap(), &[0, 3, 1, 4, 2, 5]);

        let b = broadcast_literal(
            &iota_vec(3),
            &[1],
            &ArrayShape::new(ElementType::S32, vec![2, 3]),
        )
        .unwrap();
        assert_eq!(b.data::<i32>().unwrap(), &[0, 1, 2, 0, 1, 2]);

        let s = slice_literal(
            &x,
            &[
                SliceDim {
                    start: 0,
                    limit: 2,
                    stride: 1,
                },
                SliceDim {
                    start: 0,
                    limit: 3,
                    stride: 2,
                },
            ],
        )
        .unwrap();
        assert_eq!(s.data::<i32>().unwrap(), &[0, 2, 3, 5]);

        let r = reverse_literal(&x, &[1]).unwrap();
        assert_eq!(r.data::<i32>().unwrap(), &[2, 1, 0, 5, 4, 3]);

        let p = pad_literal(
            &iota_vec(3),
            &Literal::scalar(-1i32),
            &[PadDim {
                low: 1,
                high: -1,
                interior: 1,
            }],
        )
        .unwrap();
        assert_eq!(p.data::<i32>().unwrap(), &[-1, 0, -1, 1, -1]);

        let c = concatenate_literals(&[&x, &x], 1).unwrap();
        assert_eq!(c.dims(), &[2, 6]);
        assert_eq!(
            c.data::<i32>().unwrap(),
            &[0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]
        );

        let i = iota_literal(&ArrayShape::new(ElementType::F32, vec![2, 2]), 0).unwrap();
        assert_eq!(i.data::<f32>().unwrap(), &[0.0, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let x = iota_vec(6);
        assert!(transpose_literal(&x, &[1]).is_err());
        assert!(slice_literal(
            &x,
            &[SliceDim {
                start: 0,
                limit: 7,
                stride: 1
            }]
        )
        .is_err());
        assert!(reverse_literal(&x, &[1]).is_err());
        assert!(pad_literal(
            &x,
            &Literal::scalar(0i32),
            &[PadDim {
                low: -7,
                high: 0,
                interior: 0
            }]
        )
        .is_err());
        assert!(concatenate_literals(&[], 0).is_err());
        assert!(iota_literal(&ArrayShape::new(ElementType::S32, vec![2]), 1).is_err());
    }
}
