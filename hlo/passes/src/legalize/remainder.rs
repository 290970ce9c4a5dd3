//! Integer `remainder` → `x - (x / y) * y`.
//!
//! HLO's integer division truncates toward zero, `x / 0` is `-1` (all ones)
//! and `MIN / -1` is `MIN`; its remainder has the dividend's sign, `x % 0` is
//! `x` and `MIN % -1` is `0`. The identity `x - (x / y) * y` reproduces all of
//! these in wrapping arithmetic (`x - (-1 * 0) = x`; `MIN - MIN * -1 = 0`).
//! Exact. Float `remainder` (C's `fmod`) has no exact expansion through
//! `divide`; `fmod.rs` does it by long division in loops.

use super::{single, Emitted, Emitter, Expander};
use hlo_ir::error::Result;
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Opcode};

/// See the module docs.
pub struct IntRemainderExpander;

impl Expander for IntRemainderExpander {
    fn name(&self) -> &'static str {
        "integer remainder"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Remainder && t.is_integer()).then(|| {
            vec![
                (Opcode::Divide, vec![t]),
                (Opcode::Multiply, vec![t]),
                (Opcode::Subtract, vec![t]),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (x, y) = (b.operand(0)?, b.operand(1)?);
        let q = b.binary(BinaryOp::Divide, x, y)?;
        let p = b.binary(BinaryOp::Multiply, q, y)?;
        b.binary(BinaryOp::Subtract, x, p)
    }
}
