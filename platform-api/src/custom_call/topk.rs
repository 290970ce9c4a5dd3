//! The built-in `TopK` target, as XLA CPU's optimized HLO calls it for
//! `lax.top_k`.
//!
//! XLA's `TopkRewriter` replaces a sort-then-slice by
//! `(values, indices) custom-call(x), custom_call_target="TopK"` with the
//! comparator as its called computation. The operand is `T[batch, n]` or `T[n]`;
//! the result is `(T[batch, k], s32[batch, k])` (or without the batch
//! dimension). Each row's `k` largest elements come out largest first, equal
//! elements in increasing index order, with the indices they had in the row.
//!
//! "Largest" is the order of the comparator XLA attaches, the total-order
//! greater-than: floats are compared as their bits read as sign-magnitude
//! integers, so `-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN`. XLA CPU's
//! runtime ignores the comparator and uses that order; so does this native
//! implementation (the comparator is not evaluated). Integer operands use their
//! value order. Leading dimensions beyond one batch dimension are all treated as
//! batch.

use super::typed::{array_text, CallFrame};
use crate::error::{Error, Result};
use crate::shape::ElementType;

pub(crate) fn top_k(frame: &mut CallFrame<'_>) -> Result<()> {
    frame.expect_counts(1, 2)?;
    let input = frame.arg(0)?;
    let ty = input.element_type();
    let dims = input.dims().to_vec();
    let Some((&n, batch_dims)) = dims.split_last() else {
        return Err(frame.error("TopK needs an operand of rank 1 or more; got a scalar"));
    };
    let [values_shape, indices_shape] = frame.result_shapes() else {
        return Err(frame.error("TopK returns (values, indices)"));
    };
    let k = values_shape.dims.last().copied().unwrap_or(0);
    let expected_values: Vec<usize> = batch_dims.iter().copied().chain([k]).collect();
    if values_shape.element_type != ty
        || values_shape.dims != expected_values
        || indices_shape.element_type != ElementType::S32
        || indices_shape.dims != expected_values
    {
        return Err(frame.error(format!(
            "TopK of {} returns ({}, {}); expected ({}, s32 of the same dimensions)",
            array_text(input.shape()),
            array_text(values_shape),
            array_text(indices_shape),
            array_text(&crate::shape::ArrayShape::new(ty, expected_values.clone())),
        )));
    }
    if k > n {
        return Err(frame.error(format!("TopK asks for k = {k} of rows of {n} elements")));
    }
    if n > i32::MAX as usize {
        return Err(frame.error(format!("TopK rows of {n} elements do not fit s32 indices")));
    }
    let bytes = input.bytes();
    let mut values = frame.take_result(0)?;
    let indices = frame.take_result(1)?.into_data::<i32>()?;
    let size = ty.byte_size();
    let key = key_fn(ty).ok_or_else(|| {
        Error::unimplemented(format!(
            "custom-call %{} (target \"TopK\"): element type {ty} is not supported",
            frame.instruction()
        ))
    })?;
    let out = values.bytes_mut();
    let rows = if n == 0 { 0 } else { bytes.len() / (n * size) };
    let mut order: Vec<(i128, u32)> = Vec::with_capacity(n);
    for row in 0..rows {
        let row_bytes = &bytes[row * n * size..(row + 1) * n * size];
        order.clear();
        order.extend(
            row_bytes
                .chunks_exact(size)
                .enumerate()
                .map(|(i, e)| (key(e), i as u32)),
        );
        // Largest key first; equal keys by increasing index. The order is total,
        // so the first k after a partial selection are exactly the answer.
        let by_rank = |a: &(i128, u32), b: &(i128, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        if k > 0 && k < n {
            order.select_nth_unstable_by(k - 1, by_rank);
        }
        order[..k].sort_unstable_by(by_rank);
        for (j, &(_, i)) in order[..k].iter().enumerate() {
            let at = row * k + j;
            let src = i as usize * size;
            out[at * size..(at + 1) * size].copy_from_slice(&row_bytes[src..src + size]);
            indices[at] = i as i32;
        }
    }
    Ok(())
}

/// A key whose integer order is the comparator's order for elements of `ty`.
fn key_fn(ty: ElementType) -> Option<fn(&[u8]) -> i128> {
    fn bytes<const N: usize>(e: &[u8]) -> [u8; N] {
        let mut b = [0u8; N];
        b.copy_from_slice(&e[..N]);
        b
    }
    // Sign-magnitude bits to a two's-complement order: flip the magnitude of
    // negatives, so more negative floats (and -NaN) sort lower.
    fn f32_key(e: &[u8]) -> i128 {
        let b = i32::from_le_bytes(bytes(e));
        (if b < 0 { b ^ i32::MAX } else { b }) as i128
    }
    fn f64_key(e: &[u8]) -> i128 {
        let b = i64::from_le_bytes(bytes(e));
        (if b < 0 { b ^ i64::MAX } else { b }) as i128
    }
    fn f16_key(e: &[u8]) -> i128 {
        let b = i16::from_le_bytes(bytes(e));
        (if b < 0 { b ^ i16::MAX } else { b }) as i128
    }
    Some(match ty {
        ElementType::F32 => f32_key,
        ElementType::F64 => f64_key,
        ElementType::F16 | ElementType::BF16 => f16_key,
        ElementType::S8 => |e| i8::from_le_bytes(bytes(e)) as i128,
        ElementType::S16 => |e| i16::from_le_bytes(bytes(e)) as i128,
        ElementType::S32 => |e| i32::from_le_bytes(bytes(e)) as i128,
        ElementType::S64 => |e| i64::from_le_bytes(bytes(e)) as i128,
        ElementType::U8 | ElementType::Pred => |e| e[0] as i128,
        ElementType::U16 => |e| u16::from_le_bytes(bytes(e)) as i128,
        ElementType::U32 => |e| u32::from_le_bytes(bytes(e)) as i128,
        ElementType::U64 => |e| u64::from_le_bytes(bytes(e)) as i128,
        _ => return None,
    })
}

crate::register_custom_call!("TopK", "Interpreter", Builtin(top_k));
crate::register_custom_call!("TopK", "Host", Builtin(top_k));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_follow_the_total_order() {
        let key = key_fn(ElementType::F32).unwrap();
        let k = |x: f32| key(&x.to_le_bytes());
        let ascending = [
            -f32::NAN,
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1e-30,
            2.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for w in ascending.windows(2) {
            assert!(k(w[0]) < k(w[1]), "{} should sort below {}", w[0], w[1]);
        }
    }
}
