//! Transcendental ops from the ones a core backend has.
//!
//! * `rsqrt(x)` → `1 / sqrt(x)`: the evaluator defines `rsqrt` this way, so
//!   for `f32`/`f64` it is exact; for `f16`/`bf16` computed natively it rounds
//!   twice (within 1 ulp). Infinities, zeros and NaN come out as `rsqrt`'s.
//! * `tan(x)` → `sin(x) / cos(x)`: three roundings instead of one (within a few
//!   ulp away from the poles, where `tan` itself is ill-conditioned).
//!
//! The tolerances are the tests' (`legalize_expanders.rs`).

use super::{single, Emitted, Emitter, Expander};
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType;
use hlo_ir::{InstrId, Opcode};

/// `rsqrt` → `divide(1, sqrt(x))`.
pub struct RsqrtExpander;

impl Expander for RsqrtExpander {
    fn name(&self) -> &'static str {
        "rsqrt"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Rsqrt && t.is_float())
            .then(|| vec![(Opcode::Sqrt, vec![t]), (Opcode::Divide, vec![t])])
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let s = b.unary(UnaryOp::Sqrt, x)?;
        let one = b.constant_like(x, 1.0)?;
        b.binary(BinaryOp::Divide, one, s)
    }
}

/// `tan` → `divide(sine(x), cosine(x))`.
pub struct TanExpander;

impl Expander for TanExpander {
    fn name(&self) -> &'static str {
        "tan"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Tan && t.is_float()).then(|| {
            vec![
                (Opcode::Sin, vec![t]),
                (Opcode::Cos, vec![t]),
                (Opcode::Divide, vec![t]),
            ]
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let s = b.unary(UnaryOp::Sin, x)?;
        let c = b.unary(UnaryOp::Cos, x)?;
        b.binary(BinaryOp::Divide, s, c)
    }
}
