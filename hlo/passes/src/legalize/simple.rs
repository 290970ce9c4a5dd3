//! Small exact expansions of elementwise ops into ones a core backend has.
//!
//! Each is exact bit for bit under the evaluator's semantics, except where a
//! doc says "up to NaN": there the result is NaN exactly when the original's
//! is, but the NaN's sign or payload may differ (HLO fixes neither across
//! backends, and a core backend without a sign-bit operation cannot do better).

use super::{single, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Opcode};

/// Numbers (not pred, not complex): the types the comparisons below order.
fn real_number(t: ElementType) -> bool {
    t.is_float() || t.is_integer()
}

/// `subtract(x, y)` → `add(x, negate(y))`: IEEE defines `x - y` as `x + (-y)`,
/// and in two's complement `x - y = x + (-y)` wraps identically. Exact.
pub struct SubtractExpander;

impl Expander for SubtractExpander {
    fn name(&self) -> &'static str {
        "subtract"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Subtract && (real_number(t) || t.is_complex()))
            .then(|| vec![(Opcode::Add, vec![t]), (Opcode::Negate, vec![t])])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (x, y) = (b.operand(0)?, b.operand(1)?);
        let ny = b.unary(UnaryOp::Negate, y)?;
        b.binary(BinaryOp::Add, x, ny)
    }
}

/// `negate(x)` → `multiply(x, -1)`. Integers: exact (wrapping, and `-1` is the
/// all-ones value of unsigned types, so `x * -1 = 2^n - x`). Floats: exact, ±0
/// and infinities included, up to NaN (a NaN keeps its sign instead of having
/// it flipped).
pub struct NegateExpander;

impl Expander for NegateExpander {
    fn name(&self) -> &'static str {
        "negate"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Negate && real_number(t)).then(|| vec![(Opcode::Multiply, vec![t])])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let m = b.constant_like(x, -1.0)?;
        b.binary(BinaryOp::Multiply, x, m)
    }
}

/// `not(x)` → `xor(x, all ones)` (`true` for pred). Exact.
pub struct NotExpander;

impl Expander for NotExpander {
    fn name(&self) -> &'static str {
        "not"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Not && (t.is_integer() || t.is_pred())).then(|| vec![(Opcode::Xor, vec![t])])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let ones = b.constant_like(x, -1.0)?;
        b.binary(BinaryOp::Xor, x, ones)
    }
}

/// `abs(x)` → `select(x < 0, -x, x)`. For floats the comparison is in total
/// order, where `-0 < +0` and a negative NaN is below everything, so `abs(-0)`
/// is `+0` and the sign of a negative NaN is cleared as `abs` does (through
/// `negate`, so up to NaN if `negate` is itself expanded). Integers wrap
/// (`abs(MIN) = MIN`), as in XLA; unsigned `abs` is the identity. Exact.
pub struct AbsExpander;

impl Expander for AbsExpander {
    fn name(&self) -> &'static str {
        "abs"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        if op != Opcode::Abs || !real_number(t) {
            return None;
        }
        if t.is_unsigned_int() {
            return Some(vec![]);
        }
        Some(vec![
            (Opcode::Compare, tys(&[t, ElementType::Pred])),
            (Opcode::Select, tys(&[t, ElementType::Pred])),
            (Opcode::Negate, vec![t]),
        ])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        if t.is_unsigned_int() {
            return Ok(x);
        }
        let zero = b.constant_like(x, 0.0)?;
        let negative = b.compare(x, zero, Dir::Lt, t.is_float())?;
        let nx = b.unary(UnaryOp::Negate, x)?;
        b.select(negative, nx, x)
    }
}

/// `sign(x)` → `select(x > 0, 1, select(x < 0, -1, x))`: ±0 and NaN compare
/// false both ways and come back as themselves, which is what `sign` returns
/// for them. Exact for floats and integers (unsigned: the inner select is not
/// needed).
pub struct SignExpander;

impl Expander for SignExpander {
    fn name(&self) -> &'static str {
        "sign"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Sign && real_number(t)).then(|| {
            vec![
                (Opcode::Compare, tys(&[t, ElementType::Pred])),
                (Opcode::Select, tys(&[t, ElementType::Pred])),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let zero = b.constant_like(x, 0.0)?;
        let one = b.constant_like(x, 1.0)?;
        let rest = if t.is_unsigned_int() {
            x
        } else {
            let minus_one = b.constant_like(x, -1.0)?;
            let negative = b.compare(x, zero, Dir::Lt, false)?;
            b.select(negative, minus_one, x)?
        };
        let positive = b.compare(x, zero, Dir::Gt, false)?;
        b.select(positive, one, rest)
    }
}

/// `is-finite(x)` → `subtract(x, x) == 0`: `x - x` is `0` for every finite `x`
/// and NaN for ±inf and NaN, and NaN compares unequal to everything. Exact.
pub struct IsFiniteExpander;

impl Expander for IsFiniteExpander {
    fn name(&self) -> &'static str {
        "is-finite"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let [ElementType::Pred, t] = types else {
            return None;
        };
        (op == Opcode::IsFinite && t.is_float()).then(|| {
            vec![
                (Opcode::Subtract, vec![*t]),
                (Opcode::Compare, tys(&[*t, ElementType::Pred])),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let d = b.binary(BinaryOp::Subtract, x, x)?;
        let zero = b.constant_like(x, 0.0)?;
        b.compare(d, zero, Dir::Eq, false)
    }
}
