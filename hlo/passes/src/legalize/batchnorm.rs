//! `batch-norm-inference` → elementwise arithmetic in `f64`.
//!
//! `y = (x - mean) * scale / sqrt(variance + epsilon) + offset`, with the
//! per-feature vectors broadcast along `feature_index`. The evaluator (following
//! XLA's operation semantics without extra rounding) computes this formula in
//! `f64`, in this order, and rounds once to the operand's type; the expansion
//! converts up to `f64`, does the same five operations and converts back, so
//! it is exact.
//!
//! `batch-norm-training` adds the statistics: `mean = sum(x) / n` and
//! `var = sum((x - mean)^2) / n` over every dimension but the feature one, as
//! `reduce`s in `f64` with a new `add` reducer from `0`. The evaluator sums
//! each feature's elements from `0` in row-major order, which is the order
//! `reduce` folds them in, so this is exact too. (`batch-norm-grad` has no
//! expander yet.)

use super::{Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Op, Opcode};

/// See the module docs.
pub struct BatchNormInferenceExpander;

/// What both expansions emit for operand type `t` (`None` if not a float).
fn f64_plan(t: ElementType, with_reduce: bool) -> Option<Vec<Emitted>> {
    if !t.is_float() {
        return None;
    }
    let mut ops = vec![
        Opcode::Subtract,
        Opcode::Multiply,
        Opcode::Divide,
        Opcode::Sqrt,
        Opcode::Add,
        Opcode::Broadcast,
    ];
    if with_reduce {
        ops.push(Opcode::Reduce);
    }
    let mut plan = super::all_of_type(ElementType::F64, &ops);
    if t != ElementType::F64 {
        plan.push((Opcode::Convert, super::tys(&[t, ElementType::F64])));
    }
    Some(plan)
}

/// `v` converted to `to` (itself if it has that type already).
pub(super) fn convert_to(b: &mut Emitter<'_, '_>, v: InstrId, to: ElementType) -> Result<InstrId> {
    if b.array(v)?.0 == to {
        return Ok(v);
    }
    b.like(v, to, Op::Convert, vec![v])
}

/// `v` (an `f64[features]` vector) broadcast to `dims` along `feature_index`.
pub(super) fn along_features(
    b: &mut Emitter<'_, '_>,
    v: InstrId,
    dims: &[usize],
    feature_index: usize,
) -> InstrId {
    b.add(
        Shape::array(ElementType::F64, dims.to_vec()),
        Op::Broadcast {
            dimensions: vec![feature_index],
        },
        vec![v],
    )
}

/// `(d * scale) / sqrt(var + eps) + offset`, all `f64` of the operand's shape.
fn normalize(
    b: &mut Emitter<'_, '_>,
    d: InstrId,
    [scale, offset, var]: [InstrId; 3],
    epsilon: f32,
) -> Result<InstrId> {
    let eps = b.splat(d, hlo_ir::Scalar::F64(f64::from(epsilon)))?;
    let scaled = b.binary(BinaryOp::Multiply, d, scale)?;
    let v_eps = b.binary(BinaryOp::Add, var, eps)?;
    let root = b.unary(UnaryOp::Sqrt, v_eps)?;
    let normalized = b.binary(BinaryOp::Divide, scaled, root)?;
    b.binary(BinaryOp::Add, normalized, offset)
}

/// `batch-norm-training` → reductions and elementwise arithmetic in `f64`.
pub struct BatchNormTrainingExpander;

impl Expander for BatchNormTrainingExpander {
    fn name(&self) -> &'static str {
        "batch-norm-training"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        (op == Opcode::BatchNormTraining).then(|| f64_plan(t, true))?
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::BatchNormTraining {
            epsilon,
            feature_index,
        } = b.instr(id).op
        else {
            return Err(Error::internal(
                "batch-norm-training expander on another op",
            ));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        let features = *dims
            .get(feature_index)
            .ok_or_else(|| Error::invalid_argument("batch-norm: feature_index out of range"))?;
        let count: usize = dims.iter().product();
        let n = count.checked_div(features).unwrap_or(0).max(1) as f64;
        let others: Vec<usize> = (0..dims.len()).filter(|&d| d != feature_index).collect();
        let xw = convert_to(b, x, ElementType::F64)?;
        let add = b.binary_reducer(BinaryOp::Add, ElementType::F64);
        let zero = b.add(
            Shape::scalar(ElementType::F64),
            Op::Constant {
                literal: hlo_ir::Literal::scalar(0.0f64),
            },
            vec![],
        );
        let vector = Shape::array(ElementType::F64, vec![features]);
        let mean_of = |b: &mut Emitter<'_, '_>, v: InstrId| -> Result<InstrId> {
            let sum = b.add(
                vector.clone(),
                Op::Reduce {
                    dimensions: others.clone(),
                    to_apply: add,
                },
                vec![v, zero],
            );
            let n = b.splat(sum, hlo_ir::Scalar::F64(n))?;
            b.binary(BinaryOp::Divide, sum, n)
        };
        let mean = mean_of(b, xw)?;
        let mean_b = along_features(b, mean, &dims, feature_index);
        let d = b.binary(BinaryOp::Subtract, xw, mean_b)?;
        let dd = b.binary(BinaryOp::Multiply, d, d)?;
        let var = mean_of(b, dd)?;
        let var_b = along_features(b, var, &dims, feature_index);
        let wide_param = |b: &mut Emitter<'_, '_>, i: usize| -> Result<InstrId> {
            let v = b.operand(i)?;
            let v = convert_to(b, v, ElementType::F64)?;
            Ok(along_features(b, v, &dims, feature_index))
        };
        let (scale, offset) = (wide_param(b, 1)?, wide_param(b, 2)?);
        let y = normalize(b, d, [scale, offset, var_b], epsilon)?;
        let y = convert_to(b, y, t)?;
        let mean = convert_to(b, mean, t)?;
        let var = convert_to(b, var, t)?;
        let shape = b.instr(id).shape.clone();
        Ok(b.add(shape, Op::Tuple, vec![y, mean, var]))
    }
}

impl Expander for BatchNormInferenceExpander {
    fn name(&self) -> &'static str {
        "batch-norm-inference"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        (op == Opcode::BatchNormInference).then(|| f64_plan(t, false))?
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
        let mut params = Vec::with_capacity(4);
        for i in 1..=4 {
            let v = b.operand(i)?;
            let v = convert_to(b, v, ElementType::F64)?;
            params.push(along_features(b, v, &dims, feature_index));
        }
        let [scale, offset, mean, var] = params[..] else {
            return Err(Error::internal("four parameters"));
        };
        let xw = convert_to(b, x, ElementType::F64)?;
        let d = b.binary(BinaryOp::Subtract, xw, mean)?;
        let y = normalize(b, d, [scale, offset, var], epsilon)?;
        convert_to(b, y, t)
    }
}
