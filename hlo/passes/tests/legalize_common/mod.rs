//! Helpers shared by the `legalize_*` tests: the core op set a small backend
//! declares, and comparing results with a tolerance.
//!
//! Comparison: integers and `pred` must be equal; floats must agree in NaN-ness
//! (any NaN matches any NaN: the "up to NaN" expansions keep NaN-ness, not the
//! sign or payload), in infinities and otherwise to within `ulps` units in the
//! last place of the type (0: the same value, with the sign of zero).

#![allow(dead_code)]

use hlo_ir::shape::ElementType as T;
use hlo_ir::{Literal, Opcode, Scalar};
use hlo_passes::legalize::OpSupport;

/// The ~30 ops of a small backend: arithmetic, logic and shifts, data
/// movement, `dot`, `reduce`, control flow, indexing; the numeric types but
/// not `f16`/`bf16` (except in `convert` and the data-movement ops, which only
/// move bytes).
pub fn core_support() -> OpSupport {
    use Opcode::*;
    OpSupport::new()
        .ops(&[
            Add,
            Multiply,
            Divide,
            Compare,
            Select,
            Exp,
            Log,
            Sqrt,
            Tanh,
            Sin,
            Cos,
            And,
            Or,
            Xor,
            ShiftLeft,
            ShiftRightLogical,
            ShiftRightArithmetic,
            Dot,
            Reduce,
            While,
            Conditional,
            Scatter,
        ])
        .types(&[
            T::Pred,
            T::S8,
            T::S32,
            T::S64,
            T::U8,
            T::U32,
            T::U64,
            T::F32,
            T::F64,
        ])
        .any_type(&[
            Convert,
            Broadcast,
            Reshape,
            Transpose,
            Slice,
            Concatenate,
            Iota,
            DynamicSlice,
            DynamicUpdateSlice,
            Gather,
        ])
}

/// The `k`-th float of a literal element as `(f64 value, ulp at that value)`.
fn float_and_ulp(s: &Scalar) -> Option<(f64, f64)> {
    let (v, mantissa_bits, min_exp) = match *s {
        Scalar::F16(x) => (f64::from(x.to_f32()), 10, -14),
        Scalar::BF16(x) => (f64::from(x.to_f32()), 7, -126),
        Scalar::F32(x) => (f64::from(x), 23, -126),
        Scalar::F64(x) => (x, 52, -1022),
        _ => return None,
    };
    let exp = if v == 0.0 || !v.is_finite() {
        min_exp
    } else {
        (v.abs().log2().floor() as i32).max(min_exp)
    };
    // In two steps: `powi` of a very negative exponent (below -1022) goes
    // through an overflowing reciprocal and gives 0.
    Some((v, 2f64.powi(exp) * 2f64.powi(-mantissa_bits)))
}

/// `Ok` if `got` matches `want` as the module docs say.
pub fn close(want: &Literal, got: &Literal, ulps: f64) -> Result<(), String> {
    close_or_within(want, got, ulps, 0.0, 0.0)
}

/// [`close`], also accepting finite floats with `|got - want| <= atol + rtol *
/// |want|` (a conformance case's own tolerance).
pub fn close_or_within(
    want: &Literal,
    got: &Literal,
    ulps: f64,
    rtol: f64,
    atol: f64,
) -> Result<(), String> {
    if !want.shape().compatible(got.shape()) {
        return Err(format!(
            "shapes differ: {} vs {}",
            want.shape(),
            got.shape()
        ));
    }
    let (lw, lg) = (want.clone().flatten_leaves(), got.clone().flatten_leaves());
    for (leaf, (w, g)) in lw.iter().zip(&lg).enumerate() {
        let (ws, gs) = (
            w.scalars().map_err(|e| e.to_string())?,
            g.scalars().map_err(|e| e.to_string())?,
        );
        for (k, (a, b)) in ws.iter().zip(&gs).enumerate() {
            let ok = match (float_and_ulp(a), float_and_ulp(b)) {
                (Some((x, ulp)), Some((y, _))) => {
                    (x.is_nan() && y.is_nan())
                        || (x == y && x.is_sign_negative() == y.is_sign_negative())
                        || (ulps > 0.0 && x.is_finite() && (x - y).abs() <= ulps * ulp)
                        || (x.is_finite() && (x - y).abs() <= atol + rtol * x.abs())
                }
                _ => a == b,
            };
            if !ok {
                return Err(format!(
                    "leaf {leaf} element {k}: want {a:?}, got {b:?} (tolerance {ulps} ulp, rtol {rtol}, atol {atol})"
                ));
            }
        }
    }
    Ok(())
}
