//! Constant folding: an instruction whose operands are all constants becomes a
//! constant, when its result is small.
//!
//! Values are computed by the reference evaluator itself
//! ([`hlo_evaluator::array_ops::evaluate_array_op`], which applies the shared
//! [`hlo_semantics`] to elementwise ops), so a folded constant holds the bits the
//! instruction would have produced at run time on the reference interpreter.
//!
//! What is folded: elementwise ops (`unary`, `binary`, `compare`, `select`,
//! `clamp`, `convert`, `bitcast-convert`, `reduce-precision`), `reshape`,
//! `transpose`, `slice`, `concatenate`, `reverse`, `pad`, `copy` and
//! `get-tuple-element` of a constant tuple, when the result has at most
//! [`ConstantFolding::max_elements`] elements (1024 by default; bigger constants
//! cost memory and compile time, and a backend computes them fast anyway).
//!
//! `broadcast` and `iota` are generators, not folded themselves (a
//! `broadcast(constant(0))` is smaller than the array it makes), but their
//! values are computed, if small, when a user of theirs folds.
//!
//! Never folded: ops with side effects, `rng` and `rng-bit-generator` (their
//! results are not a function of their operands alone), ops that call
//! computations, and anything whose evaluation fails (an op the semantics do not
//! define on the type is left for the backend to report).

use super::{checked_count, HloPass};
use hlo_evaluator::array_ops::evaluate_array_op;
use hlo_ir::error::{Error, Result};
use hlo_ir::literal::Literal;
use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
use hlo_ir::shape::Shape;
use hlo_ir::shape_inference::{infer_shape, NoComputations};
use hlo_ir::{HloModule, InstrId, Op};
use std::collections::HashMap;
use std::sync::Arc;

/// Folds small constant expressions.
#[derive(Clone)]
pub struct ConstantFolding {
    max_elements: usize,
    elementwise: Option<Arc<dyn ElementwiseEvaluator>>,
}

/// How a backend computes elementwise ops, for constant folding.
///
/// A backend whose kernels round some ops differently from the reference
/// semantics (a vectorised `exp` within an ulp of the C library's) hands its
/// own kernels to [`ConstantFolding::with_elementwise`], so a folded constant
/// holds the bits the backend computes for the same op at run time: folding
/// never changes a program's numbers.
///
/// Called from the thread running the pass.
pub trait ElementwiseEvaluator: Send + Sync {
    /// The value of elementwise `op` (unary, binary, compare, select, clamp,
    /// convert, reduce-precision) on `operands`, for an instruction of shape
    /// `shape`, as the backend computes it; `None` to use the reference
    /// evaluator.
    fn evaluate(&self, op: &Op, operands: &[&Literal], shape: &Shape) -> Option<Result<Literal>>;
}

impl std::fmt::Debug for ConstantFolding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstantFolding")
            .field("max_elements", &self.max_elements)
            .field("backend_elementwise", &self.elementwise.is_some())
            .finish()
    }
}

impl Default for ConstantFolding {
    fn default() -> Self {
        ConstantFolding {
            max_elements: 1024,
            elementwise: None,
        }
    }
}

impl ConstantFolding {
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds only results with at most `max_elements` elements.
    pub fn with_max_elements(max_elements: usize) -> Self {
        ConstantFolding {
            max_elements,
            ..Self::default()
        }
    }

    /// Folds elementwise ops with a backend's own kernels (see
    /// [`ElementwiseEvaluator`]).
    pub fn with_elementwise(mut self, elementwise: Arc<dyn ElementwiseEvaluator>) -> Self {
        self.elementwise = Some(elementwise);
        self
    }

    pub fn max_elements(&self) -> usize {
        self.max_elements
    }
}

/// Whether folding `op` is exact given constant operands (see the module docs).
fn is_foldable(op: &Op) -> bool {
    matches!(
        op,
        Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare { .. }
            | Op::Select
            | Op::Clamp
            | Op::Convert
            | Op::BitcastConvert
            | Op::ReducePrecision { .. }
            | Op::Reshape
            | Op::Transpose { .. }
            | Op::Slice { .. }
            | Op::Concatenate { .. }
            | Op::Reverse { .. }
            | Op::Pad { .. }
            | Op::Copy
            | Op::GetTupleElement { .. }
    )
}

impl HloPass for ConstantFolding {
    fn name(&self) -> &str {
        "constant-folding"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let mut changed = false;
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        for comp in &mut module.computations {
            let candidate = comp.instructions.iter().any(|i| {
                is_foldable(&i.op)
                    && !i.operands.is_empty()
                    && i.operands.iter().all(|o| {
                        comp.instructions
                            .get(o.index())
                            .is_some_and(|o| is_value_source(&o.op))
                    })
            });
            if !candidate {
                continue;
            }
            let mut ed = ComputationEditor::new(comp, &mut names);
            let mut generated: HashMap<InstrId, Literal> = HashMap::new();
            for i in 0..ed.len() {
                let id = InstrId(i as u32);
                let instr = ed.instr(id);
                if !is_foldable(&instr.op) || instr.operands.is_empty() {
                    continue;
                }
                let small = match &instr.shape {
                    Shape::Array(a) => {
                        checked_count(&a.dims).is_some_and(|n| n <= self.max_elements)
                    }
                    _ => false,
                };
                if !small {
                    continue;
                }
                let operands = instr.operands.clone();
                if !operands.iter().all(|&o| is_value_source(&ed.instr(o).op)) {
                    continue;
                }
                // Generated operand values (iota, broadcast) are computed once.
                for &o in &operands {
                    if generated.contains_key(&o) || matches!(ed.instr(o).op, Op::Constant { .. }) {
                        continue;
                    }
                    if let Some(value) = generate(&ed, o, self.max_elements) {
                        generated.insert(o, value);
                    }
                }
                let values: Option<Vec<&Literal>> = operands
                    .iter()
                    .map(|o| match &ed.instr(*o).op {
                        Op::Constant { literal } => Some(literal),
                        _ => generated.get(o),
                    })
                    .collect();
                let Some(values) = values else { continue };
                if !shape_is_consistent(&ed, id) {
                    continue;
                }
                let instr = ed.instr(id);
                let backend = self
                    .elementwise
                    .as_ref()
                    .and_then(|e| e.evaluate(&instr.op, &values, &instr.shape));
                let result = match backend {
                    Some(value) => value.and_then(|v| with_shape(v, &instr.op, &instr.shape)),
                    None => evaluate(&instr.op, &values, &instr.shape),
                };
                let Ok(result) = result else {
                    continue;
                };
                let (name, shape) = (instr.name.clone(), instr.shape.clone());
                let constant =
                    ed.add_derived(id, &name, shape, Op::Constant { literal: result }, vec![]);
                ed.replace_all_uses(id, constant)?;
            }
            changed |= ed.finish(&effectful)?;
        }
        Ok(changed)
    }
}

/// Whether an instruction's value can be known at compile time without running
/// anything with effects.
fn is_value_source(op: &Op) -> bool {
    matches!(
        op,
        Op::Constant { .. } | Op::Iota { .. } | Op::Broadcast { .. }
    )
}

/// The value of an `iota`, or of a `broadcast` of a constant, if it has at most
/// `max` elements.
fn generate(ed: &ComputationEditor, id: InstrId, max: usize) -> Option<Literal> {
    let instr = ed.instr(id);
    let shape = instr.shape.as_array()?;
    if checked_count(&shape.dims)? > max || !shape_is_consistent(ed, id) {
        return None;
    }
    let value = match &instr.op {
        Op::Iota { .. } => evaluate_array_op(&instr.op, &[], &instr.shape).ok()?,
        Op::Broadcast { .. } => {
            let operand = ed.instr(*instr.operands.first()?);
            let Op::Constant { literal } = &operand.op else {
                return None;
            };
            evaluate_array_op(&instr.op, &[literal], &instr.shape).ok()?
        }
        _ => return None,
    };
    Literal::from_bytes(instr.shape.clone(), value.bytes().ok()?).ok()
}

/// Whether the instruction's declared shape is what its op makes of its
/// operands (so evaluation allocates what the shape says, nothing bigger).
fn shape_is_consistent(ed: &ComputationEditor, id: InstrId) -> bool {
    let instr = ed.instr(id);
    let operands: Vec<&Shape> = instr.operands.iter().map(|&o| &ed.instr(o).shape).collect();
    infer_shape(&instr.op, &operands, &instr.shape, &NoComputations)
        .is_ok_and(|inferred| inferred.compatible(&instr.shape))
}

fn operand<'a>(values: &[&'a Literal], i: usize) -> Result<&'a Literal> {
    values
        .get(i)
        .copied()
        .ok_or_else(|| Error::invalid_argument(format!("missing operand {i}")))
}

/// The value of `op` on constant operands, with the instruction's exact shape.
fn evaluate(op: &Op, values: &[&Literal], shape: &Shape) -> Result<Literal> {
    let result = match op {
        Op::Copy => operand(values, 0)?.clone(),
        Op::GetTupleElement { index } => operand(values, 0)?
            .tuple_elements()
            .get(*index)
            .cloned()
            .ok_or_else(|| Error::invalid_argument(format!("no tuple element {index}")))?,
        _ => evaluate_array_op(op, values, shape)?,
    };
    with_shape(result, op, shape)
}

/// `result` with the instruction's declared shape (with its layout); the bytes
/// are the logical row-major values either way.
fn with_shape(result: Literal, op: &Op, shape: &Shape) -> Result<Literal> {
    let array = shape.array_or_err()?;
    let got = result.array_shape()?;
    if got.element_type != array.element_type || got.dims != array.dims {
        return Err(Error::internal(format!(
            "folding {} gave {} for an instruction of shape {shape}",
            op.opcode(),
            result.shape()
        )));
    }
    Literal::from_bytes(shape.clone(), result.bytes()?)
}
