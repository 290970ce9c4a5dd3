//! `batch-norm-grad` → reductions and elementwise arithmetic in `f64`.
//!
//! The evaluator computes, per feature `c` over the `n` elements of every
//! other dimension, in `f64` and rounding once at the end:
//! `sum_dy = sum(dy)`, `sum_dy_xc = sum(dy * (x - mean))` (each folded from
//! `0` in row-major order), then
//! `grad_x = scale / sqrt(var + eps) * ((dy - sum_dy / n) - (x - mean) *
//! sum_dy_xc / ((var + eps) * n))`, `grad_scale = sum_dy_xc / sqrt(var + eps)`
//! and `grad_offset = sum_dy`. The expansion converts to `f64`, takes the sums
//! as `reduce`s with a new `add` reducer from `0` (which fold in that same
//! order) and performs the same operations in the same order, then converts
//! back: exact.
//! The conversions and broadcasts along the feature dimension are
//! `batchnorm.rs`'s.

use super::batchnorm::{along_features, convert_to};
use super::{Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode};

const F64: ElementType = ElementType::F64;

/// See the module docs.
pub struct BatchNormGradExpander;

impl Expander for BatchNormGradExpander {
    fn name(&self) -> &'static str {
        "batch-norm-grad"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        if op != Opcode::BatchNormGrad || !t.is_float() {
            return None;
        }
        let mut plan = super::all_of_type(
            F64,
            &[
                Opcode::Subtract,
                Opcode::Multiply,
                Opcode::Divide,
                Opcode::Sqrt,
                Opcode::Add,
                Opcode::Broadcast,
                Opcode::Reduce,
            ],
        );
        if t != F64 {
            plan.push((Opcode::Convert, super::tys(&[t, F64])));
        }
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::BatchNormGrad { feature_index, .. } = instr.op else {
            return false;
        };
        let Some(&x) = instr.operands.first() else {
            return false;
        };
        let Ok((_, dims)) = b.array(x) else {
            return false;
        };
        let Some(&features) = dims.get(feature_index) else {
            return false;
        };
        instr.operands.len() == 5
            && instr.operands[1..4]
                .iter()
                .all(|&v| b.array(v).is_ok_and(|(_, d)| d == [features]))
            && b.array(instr.operands[4]).is_ok_and(|(_, d)| d == dims)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::BatchNormGrad {
            epsilon,
            feature_index,
        } = b.instr(id).op
        else {
            return Err(Error::internal("batch-norm-grad expander on another op"));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        let features = *dims
            .get(feature_index)
            .ok_or_else(|| Error::invalid_argument("batch-norm: feature_index out of range"))?;
        let count: usize = dims.iter().product();
        let n = count.checked_div(features).unwrap_or(0).max(1) as f64;
        let others: Vec<usize> = (0..dims.len()).filter(|&d| d != feature_index).collect();
        let vector = Shape::array(F64, vec![features]);
        let along =
            |b: &mut Emitter<'_, '_>, v: InstrId| along_features(b, v, &dims, feature_index);
        let mut wide = Vec::with_capacity(5);
        for i in 0..5 {
            let v = b.operand(i)?;
            wide.push(convert_to(b, v, F64)?);
        }
        let [xw, scale, mean, var, dy] = wide[..] else {
            return Err(Error::internal("five operands"));
        };
        let add = b.binary_reducer(BinaryOp::Add, F64);
        let zero = b.add(
            Shape::scalar(F64),
            Op::Constant {
                literal: hlo_ir::Literal::scalar(0.0f64),
            },
            vec![],
        );
        let sum = |b: &mut Emitter<'_, '_>, v: InstrId| {
            b.add(
                vector.clone(),
                Op::Reduce {
                    dimensions: others.clone(),
                    to_apply: add,
                },
                vec![v, zero],
            )
        };
        let mean_b = along(b, mean);
        let xc = b.binary(BinaryOp::Subtract, xw, mean_b)?;
        let sum_dy = sum(b, dy);
        let dy_xc = b.binary(BinaryOp::Multiply, dy, xc)?;
        let sum_dy_xc = sum(b, dy_xc);
        let eps = b.splat(var, hlo_ir::Scalar::F64(f64::from(epsilon)))?;
        let ve = b.binary(BinaryOp::Add, var, eps)?;
        let root = b.unary(UnaryOp::Sqrt, ve)?;
        let grad_scale = b.binary(BinaryOp::Divide, sum_dy_xc, root)?;
        // grad_x, in the evaluator's order of operations.
        let nv = b.splat(var, hlo_ir::Scalar::F64(n))?;
        let scale_b = along(b, scale);
        let root_b = along(b, root);
        let factor = b.binary(BinaryOp::Divide, scale_b, root_b)?;
        let sum_dy_b = along(b, sum_dy);
        let nb = b.splat(dy, hlo_ir::Scalar::F64(n))?;
        let mean_dy = b.binary(BinaryOp::Divide, sum_dy_b, nb)?;
        let first = b.binary(BinaryOp::Subtract, dy, mean_dy)?;
        let sdx_b = along(b, sum_dy_xc);
        let num = b.binary(BinaryOp::Multiply, xc, sdx_b)?;
        let ven = b.binary(BinaryOp::Multiply, ve, nv)?;
        let ven_b = along(b, ven);
        let second = b.binary(BinaryOp::Divide, num, ven_b)?;
        let inner = b.binary(BinaryOp::Subtract, first, second)?;
        let grad_x = b.binary(BinaryOp::Multiply, factor, inner)?;
        let grad_x = convert_to(b, grad_x, t)?;
        let grad_scale = convert_to(b, grad_scale, t)?;
        let grad_offset = convert_to(b, sum_dy, t)?;
        let shape = b.instr(id).shape.clone();
        Ok(b.add(shape, Op::Tuple, vec![grad_x, grad_scale, grad_offset]))
    }
}
