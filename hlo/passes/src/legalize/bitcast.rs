//! `bitcast-convert` from a 32- or 64-bit integer to `f32`/`f64`, by
//! arithmetic on the fields.
//!
//! With sign `s`, exponent field `E` and mantissa field `M` (shifts and masks
//! on the integer), the float is `(-1)^s * frac * 2^(max(E, 1) - bias)` where
//! `frac = (M + [E > 0] * 2^m) * 2^-m` (`m` mantissa bits; exact: fewer than
//! `m + 1` significant bits). The power of two is a product over the exponent
//! bits of `select(bit_i, 2^(2^i), 1)` — each factor, and every partial
//! product, a representable power of two — times `2` or `2^-bias` for the top
//! bit. Every product is exact (the exact result is representable, gradual
//! underflow included), so finite values, ±0 and ±inf come out bit for bit;
//! `E` all ones with `M != 0` gives a NaN, but not its payload or sign ("up
//! to NaN"). The other direction (float → integer bits) has no expander: a
//! NaN's bits cannot be recovered arithmetically.

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::{Error, Result};
use hlo_ir::native::Scalar;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct BitsToFloatExpander;

/// `(exponent bits, mantissa bits)` of the float a same-width integer
/// reinterprets as.
fn layout(int: ElementType, float: ElementType) -> Option<(u32, u32)> {
    match (int, float) {
        (ElementType::S32 | ElementType::U32, ElementType::F32) => Some((8, 23)),
        (ElementType::S64 | ElementType::U64, ElementType::F64) => Some((11, 52)),
        _ => None,
    }
}

impl Expander for BitsToFloatExpander {
    fn name(&self) -> &'static str {
        "bitcast-convert integer to float"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let [i, f] = types else {
            return None;
        };
        if op != Opcode::BitcastConvert || layout(*i, *f).is_none() {
            return None;
        }
        let (i, f) = (*i, *f);
        let mut plan = super::all_of_type(i, &[Opcode::ShiftRightLogical, Opcode::And, Opcode::Or]);
        plan.extend(super::all_of_type(f, &[Opcode::Multiply, Opcode::Negate]));
        plan.extend([
            (Opcode::Compare, tys(&[i, ElementType::Pred])),
            (Opcode::Select, tys(&[i, ElementType::Pred])),
            (Opcode::Select, tys(&[f, ElementType::Pred])),
            (Opcode::Convert, tys(&[i, f])),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        // Integer to float (the types alone do not say which way), and a
        // same-width bitcast-convert changes no dimension.
        let Ok(x) = b.instr(id).operand(0) else {
            return false;
        };
        let from_int = matches!(b.instr(x).shape.element_type(), Some(t) if t.is_integer());
        from_int && b.instr(x).shape.dims() == b.instr(id).shape.dims()
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (i, _) = b.array(x)?;
        let f = b
            .instr(id)
            .shape
            .element_type()
            .ok_or_else(|| Error::invalid_argument("bitcast-convert to a tuple"))?;
        let (ebits, mbits) =
            layout(i, f).ok_or_else(|| Error::internal("bitcast-convert of another width"))?;
        let int = |b: &mut Emitter<'_, '_>, v: u64| -> Result<InstrId> {
            b.splat(x, Scalar::from_bytes(i, &v.to_le_bytes()[..i.byte_size()]))
        };
        let float = |b: &mut Emitter<'_, '_>, v: f64| -> Result<InstrId> {
            let s = super::scalar_of(f, v)?;
            b.splat(x, s)
        };
        let field = |b: &mut Emitter<'_, '_>, shift: u32, bits: u32| -> Result<InstrId> {
            let sh = int(b, u64::from(shift))?;
            let shifted = b.binary(BinaryOp::ShiftRightLogical, x, sh)?;
            let mask = int(b, (1u64 << bits) - 1)?;
            b.binary(BinaryOp::And, shifted, mask)
        };
        let e = field(b, mbits, ebits)?;
        let m = field(b, 0, mbits)?;
        let sign = field(b, mbits + ebits, 1)?;
        let zero = int(b, 0)?;
        let one = int(b, 1)?;
        // frac = (M | [E > 0] << m) * 2^-m.
        let normal = b.compare(e, zero, Dir::Gt, false)?;
        let hidden = int(b, 1u64 << mbits)?;
        let hidden = b.select(normal, hidden, zero)?;
        let full = b.binary(BinaryOp::Or, m, hidden)?;
        let full = b.like(full, f, Op::Convert, vec![full])?;
        let ulp = float(b, (-f64::from(mbits)).exp2())?;
        let frac = b.binary(BinaryOp::Multiply, full, ulp)?;
        // scale = 2^(max(E, 1) - bias).
        let e1 = b.select(normal, e, one)?;
        let bias = (1i32 << (ebits - 1)) - 1;
        let mut scale = None;
        for bit in 0..ebits {
            let bit_value = field_of(b, e1, bit, i)?;
            let on = b.compare(bit_value, one, Dir::Eq, false)?;
            let (if_set, if_clear) = if bit + 1 == ebits {
                (2.0, f64::from(-bias).exp2())
            } else {
                (f64::from(1i32 << bit).exp2(), 1.0)
            };
            let (s1, s0) = (float(b, if_set)?, float(b, if_clear)?);
            let factor = b.select(on, s1, s0)?;
            scale = Some(match scale {
                None => factor,
                Some(p) => b.binary(BinaryOp::Multiply, p, factor)?,
            });
        }
        let scale = scale.ok_or_else(|| Error::internal("no exponent bits"))?;
        let magnitude = b.binary(BinaryOp::Multiply, frac, scale)?;
        // E all ones: infinity or NaN.
        let all_ones = int(b, (1u64 << ebits) - 1)?;
        let special = b.compare(e, all_ones, Dir::Eq, false)?;
        let m_zero = b.compare(m, zero, Dir::Eq, false)?;
        let inf = float(b, f64::INFINITY)?;
        let nan = float(b, f64::NAN)?;
        let special_value = b.select(m_zero, inf, nan)?;
        let magnitude = b.select(special, special_value, magnitude)?;
        let negative = b.compare(sign, one, Dir::Eq, false)?;
        let negated = b.unary(UnaryOp::Negate, magnitude)?;
        b.select(negative, negated, magnitude)
    }
}

/// Bit `bit` of the non-negative integer `v` (0 or 1).
fn field_of(b: &mut Emitter<'_, '_>, v: InstrId, bit: u32, i: ElementType) -> Result<InstrId> {
    let sh = b.splat(
        v,
        Scalar::from_bytes(i, &u64::from(bit).to_le_bytes()[..i.byte_size()]),
    )?;
    let shifted = b.binary(BinaryOp::ShiftRightLogical, v, sh)?;
    let one = b.splat(
        v,
        Scalar::from_bytes(i, &1u64.to_le_bytes()[..i.byte_size()]),
    )?;
    b.binary(BinaryOp::And, shifted, one)
}
