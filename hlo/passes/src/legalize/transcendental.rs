//! Transcendental ops from the ones a core backend has.
//!
//! * `rsqrt(x)` → `1 / sqrt(x)`: the evaluator defines `rsqrt` this way, so
//!   for `f32`/`f64` it is exact; for `f16`/`bf16` computed natively it rounds
//!   twice (within 1 ulp). Infinities, zeros and NaN come out as `rsqrt`'s.
//! * `tan(x)` → `sin(x) / cos(x)`: three roundings instead of one (within a few
//!   ulp away from the poles, where `tan` itself is ill-conditioned).
//! * `log-plus-one` and `exponential-minus-one` through `log`/`exp` with the
//!   classic corrections that cancel the rounding of `1 + x` / `exp(x) - 1`
//!   (within a few ulp; exact at 0, ±0 kept, infinities and NaN as the op's).
//! * `cbrt` (Newton-refined `exp(log|x| / 3)`) and `atan2` (Cephes' `atanf`
//!   polynomial with octant fix-ups): within 4 ulp.
//!
//! The tolerances are the tests' (`legalize_expanders.rs`).

use super::{single, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Opcode};

/// `rsqrt` → `divide(1, sqrt(x))`.
pub struct RsqrtExpander;

impl Expander for RsqrtExpander {
    fn name(&self) -> &'static str {
        "rsqrt"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Rsqrt && t.is_float())
            .then(|| vec![(Opcode::Sqrt, vec![t]), (Opcode::Divide, vec![t])])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let s = b.unary(UnaryOp::Sqrt, x)?;
        let one = b.constant_like(x, 1.0)?;
        b.binary(BinaryOp::Divide, one, s)
    }
}

/// `tan` → `divide(sine(x), cosine(x))`.
pub struct TanExpander;

impl Expander for TanExpander {
    fn name(&self) -> &'static str {
        "tan"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Tan && t.is_float()).then(|| {
            vec![
                (Opcode::Sin, vec![t]),
                (Opcode::Cos, vec![t]),
                (Opcode::Divide, vec![t]),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let s = b.unary(UnaryOp::Sin, x)?;
        let c = b.unary(UnaryOp::Cos, x)?;
        b.binary(BinaryOp::Divide, s, c)
    }
}

/// `log-plus-one(x)` → with `u = 1 + x`: `x` where `u == 1`, `u` where
/// `u == inf`, else `log(u) * (x / (u - 1))` (Goldberg's correction: the
/// rounding error of `1 + x` cancels, within a few ulp of `log1p`). `-0`,
/// `-1` (→ `-inf`), `x < -1` (→ NaN) and NaN come out as `log1p`'s.
pub struct Log1pExpander;

impl Expander for Log1pExpander {
    fn name(&self) -> &'static str {
        "log-plus-one"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Log1p && t.is_float()).then(|| corrected_plan(t, &[Opcode::Log]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let one = b.constant_like(x, 1.0)?;
        let u = b.binary(BinaryOp::Add, one, x)?;
        let l = b.unary(UnaryOp::Log, u)?;
        let um1 = b.binary(BinaryOp::Subtract, u, one)?;
        let ratio = b.binary(BinaryOp::Divide, x, um1)?;
        let general = b.binary(BinaryOp::Multiply, l, ratio)?;
        let inf = b.constant_like(x, f64::INFINITY)?;
        let u_inf = b.compare(u, inf, Dir::Eq, false)?;
        let r = b.select(u_inf, u, general)?;
        let u_one = b.compare(u, one, Dir::Eq, false)?;
        b.select(u_one, x, r)
    }
}

/// `exponential-minus-one(x)` → with `u = exp(x)`: `x` where `u == 1`, `-1`
/// where `u - 1 == -1`, `u` where `u == inf`, else `(u - 1) * (x / log(u))`
/// (Kahan's correction, within a few ulp of `expm1`).
pub struct Expm1Expander;

impl Expander for Expm1Expander {
    fn name(&self) -> &'static str {
        "exponential-minus-one"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Expm1 && t.is_float())
            .then(|| corrected_plan(t, &[Opcode::Exp, Opcode::Log]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let one = b.constant_like(x, 1.0)?;
        let u = b.unary(UnaryOp::Exp, x)?;
        let um1 = b.binary(BinaryOp::Subtract, u, one)?;
        let l = b.unary(UnaryOp::Log, u)?;
        let ratio = b.binary(BinaryOp::Divide, x, l)?;
        let general = b.binary(BinaryOp::Multiply, um1, ratio)?;
        let inf = b.constant_like(x, f64::INFINITY)?;
        let u_inf = b.compare(u, inf, Dir::Eq, false)?;
        let r = b.select(u_inf, u, general)?;
        let minus_one = b.constant_like(x, -1.0)?;
        let saturated = b.compare(um1, minus_one, Dir::Eq, false)?;
        let r = b.select(saturated, minus_one, r)?;
        let u_one = b.compare(u, one, Dir::Eq, false)?;
        b.select(u_one, x, r)
    }
}

/// What the two corrected expansions emit: arithmetic, `compare`, `select`
/// and the transcendentals in `extra`.
fn corrected_plan(t: ElementType, extra: &[Opcode]) -> Vec<Emitted> {
    let mut plan = vec![
        (Opcode::Add, vec![t]),
        (Opcode::Subtract, vec![t]),
        (Opcode::Multiply, vec![t]),
        (Opcode::Divide, vec![t]),
        (Opcode::Compare, super::tys(&[t, ElementType::Pred])),
        (Opcode::Select, super::tys(&[t, ElementType::Pred])),
    ];
    plan.extend(extra.iter().map(|&op| (op, vec![t])));
    plan.extend(super::all_of_type(
        ElementType::Pred,
        &[Opcode::And, Opcode::Or],
    ));
    plan
}

/// `cbrt(x)` (`f32`/`f64`) → `y = exp(log|x| / 3)` refined by one Newton step
/// `y + (|x| / y² - y) / 3`, with the sign of `x`; `±0`, `±inf` and NaN are
/// returned as they are. The Newton step squares the few-ulp error of the
/// first guess away; what is left is the step's own rounding (within 4 ulp).
pub struct CbrtExpander;

impl Expander for CbrtExpander {
    fn name(&self) -> &'static str {
        "cbrt"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Cbrt && matches!(t, ElementType::F32 | ElementType::F64))
            .then(|| corrected_plan(t, &[Opcode::Exp, Opcode::Log, Opcode::Abs, Opcode::Negate]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let a = b.unary(UnaryOp::Abs, x)?;
        let l = b.unary(UnaryOp::Log, a)?;
        let three = b.constant_like(x, 3.0)?;
        let third = b.binary(BinaryOp::Divide, l, three)?;
        let y = b.unary(UnaryOp::Exp, third)?;
        let yy = b.binary(BinaryOp::Multiply, y, y)?;
        let q = b.binary(BinaryOp::Divide, a, yy)?;
        let d = b.binary(BinaryOp::Subtract, q, y)?;
        let d3 = b.binary(BinaryOp::Divide, d, three)?;
        let r = b.binary(BinaryOp::Add, y, d3)?;
        let zero = b.constant_like(x, 0.0)?;
        let negative = b.compare(x, zero, Dir::Lt, false)?;
        let nr = b.unary(UnaryOp::Negate, r)?;
        let signed = b.select(negative, nr, r)?;
        // ±0, ±inf, NaN: cbrt is the identity there (x - x is 0 only for finite x).
        let is_zero = b.compare(x, zero, Dir::Eq, false)?;
        let diff = b.binary(BinaryOp::Subtract, x, x)?;
        let finite = b.compare(diff, zero, Dir::Eq, false)?;
        let kept = b.select(finite, signed, x)?;
        b.select(is_zero, x, kept)
    }
}

/// `atan2(y, x)` (`f32`) → Cephes' `atanf` polynomial on `r = min(|x|, |y|) /
/// max(|x|, |y|)` (reduced by `π/4 + atan((r - 1) / (r + 1))` above
/// `tan(π/8)`), then the octant fix-ups `π/2 - a`, `π - a` and the sign of `y`
/// (`-0` included). Zeros and infinities follow `atan2`'s table (`r = 0` for
/// two zeros, `1` for two infinities); NaN in, NaN out. Within 4 ulp.
pub struct Atan2Expander;

impl Expander for Atan2Expander {
    fn name(&self) -> &'static str {
        "atan2"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Atan2 && t == ElementType::F32)
            .then(|| corrected_plan(t, &[Opcode::Abs, Opcode::Negate]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        let (y, x) = (b.operand(0)?, b.operand(1)?);
        let (ay, ax) = (b.unary(UnaryOp::Abs, y)?, b.unary(UnaryOp::Abs, x)?);
        let steep = b.compare(ay, ax, Dir::Gt, false)?;
        let num = b.select(steep, ax, ay)?;
        let den = b.select(steep, ay, ax)?;
        let ratio = b.binary(BinaryOp::Divide, num, den)?;
        let zero = b.constant_like(x, 0.0)?;
        let one = b.constant_like(x, 1.0)?;
        let inf = b.constant_like(x, f64::INFINITY)?;
        // Two zeros: r = 0; two infinities: r = 1.
        let both_zero = b.compare(den, zero, Dir::Eq, false)?;
        let r = b.select(both_zero, zero, ratio)?;
        let both_inf = b.compare(num, inf, Dir::Eq, false)?;
        let r = b.select(both_inf, one, r)?;
        // atan(r) for r in [0, 1].
        let tan_pi_8 = b.constant_like(x, 0.414_213_562_373_095_1)?;
        let high = b.compare(r, tan_pi_8, Dir::Gt, false)?;
        let rm1 = b.binary(BinaryOp::Subtract, r, one)?;
        let rp1 = b.binary(BinaryOp::Add, r, one)?;
        let reduced = b.binary(BinaryOp::Divide, rm1, rp1)?;
        let u = b.select(high, reduced, r)?;
        let quarter = b.constant_like(x, FRAC_PI_4)?;
        let base = b.select(high, quarter, zero)?;
        let z = b.binary(BinaryOp::Multiply, u, u)?;
        let mut p = b.constant_like(x, 8.053_744_495_38e-2)?;
        for c in [
            -1.387_768_560_32e-1,
            1.997_771_064_78e-1,
            -3.333_294_915_39e-1,
        ] {
            let pz = b.binary(BinaryOp::Multiply, p, z)?;
            let cc = b.constant_like(x, c)?;
            p = b.binary(BinaryOp::Add, pz, cc)?;
        }
        let pz = b.binary(BinaryOp::Multiply, p, z)?;
        let pzu = b.binary(BinaryOp::Multiply, pz, u)?;
        let atan_u = b.binary(BinaryOp::Add, pzu, u)?;
        let a = b.binary(BinaryOp::Add, base, atan_u)?;
        // Octants: |y| > |x| → π/2 - a; x negative (or -0) → π - a.
        let half_pi = b.constant_like(x, FRAC_PI_2)?;
        let comp = b.binary(BinaryOp::Subtract, half_pi, a)?;
        let a = b.select(steep, comp, a)?;
        let pi = b.constant_like(x, PI)?;
        let back = b.binary(BinaryOp::Subtract, pi, a)?;
        let x_neg = negative_or_minus_zero(b, x, zero, one)?;
        let a = b.select(x_neg, back, a)?;
        let y_neg = negative_or_minus_zero(b, y, zero, one)?;
        let na = b.unary(UnaryOp::Negate, a)?;
        let signed = b.select(y_neg, na, a)?;
        let sum = b.binary(BinaryOp::Add, x, y)?;
        let x_nan = b.compare(x, x, Dir::Ne, false)?;
        let y_nan = b.compare(y, y, Dir::Ne, false)?;
        let any_nan = b.binary(BinaryOp::Or, x_nan, y_nan)?;
        b.select(any_nan, sum, signed)
    }
}

/// `v < 0 || v is -0` (`1 / -0 = -inf`), given constants `0` and `1` of
/// `v`'s shape.
pub(super) fn negative_or_minus_zero(
    b: &mut Emitter<'_, '_>,
    v: InstrId,
    zero: InstrId,
    one: InstrId,
) -> Result<InstrId> {
    let below = b.compare(v, zero, Dir::Lt, false)?;
    let is_zero = b.compare(v, zero, Dir::Eq, false)?;
    let recip = b.binary(BinaryOp::Divide, one, v)?;
    let neg_recip = b.compare(recip, zero, Dir::Lt, false)?;
    let neg_zero = b.binary(BinaryOp::And, is_zero, neg_recip)?;
    b.binary(BinaryOp::Or, below, neg_zero)
}
