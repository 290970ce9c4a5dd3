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
//! * (`cbrt` and `atan2` are in `special`: computed in f64, rounded once.)
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
