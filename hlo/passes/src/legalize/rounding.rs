//! `floor`, `ceil`, `round-nearest-even`, `round-nearest-afz` for `f32`/`f64`.
//!
//! Values with `|x| >= 2^mantissa_bits` are already integers, and NaN and ±inf
//! are returned as they are: a final `select(|x| < 2^m, rounded, x)` keeps
//! them (NaN compares false). Below that bound:
//! * truncation is `convert` to `s64` and back (exact: `2^52 < 2^63`);
//! * `floor(x)` = `trunc(x) - 1` where `trunc(x) > x`, else `trunc(x)`;
//! * `ceil(x)` = `-floor(-x)`;
//! * `round-nearest-even(|x|)` = `(|x| + 2^m) - 2^m`: the sum lies where
//!   floats are one apart, so the addition itself rounds to nearest-even;
//! * `round-nearest-afz(|x|)` = `trunc(|x|) + 1` where `|x| - trunc(|x|) >= 0.5`
//!   (the difference is exact), else `trunc(|x|)`;
//!   the rounds get their sign back by `select(x < 0, -r, r)`;
//! * ±0 are returned as themselves (a rounded `-0.0` must stay `-0.0`, and
//!   `round(-0.3)` is `-0.0`, which `-(+0)` gives).
//!
//! Exact, up to NaN (through `negate` when it is expanded).

use super::{single, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct RoundingExpander;

fn mantissa_bits(t: ElementType) -> Option<i32> {
    match t {
        ElementType::F32 => Some(23),
        ElementType::F64 => Some(52),
        _ => None,
    }
}

impl Expander for RoundingExpander {
    fn name(&self) -> &'static str {
        "rounding"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        mantissa_bits(t)?;
        let cmp = (Opcode::Compare, tys(&[t, ElementType::Pred]));
        let sel = (Opcode::Select, tys(&[t, ElementType::Pred]));
        let conv = (Opcode::Convert, tys(&[t, ElementType::S64]));
        let common = [cmp, sel, (Opcode::Abs, vec![t])];
        let mut plan: Vec<Emitted> = match op {
            Opcode::Floor => vec![conv, (Opcode::Subtract, vec![t])],
            Opcode::Ceil => return Some(vec![(Opcode::Negate, vec![t]), (Opcode::Floor, vec![t])]),
            Opcode::RoundNearestEven => vec![
                (Opcode::Add, vec![t]),
                (Opcode::Subtract, vec![t]),
                (Opcode::Negate, vec![t]),
            ],
            Opcode::RoundNearestAfz => vec![
                conv,
                (Opcode::Add, vec![t]),
                (Opcode::Subtract, vec![t]),
                (Opcode::Negate, vec![t]),
            ],
            _ => return None,
        };
        plan.extend(common);
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let m = mantissa_bits(t).ok_or_else(|| Error::internal("rounding of a non-f32/f64"))?;
        let op = b.instr(id).opcode();
        if op == Opcode::Ceil {
            let nx = b.unary(UnaryOp::Negate, x)?;
            let f = b.unary(UnaryOp::Floor, nx)?;
            return b.unary(UnaryOp::Negate, f);
        }
        let trunc = |b: &mut Emitter<'_, '_>, v: InstrId| -> Result<InstrId> {
            let i = b.like(v, ElementType::S64, Op::Convert, vec![v])?;
            b.like(v, t, Op::Convert, vec![i])
        };
        let zero = b.constant_like(x, 0.0)?;
        let one = b.constant_like(x, 1.0)?;
        let a = b.unary(UnaryOp::Abs, x)?;
        let rounded = match op {
            Opcode::Floor => {
                let tr = trunc(b, x)?;
                let above = b.compare(tr, x, Dir::Gt, false)?;
                let less = b.binary(BinaryOp::Subtract, tr, one)?;
                b.select(above, less, tr)?
            }
            Opcode::RoundNearestEven | Opcode::RoundNearestAfz => {
                let r = if op == Opcode::RoundNearestEven {
                    let big = b.constant_like(x, f64::from(m).exp2())?;
                    let s = b.binary(BinaryOp::Add, a, big)?;
                    b.binary(BinaryOp::Subtract, s, big)?
                } else {
                    let tr = trunc(b, a)?;
                    let frac = b.binary(BinaryOp::Subtract, a, tr)?;
                    let half = b.constant_like(x, 0.5)?;
                    let up = b.compare(frac, half, Dir::Ge, false)?;
                    let more = b.binary(BinaryOp::Add, tr, one)?;
                    b.select(up, more, tr)?
                };
                let negative = b.compare(x, zero, Dir::Lt, false)?;
                let nr = b.unary(UnaryOp::Negate, r)?;
                b.select(negative, nr, r)?
            }
            _ => return Err(Error::internal("rounding expander on another op")),
        };
        let bound = b.constant_like(x, f64::from(m).exp2())?;
        let small = b.compare(a, bound, Dir::Lt, false)?;
        let r = b.select(small, rounded, x)?;
        let is_zero = b.compare(x, zero, Dir::Eq, false)?;
        b.select(is_zero, x, r)
    }
}
