//! `batch-norm-inference` → elementwise arithmetic in `f64`.
//!
//! `y = (x - mean) * scale / sqrt(variance + epsilon) + offset`, with the
//! per-feature vectors broadcast along `feature_index`. The evaluator (following
//! XLA's operation semantics without extra rounding) computes this formula in
//! `f64`, in this order, and rounds once to the operand's type; the expansion
//! converts up to `f64`, does the same five operations and converts back, so
//! it is exact. (`batch-norm-training` and `-grad` need reductions with a new
//! reducer computation; they have no expander yet.)

use super::{Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct BatchNormInferenceExpander;

impl Expander for BatchNormInferenceExpander {
    fn name(&self) -> &'static str {
        "batch-norm-inference"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        if op != Opcode::BatchNormInference || !t.is_float() {
            return None;
        }
        let mut plan = super::all_of_type(
            ElementType::F64,
            &[
                Opcode::Subtract,
                Opcode::Multiply,
                Opcode::Divide,
                Opcode::Sqrt,
                Opcode::Add,
                Opcode::Broadcast,
            ],
        );
        if t != ElementType::F64 {
            plan.push((Opcode::Convert, super::tys(&[t, ElementType::F64])));
        }
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::BatchNormInference {
            epsilon,
            feature_index,
        } = b.instr(id).op
        else {
            return Err(Error::internal(
                "batch-norm-inference expander on another op",
            ));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        if feature_index >= dims.len() {
            return Err(Error::invalid_argument(
                "batch-norm: feature_index out of range",
            ));
        }
        let wide = |b: &mut Emitter<'_, '_>, v: InstrId| -> Result<InstrId> {
            if t == ElementType::F64 {
                return Ok(v);
            }
            b.like(v, ElementType::F64, Op::Convert, vec![v])
        };
        // A per-feature vector, widened and broadcast along `feature_index`.
        let per_feature = |b: &mut Emitter<'_, '_>, i: usize| -> Result<InstrId> {
            let v = b.operand(i)?;
            let v = wide(b, v)?;
            Ok(b.add(
                Shape::array(ElementType::F64, dims.clone()),
                Op::Broadcast {
                    dimensions: vec![feature_index],
                },
                vec![v],
            ))
        };
        let (scale, offset, mean, var) = (
            per_feature(b, 1)?,
            per_feature(b, 2)?,
            per_feature(b, 3)?,
            per_feature(b, 4)?,
        );
        let xw = wide(b, x)?;
        let eps = b.splat(xw, hlo_ir::Scalar::F64(f64::from(epsilon)))?;
        let centered = b.binary(BinaryOp::Subtract, xw, mean)?;
        let scaled = b.binary(BinaryOp::Multiply, centered, scale)?;
        let v_eps = b.binary(BinaryOp::Add, var, eps)?;
        let root = b.unary(UnaryOp::Sqrt, v_eps)?;
        let normalized = b.binary(BinaryOp::Divide, scaled, root)?;
        let y = b.binary(BinaryOp::Add, normalized, offset)?;
        if t == ElementType::F64 {
            return Ok(y);
        }
        b.like(y, t, Op::Convert, vec![y])
    }
}
