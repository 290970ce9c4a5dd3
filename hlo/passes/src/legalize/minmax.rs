//! `maximum`, `minimum` and `clamp` through `compare` and `select`.
//!
//! XLA's float `maximum`/`minimum` are IEEE-754 2019's: NaN if either operand is
//! NaN (the NaN operand itself, the first if both are), and `-0 < +0`. A plain
//! `select(a >= b, a, b)` gets both wrong, so floats take
//! `select(a != a, a, select(b != b, b, select(a >= b, a, b)))` with the last
//! comparison in total order (which orders `-0` below `+0`; equal values are
//! equal bits there, so picking `a` on a tie is right). Exact, NaN payloads
//! included. Integers need only the last select (signed or unsigned order by
//! type); `pred` maximum is `or`, minimum `and`.

use super::{single, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::Result;
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode};

/// `maximum`/`minimum` → `compare` + `select` (or `or`/`and` for pred).
pub struct MinMaxExpander;

impl Expander for MinMaxExpander {
    fn name(&self) -> &'static str {
        "maximum/minimum"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        if !matches!(op, Opcode::Maximum | Opcode::Minimum) {
            return None;
        }
        if t.is_pred() {
            let logic = if op == Opcode::Maximum {
                Opcode::Or
            } else {
                Opcode::And
            };
            return Some(vec![(logic, vec![t])]);
        }
        (t.is_float() || t.is_integer()).then(|| {
            vec![
                (Opcode::Compare, tys(&[t, ElementType::Pred])),
                (Opcode::Select, tys(&[t, ElementType::Pred])),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let (x, y) = (b.operand(0)?, b.operand(1)?);
        let is_max = b.instr(id).opcode() == Opcode::Maximum;
        let (t, _) = b.array(x)?;
        if t.is_pred() {
            let logic = if is_max { BinaryOp::Or } else { BinaryOp::And };
            return b.binary(logic, x, y);
        }
        let direction = if is_max { Dir::Ge } else { Dir::Le };
        let keep_x = b.compare(x, y, direction, t.is_float())?;
        let ordered = b.select(keep_x, x, y)?;
        if !t.is_float() {
            return Ok(ordered);
        }
        let y_nan = b.compare(y, y, Dir::Ne, false)?;
        let inner = b.select(y_nan, y, ordered)?;
        let x_nan = b.compare(x, x, Dir::Ne, false)?;
        b.select(x_nan, x, inner)
    }
}

/// `clamp(lo, x, hi)` → `minimum(hi, maximum(lo, x))`, the order of operations
/// XLA defines it by (so NaN anywhere gives NaN and `lo > hi` gives `hi`); a
/// scalar `lo` or `hi` is broadcast first. Exact.
pub struct ClampExpander;

impl Expander for ClampExpander {
    fn name(&self) -> &'static str {
        "clamp"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Clamp && (t.is_float() || t.is_integer() || t.is_pred())).then(|| {
            vec![
                (Opcode::Maximum, vec![t]),
                (Opcode::Minimum, vec![t]),
                (Opcode::Broadcast, vec![t]),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (lo, x, hi) = (b.operand(0)?, b.operand(1)?, b.operand(2)?);
        let (t, dims) = b.array(x)?;
        let widen = |b: &mut Emitter<'_, '_>, v: InstrId| -> Result<InstrId> {
            if b.array(v)?.1 == dims {
                return Ok(v);
            }
            Ok(b.add(
                Shape::array(t, dims.clone()),
                Op::Broadcast { dimensions: vec![] },
                vec![v],
            ))
        };
        let lo = widen(b, lo)?;
        let hi = widen(b, hi)?;
        let m = b.binary(BinaryOp::Maximum, lo, x)?;
        b.binary(BinaryOp::Minimum, hi, m)
    }
}
