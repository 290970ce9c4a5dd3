//! `f16`/`bf16` through `f32`, for backends without the half types.
//!
//! The operands of the half type are converted to `f32`, the op runs in `f32`,
//! and an array result of the half type is converted back. The evaluator (like
//! XLA CPU) computes every `f16`/`bf16` op this way — widen, compute, round
//! once — so the expansion is exact bit for bit, up to NaN payloads (a
//! signaling NaN is quieted by the conversions). For `+ - * / sqrt` it would be
//! exact even against a native half unit: `f32` has more than twice their
//! precision, so the double rounding is innocuous.
//!
//! `dot` is included: XLA CPU (and the evaluator) accumulate half dots in
//! `f32` and round once, which is exactly the widened dot.
//!
//! Not expanded: `exponential-minus-one` and `logistic` (XLA rounds their
//! intermediate steps to the half type, so one `f32` evaluation differs),
//! `convert`/`bitcast-convert`/`reduce-precision` (they are about the type
//! itself), complex parts, and ops with reducers (`reduce`, `reduce-window`,
//! `scatter`, ...: the reducer rounds to the half type at every step).

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct HalfThroughF32;

fn is_half(t: ElementType) -> bool {
    matches!(t, ElementType::F16 | ElementType::BF16)
}

/// The ops whose result is a function of the operand values alone, computed
/// with one rounding (or none), where widening is exact.
fn widenable(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Abs | Add
            | Atan2
            | Cbrt
            | Ceil
            | Clamp
            | Compare
            | Cos
            | Divide
            | Erf
            | Exp
            | Floor
            | IsFinite
            | Log
            | Log1p
            | Maximum
            | Minimum
            | Multiply
            | Negate
            | Power
            | Remainder
            | RoundNearestAfz
            | RoundNearestEven
            | Rsqrt
            | Select
            | Sign
            | Sin
            | Sqrt
            | Subtract
            | Tan
            | Tanh
            | Broadcast
            | Reshape
            | Transpose
            | Slice
            | Concatenate
            | Pad
            | Reverse
            | DynamicSlice
            | DynamicUpdateSlice
            | Gather
            | Iota
            | Dot
    )
}

impl Expander for HalfThroughF32 {
    fn name(&self) -> &'static str {
        "f16/bf16 through f32"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if !widenable(op) || !types.iter().any(|&t| is_half(t)) {
            return None;
        }
        let mut plan = Vec::new();
        let mut wide = Vec::new();
        for &t in types {
            if is_half(t) {
                plan.push((Opcode::Convert, tys(&[t, ElementType::F32])));
                wide.push(ElementType::F32);
            } else {
                wide.push(t);
            }
        }
        plan.push((op, tys(&wide)));
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Shape::Array(result) = &instr.shape else {
            return Err(Error::unimplemented(format!(
                "%{} has a non-array result",
                instr.name
            )));
        };
        let mut operands = Vec::with_capacity(instr.operands.len());
        for &o in &instr.operands {
            let (t, _) = b.array(o)?;
            operands.push(if is_half(t) {
                b.like(o, ElementType::F32, Op::Convert, vec![o])?
            } else {
                o
            });
        }
        let half = is_half(result.element_type);
        let ty = if half {
            ElementType::F32
        } else {
            result.element_type
        };
        let wide = b.add(
            Shape::array(ty, result.dims.clone()),
            instr.op.clone(),
            operands,
        );
        if !half {
            return Ok(wide);
        }
        b.like(wide, result.element_type, Op::Convert, vec![wide])
    }
}
