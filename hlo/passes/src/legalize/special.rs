//! `erf` and `power` for `f32` (and the half types, widened first), computed
//! in `f64` and rounded once.
//!
//! * `erf(x)`: the Maclaurin series `2/√π · x · Σ (-1)^n x^(2n) / (n! (2n+1))`,
//!   76 terms by Horner in `f64` on `x` clamped to `[-4, 4]` (beyond, `erf`
//!   rounds to ±1 in `f32`). At `|x| = 4` the largest term is about `1e5`, so
//!   the cancellation costs about `1e-11` absolute — far below an `f32` ulp —
//!   and the result is the correctly rounded `f32` but for rare near-ties
//!   (within 1 ulp). `±0`, NaN and the sign come out right.
//! * `power(x, y)`: `exp(y · log|x|)` in `f64` (relative error about `1e-14`
//!   even at the overflow threshold), negated for a negative `x` and an odd
//!   integer `y`, NaN for a finite negative `x` and a finite non-integer `y`,
//!   and C's special cases by `select`: `y = 0` or `x = 1` gives 1,
//!   `|x| = 1` with `y = ±inf` gives 1. Within 1 ulp.

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Op, Opcode};

fn f64_plan(extra: &[Opcode]) -> Vec<Emitted> {
    let f = ElementType::F64;
    let mut plan = super::all_of_type(
        f,
        &[
            Opcode::Multiply,
            Opcode::Add,
            Opcode::Subtract,
            Opcode::Divide,
            Opcode::Broadcast,
        ],
    );
    plan.extend(super::all_of_type(f, extra));
    plan.extend(super::all_of_type(
        ElementType::Pred,
        &[Opcode::And, Opcode::Or, Opcode::Not],
    ));
    plan.extend([
        (Opcode::Convert, tys(&[ElementType::F32, f])),
        (Opcode::Compare, tys(&[f, ElementType::Pred])),
        (Opcode::Select, tys(&[f, ElementType::Pred])),
    ]);
    plan
}

/// `erf` → a Maclaurin series in `f64`.
pub struct ErfExpander;

impl Expander for ErfExpander {
    fn name(&self) -> &'static str {
        "erf"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        (op == Opcode::Erf && types == [ElementType::F32]).then(|| f64_plan(&[Opcode::Clamp]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let w = b.like(x, ElementType::F64, Op::Convert, vec![x])?;
        let lo = b.constant_like(w, -4.0)?;
        let hi = b.constant_like(w, 4.0)?;
        let c = b.like(w, ElementType::F64, Op::Clamp, vec![lo, w, hi])?;
        let z = b.binary(BinaryOp::Multiply, c, c)?;
        // c_n = (-1)^n / (n! (2n + 1)), highest first.
        let mut coefficients = Vec::with_capacity(76);
        let mut factorial = 1.0f64;
        for n in 0..76u32 {
            if n > 0 {
                factorial *= f64::from(n);
            }
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            coefficients.push(sign / (factorial * f64::from(2 * n + 1)));
        }
        let mut p = b.constant_like(w, coefficients[75])?;
        for &cn in coefficients[..75].iter().rev() {
            let pz = b.binary(BinaryOp::Multiply, p, z)?;
            let k = b.constant_like(w, cn)?;
            p = b.binary(BinaryOp::Add, pz, k)?;
        }
        let scale = b.constant_like(w, 2.0 / std::f64::consts::PI.sqrt())?;
        let sx = b.binary(BinaryOp::Multiply, scale, c)?;
        let r = b.binary(BinaryOp::Multiply, sx, p)?;
        b.like(r, ElementType::F32, Op::Convert, vec![r])
    }
}

/// `power` → `exp(y log|x|)` in `f64` with C's special cases.
pub struct PowerExpander;

impl Expander for PowerExpander {
    fn name(&self) -> &'static str {
        "power"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        (op == Opcode::Power && types == [ElementType::F32]).then(|| {
            f64_plan(&[
                Opcode::Exp,
                Opcode::Log,
                Opcode::Abs,
                Opcode::Floor,
                Opcode::Negate,
            ])
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (x32, y32) = (b.operand(0)?, b.operand(1)?);
        let x = b.like(x32, ElementType::F64, Op::Convert, vec![x32])?;
        let y = b.like(y32, ElementType::F64, Op::Convert, vec![y32])?;
        let zero = b.constant_like(x, 0.0)?;
        let one = b.constant_like(x, 1.0)?;
        let half = b.constant_like(x, 0.5)?;
        let two = b.constant_like(x, 2.0)?;
        let inf = b.constant_like(x, f64::INFINITY)?;
        let ax = b.unary(UnaryOp::Abs, x)?;
        let l = b.unary(UnaryOp::Log, ax)?;
        let yl = b.binary(BinaryOp::Multiply, y, l)?;
        let mag = b.unary(UnaryOp::Exp, yl)?;
        // y an integer (±inf counts, as even), and odd.
        let fy = b.unary(UnaryOp::Floor, y)?;
        let integer = b.compare(fy, y, Dir::Eq, false)?;
        let hy = b.binary(BinaryOp::Multiply, y, half)?;
        let fhy = b.unary(UnaryOp::Floor, hy)?;
        let twice = b.binary(BinaryOp::Multiply, fhy, two)?;
        let not_even = b.compare(twice, y, Dir::Ne, false)?;
        let odd = b.binary(BinaryOp::And, integer, not_even)?;
        // A negative x (or -0): odd y negates; finite x < 0 with a finite
        // non-integer y is NaN.
        let x_neg = super::transcendental::negative_or_minus_zero(b, x, zero, one)?;
        let flip = b.binary(BinaryOp::And, x_neg, odd)?;
        let neg_mag = b.unary(UnaryOp::Negate, mag)?;
        let r = b.select(flip, neg_mag, mag)?;
        let below = b.compare(x, zero, Dir::Lt, false)?;
        let x_finite = b.compare(ax, inf, Dir::Lt, false)?;
        let ay = b.unary(UnaryOp::Abs, y)?;
        let y_finite = b.compare(ay, inf, Dir::Lt, false)?;
        let not_int = b.compare(fy, y, Dir::Ne, false)?;
        let bad = b.binary(BinaryOp::And, below, x_finite)?;
        let bad = b.binary(BinaryOp::And, bad, y_finite)?;
        let bad = b.binary(BinaryOp::And, bad, not_int)?;
        let nan = b.constant_like(x, f64::NAN)?;
        let r = b.select(bad, nan, r)?;
        // |x| = 1 and y = ±inf: 1; then x = 1 or y = 0: 1 (even with NaN).
        let unit = b.compare(ax, one, Dir::Eq, false)?;
        let y_inf = b.compare(ay, inf, Dir::Eq, false)?;
        let unit_inf = b.binary(BinaryOp::And, unit, y_inf)?;
        let r = b.select(unit_inf, one, r)?;
        let x_one = b.compare(x, one, Dir::Eq, false)?;
        let y_zero = b.compare(y, zero, Dir::Eq, false)?;
        let trivial = b.binary(BinaryOp::Or, x_one, y_zero)?;
        let r = b.select(trivial, one, r)?;
        b.like(r, ElementType::F32, Op::Convert, vec![r])
    }
}
