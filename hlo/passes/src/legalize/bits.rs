//! `popcnt` and `count-leading-zeros` from shifts, masks and arithmetic.
//!
//! * `popcnt`: the SWAR ladder — pairs (`x - ((x >> 1) & 0x55..)`), nibbles,
//!   bytes, then one wrapping multiply by `0x0101..` gathers the byte counts in
//!   the top byte (`>> (w - 8)`). Shifts are logical, so signed types count
//!   their two's-complement bits as XLA does.
//! * `count-leading-zeros(x)` = `w - popcnt(smear(x))`, where `smear` ORs `x`
//!   with itself shifted right by 1, 2, 4, ... so every bit below the highest
//!   set one is set (`clz(0) = w`).
//!
//! Exact (integer arithmetic, wrapping).

use super::{single, Emitted, Emitter, Expander};
use hlo_ir::error::Result;
use hlo_ir::native::Scalar;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Opcode};

/// A constant of `x`'s integer type and shape from the low bits of `bits`.
fn bits_like(b: &mut Emitter<'_, '_>, x: InstrId, bits: u64) -> Result<InstrId> {
    let (t, _) = b.array(x)?;
    let s = Scalar::from_bytes(t, &bits.to_le_bytes()[..t.byte_size()]);
    b.splat(x, s)
}

fn shr(b: &mut Emitter<'_, '_>, x: InstrId, n: u64) -> Result<InstrId> {
    let s = bits_like(b, x, n)?;
    b.binary(BinaryOp::ShiftRightLogical, x, s)
}

/// `popcnt` → the SWAR ladder.
pub struct PopcntExpander;

impl Expander for PopcntExpander {
    fn name(&self) -> &'static str {
        "popcnt"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::PopCount && t.is_integer()).then(|| {
            super::all_of_type(
                t,
                &[
                    Opcode::ShiftRightLogical,
                    Opcode::And,
                    Opcode::Subtract,
                    Opcode::Add,
                    Opcode::Multiply,
                ],
            )
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let width = t.bit_width() as u64;
        let m1 = bits_like(b, x, 0x5555_5555_5555_5555)?;
        let m2 = bits_like(b, x, 0x3333_3333_3333_3333)?;
        let m4 = bits_like(b, x, 0x0f0f_0f0f_0f0f_0f0f)?;
        // Pairs: each 2-bit field holds its own count.
        let s1 = shr(b, x, 1)?;
        let a1 = b.binary(BinaryOp::And, s1, m1)?;
        let x = b.binary(BinaryOp::Subtract, x, a1)?;
        // Nibbles.
        let lo = b.binary(BinaryOp::And, x, m2)?;
        let s2 = shr(b, x, 2)?;
        let hi = b.binary(BinaryOp::And, s2, m2)?;
        let x = b.binary(BinaryOp::Add, lo, hi)?;
        // Bytes.
        let s4 = shr(b, x, 4)?;
        let sum = b.binary(BinaryOp::Add, x, s4)?;
        let x = b.binary(BinaryOp::And, sum, m4)?;
        if width == 8 {
            return Ok(x);
        }
        let h01 = bits_like(b, x, 0x0101_0101_0101_0101)?;
        let gathered = b.binary(BinaryOp::Multiply, x, h01)?;
        shr(b, gathered, width - 8)
    }
}

/// `count-leading-zeros` → `w - popcnt(smear(x))`.
pub struct ClzExpander;

impl Expander for ClzExpander {
    fn name(&self) -> &'static str {
        "count-leading-zeros"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Clz && t.is_integer()).then(|| {
            super::all_of_type(
                t,
                &[
                    Opcode::ShiftRightLogical,
                    Opcode::Or,
                    Opcode::PopCount,
                    Opcode::Subtract,
                ],
            )
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let mut x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let width = t.bit_width() as u64;
        let mut shift = 1;
        while shift < width {
            let s = shr(b, x, shift)?;
            x = b.binary(BinaryOp::Or, x, s)?;
            shift *= 2;
        }
        let ones = b.unary(UnaryOp::PopCount, x)?;
        let w = bits_like(b, x, width)?;
        b.binary(BinaryOp::Subtract, w, ones)
    }
}
