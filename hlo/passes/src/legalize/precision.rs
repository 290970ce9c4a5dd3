//! `reduce-precision` on the bits, for `f32`/`f64`.
//!
//! The operation is defined on the bit pattern (XLA's and the evaluator's
//! rules): the mantissa is rounded to `mantissa_bits` half to even by adding
//! `0111…` plus the last kept bit and truncating (a carry bumps the exponent),
//! then an exponent above the reduced range becomes infinity and one at or
//! below it zero, both keeping the sign; NaN is returned as it is. The
//! expansion does exactly that with unsigned integer ops between two
//! `bitcast-convert`s (themselves expandable), and selects the operand itself
//! for NaN lanes, so it is exact bit for bit.

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::{Error, Result};
use hlo_ir::native::Scalar;
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct ReducePrecisionExpander;

/// The unsigned type of the same width, and the float's exponent and mantissa
/// bits.
fn bits_of(f: ElementType) -> Option<(ElementType, u32, u32)> {
    match f {
        ElementType::F32 => Some((ElementType::U32, 8, 23)),
        ElementType::F64 => Some((ElementType::U64, 11, 52)),
        _ => None,
    }
}

impl Expander for ReducePrecisionExpander {
    fn name(&self) -> &'static str {
        "reduce-precision"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let f = super::single(types)?;
        let (u, _, _) = bits_of(f)?;
        if op != Opcode::ReducePrecision {
            return None;
        }
        let mut plan = super::all_of_type(
            u,
            &[
                Opcode::Add,
                Opcode::And,
                Opcode::Or,
                Opcode::ShiftRightLogical,
            ],
        );
        plan.extend([
            (Opcode::BitcastConvert, tys(&[u, f])),
            (Opcode::Compare, tys(&[u, ElementType::Pred])),
            (Opcode::Select, tys(&[u, ElementType::Pred])),
            (Opcode::Compare, tys(&[f, ElementType::Pred])),
            (Opcode::Select, tys(&[f, ElementType::Pred])),
        ]);
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } = b.instr(id).op
        else {
            return Err(Error::internal("reduce-precision expander on another op"));
        };
        let x = b.operand(0)?;
        let (f, _) = b.array(x)?;
        let (u, src_e, src_m) =
            bits_of(f).ok_or_else(|| Error::internal("reduce-precision of another type"))?;
        let int = |b: &mut Emitter<'_, '_>, v: u64| -> Result<InstrId> {
            b.splat(x, Scalar::from_bytes(u, &v.to_le_bytes()[..u.byte_size()]))
        };
        let mut v = b.like(x, u, Op::BitcastConvert, vec![x])?;
        if mantissa_bits < src_m {
            let dropped = src_m - mantissa_bits;
            let last_kept = 1u64 << dropped;
            let kept_bit = int(b, last_kept)?;
            let shift = int(b, u64::from(dropped))?;
            let lsb = b.binary(BinaryOp::And, v, kept_bit)?;
            let lsb = b.binary(BinaryOp::ShiftRightLogical, lsb, shift)?;
            let half = int(b, (last_kept >> 1).wrapping_sub(1))?;
            let bias = b.binary(BinaryOp::Add, lsb, half)?;
            let sum = b.binary(BinaryOp::Add, v, bias)?;
            let keep = int(b, !(last_kept - 1))?;
            v = b.binary(BinaryOp::And, sum, keep)?;
        }
        let exponent_bits = exponent_bits.max(1);
        if exponent_bits < src_e {
            let bias = (1u64 << (src_e - 1)) - 1;
            let reduced = (1u64 << (exponent_bits - 1)) - 1;
            let exp_mask = ((1u64 << src_e) - 1) << src_m;
            let max_e = int(b, (bias + reduced) << src_m)?;
            let min_e = int(b, (bias - reduced) << src_m)?;
            let mask = int(b, exp_mask)?;
            let sign_bit = int(b, 1u64 << (src_e + src_m))?;
            let exponent = b.binary(BinaryOp::And, v, mask)?;
            let sign = b.binary(BinaryOp::And, v, sign_bit)?;
            let inf = b.binary(BinaryOp::Or, sign, mask)?;
            let over = b.compare(exponent, max_e, Dir::Gt, false)?;
            let under = b.compare(exponent, min_e, Dir::Le, false)?;
            let flushed = b.select(under, sign, v)?;
            v = b.select(over, inf, flushed)?;
        }
        let r = b.like(v, f, Op::BitcastConvert, vec![v])?;
        let nan = b.compare(x, x, Dir::Ne, false)?;
        b.select(nan, x, r)
    }
}
