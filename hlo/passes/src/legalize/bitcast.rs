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
//! to NaN").
//!
//! The other direction, float → integer bits ([`FloatToBitsExpander`]): the
//! sign from `x < 0` (and `1 / x < 0` for `-0`); for finite nonzero `|x|` the
//! exponent by binary search — `v` scaled by `2^-(2^i)` while `>= 2^(2^i)`,
//! or by `2^(2^i)` while the product stays `< 2`, from the largest step down,
//! so `v` ends in `[1, 2)` with every scaling exact — then `M = (v - 1) * 2^m`
//! (or `|x| * 2^m * 2^(bias - 1)` for denormals), all exact integers, and the
//! fields put together with shifts and `or`. Exact for every value but NaN: a
//! NaN's sign and payload cannot be observed arithmetically, so every NaN
//! becomes the canonical quiet NaN's bits (`0x7fc00000`).

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

/// The `(integer, float)` types of a same-width `bitcast-convert` key.
fn bitcast_pair(op: Opcode, types: &[ElementType]) -> Option<(ElementType, ElementType)> {
    let [i, f] = types else {
        return None;
    };
    (op == Opcode::BitcastConvert && layout(*i, *f).is_some()).then_some((*i, *f))
}

impl Expander for BitsToFloatExpander {
    fn name(&self) -> &'static str {
        "bitcast-convert integer to float"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let (i, f) = bitcast_pair(op, types)?;
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
        converts_from(b, id, ElementType::is_integer)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let (x, i, f, (ebits, mbits)) = operands(b, id)?;
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

/// `bitcast-convert` from `f32`/`f64` to a same-width integer.
pub struct FloatToBitsExpander;

impl Expander for FloatToBitsExpander {
    fn name(&self) -> &'static str {
        "bitcast-convert float to integer"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        // The same types as the other direction; `applies` tells them apart.
        let (i, f) = bitcast_pair(op, types)?;
        let mut plan = super::all_of_type(i, &[Opcode::ShiftLeft, Opcode::Or, Opcode::Add]);
        plan.extend(super::all_of_type(
            f,
            &[
                Opcode::Multiply,
                Opcode::Divide,
                Opcode::Subtract,
                Opcode::Abs,
            ],
        ));
        plan.extend(super::all_of_type(
            ElementType::Pred,
            &[Opcode::And, Opcode::Or],
        ));
        plan.extend([
            (Opcode::Compare, tys(&[f, ElementType::Pred])),
            (Opcode::Select, tys(&[f, ElementType::Pred])),
            (Opcode::Select, tys(&[i, ElementType::Pred])),
            (Opcode::Convert, tys(&[i, f])),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        converts_from(b, id, ElementType::is_float)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let (x, f, i, (ebits, mbits)) = operands(b, id)?;
        let bias = (1i32 << (ebits - 1)) - 1;
        let float = |b: &mut Emitter<'_, '_>, v: f64| -> Result<InstrId> {
            let s = super::scalar_of(f, v)?;
            b.splat(x, s)
        };
        let int = |b: &mut Emitter<'_, '_>, v: i64| -> Result<InstrId> {
            b.splat(x, Scalar::from_bytes(i, &v.to_le_bytes()[..i.byte_size()]))
        };
        // `v * 2^n`, in two steps where `2^n` itself overflows the type.
        let times_pow2 = |b: &mut Emitter<'_, '_>, v: InstrId, n: i32| -> Result<InstrId> {
            if n.abs() <= bias {
                let p = float(b, f64::from(n).exp2())?;
                return b.binary(BinaryOp::Multiply, v, p);
            }
            let p = float(b, f64::from(n / 2).exp2())?;
            let half = b.binary(BinaryOp::Multiply, v, p)?;
            let q = float(b, f64::from(n - n / 2).exp2())?;
            b.binary(BinaryOp::Multiply, half, q)
        };
        let zero = float(b, 0.0)?;
        let one = float(b, 1.0)?;
        let two = float(b, 2.0)?;
        let a = b.unary(UnaryOp::Abs, x)?;
        // Binary search for k = floor(log2 |x|), v = |x| / 2^k in [1, 2).
        let mut v = a;
        let mut k = int(b, 0)?;
        for step in (0..ebits - 1).rev().map(|e| 1i32 << e) {
            let limit = float(b, f64::from(step).exp2())?;
            let big = b.compare(v, limit, Dir::Ge, false)?;
            let scaled = times_pow2(b, v, -step)?;
            v = b.select(big, scaled, v)?;
            let inc = int(b, i64::from(step))?;
            let zero_i = int(b, 0)?;
            let add = b.select(big, inc, zero_i)?;
            k = b.binary(BinaryOp::Add, k, add)?;
        }
        for step in (0..ebits).rev().map(|e| 1i32 << e) {
            let scaled = times_pow2(b, v, step)?;
            let small = b.compare(scaled, two, Dir::Lt, false)?;
            v = b.select(small, scaled, v)?;
            let dec = int(b, -i64::from(step))?;
            let zero_i = int(b, 0)?;
            let add = b.select(small, dec, zero_i)?;
            k = b.binary(BinaryOp::Add, k, add)?;
        }
        // Normal: E = k + bias >= 1, M = (v - 1) * 2^m.
        let biased = int(b, i64::from(bias))?;
        let e_normal = b.binary(BinaryOp::Add, k, biased)?;
        let frac = b.binary(BinaryOp::Subtract, v, one)?;
        let frac = times_pow2(b, frac, mbits as i32)?;
        let m_normal = b.like(frac, i, Op::Convert, vec![frac])?;
        // Denormal (|x| < 2^(1 - bias)): E = 0, M = |x| * 2^m * 2^(bias - 1).
        let d = times_pow2(b, a, mbits as i32)?;
        let d = times_pow2(b, d, bias - 1)?;
        let m_denormal = b.like(d, i, Op::Convert, vec![d])?;
        let min_normal = float(b, f64::from(1 - bias).exp2())?;
        let denormal = b.compare(a, min_normal, Dir::Lt, false)?;
        let zero_i = int(b, 0)?;
        let e = b.select(denormal, zero_i, e_normal)?;
        let m = b.select(denormal, m_denormal, m_normal)?;
        // Infinity and NaN: E all ones, M zero or the quiet bit.
        let inf = float(b, f64::INFINITY)?;
        let is_inf = b.compare(a, inf, Dir::Eq, false)?;
        let is_nan = b.compare(x, x, Dir::Ne, false)?;
        let special = b.binary(BinaryOp::Or, is_inf, is_nan)?;
        let all_ones = int(b, (1i64 << ebits) - 1)?;
        let e = b.select(special, all_ones, e)?;
        let quiet = int(b, 1i64 << (mbits - 1))?;
        let m_special = b.select(is_nan, quiet, zero_i)?;
        let m = b.select(special, m_special, m)?;
        // Sign: x < 0, or x == -0; a NaN counts as positive.
        let negative = super::transcendental::negative_or_minus_zero(b, x, zero, one)?;
        let one_i = int(b, 1)?;
        let s = b.select(negative, one_i, zero_i)?;
        let sign_shift = int(b, i64::from(ebits + mbits))?;
        let s = b.binary(BinaryOp::ShiftLeft, s, sign_shift)?;
        let e_shift = int(b, i64::from(mbits))?;
        let e = b.binary(BinaryOp::ShiftLeft, e, e_shift)?;
        let se = b.binary(BinaryOp::Or, s, e)?;
        b.binary(BinaryOp::Or, se, m)
    }
}

/// Whether `id` is a shape-preserving `bitcast-convert` whose operand's type
/// passes `from` (the two directions share their types; this tells them
/// apart).
fn converts_from(b: &Emitter<'_, '_>, id: InstrId, from: fn(ElementType) -> bool) -> bool {
    let Ok(x) = b.instr(id).operand(0) else {
        return false;
    };
    let from_ok = matches!(b.instr(x).shape.element_type(), Some(t) if from(t));
    from_ok && b.instr(x).shape.dims() == b.instr(id).shape.dims()
}

/// The operand, its type, the result type and the float's `(exponent,
/// mantissa)` bits of the `bitcast-convert` being expanded.
fn operands(
    b: &Emitter<'_, '_>,
    id: InstrId,
) -> Result<(InstrId, ElementType, ElementType, (u32, u32))> {
    let x = b.operand(0)?;
    let (from, _) = b.array(x)?;
    let to = b
        .instr(id)
        .shape
        .element_type()
        .ok_or_else(|| Error::invalid_argument("bitcast-convert to a tuple"))?;
    let (i, f) = if from.is_float() {
        (to, from)
    } else {
        (from, to)
    };
    let bits = layout(i, f).ok_or_else(|| Error::internal("bitcast-convert of another width"))?;
    Ok((x, from, to, bits))
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
