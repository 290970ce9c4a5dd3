//! [`DivideByReciprocal`]: division by a broadcast or a constant becomes a
//! multiplication by its reciprocal, as XLA CPU computes it.
//!
//! This is the one pass here that changes numbers, on purpose: it reproduces a
//! value-changing rewrite of XLA's algebraic simplifier so that a program
//! lowered by JAX (`module.hlo`) gives the bits XLA CPU gives. It is not part
//! of [`crate::standard_pipeline`]; a backend runs it when the compile option
//! `divide_by_reciprocal` is `xla` (the default; `off` keeps every division),
//! read with [`divide_by_reciprocal_option`].
//!
//! The rule, in our words. XLA's simplifier, for a floating-point
//! `divide(a, b)` whose numerator is not a `constant`, replaces a divisor that
//! is a constant, or a broadcast of a constant, by its inverted constant and
//! multiplies (the inversion is in its source); XLA CPU as shipped with JAX
//! 0.10.2 does the same for a divisor that is any broadcast, `broadcast(x)`:
//! it computes `1 / x` at `x`'s (smaller) shape and multiplies by its
//! broadcast (observed on the optimized modules: scalar, row and column
//! broadcasts, f32 and f16; a divisor that is a full array stays a division).
//! Both round twice where the division rounded once. The type the reciprocal
//! is computed in follows XLA CPU's order of passes: bf16 arithmetic has
//! already been moved to f32 when the simplifier runs (`FloatNormalization`),
//! so for bf16 the reciprocal and the product are f32, rounded to bf16 once at
//! the end; f16, f32 and f64 stay in their own type. Complex division is left
//! alone.
//!
//! Not reproduced: XLA's other rewrites of a division (`a / exp(b)`,
//! `a / sqrt(b)`, `a / pow(b, c)`, nested divisions), which JAX programs meet
//! less often.

use super::{retyped, rewrite_instructions, HloPass};
use hlo_ir::error::{Error, Result};
use hlo_ir::literal::Literal;
use hlo_ir::native::Scalar;
use hlo_ir::rewrite::ComputationEditor;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{BinaryOp, HloModule, InstrId, Op};

/// Reads the `divide_by_reciprocal` compile option: `xla` (or unset) rewrites
/// as XLA CPU does, `off` keeps divisions.
pub fn divide_by_reciprocal_option(value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("xla") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "divide_by_reciprocal must be xla (the default) or off, not \"{other}\""
        ))),
    }
}

/// The pass (see the module documentation).
#[derive(Debug, Default)]
pub struct DivideByReciprocal;

impl DivideByReciprocal {
    pub fn new() -> Self {
        DivideByReciprocal
    }
}

/// The scalar 1 of `ty` (a float type other than bf16).
fn one(ty: ElementType) -> Option<Literal> {
    Some(match ty {
        // 1.0 in binary16: exponent 15 (biased), mantissa 0.
        ElementType::F16 => Literal::from_scalar(Scalar::from_bytes(ty, &0x3c00u16.to_le_bytes())),
        ElementType::F32 => Literal::scalar(1.0f32),
        ElementType::F64 => Literal::scalar(1.0f64),
        _ => return None,
    })
}

/// Rewrites `id` if it is a division the rule covers; returns the replacement.
fn rewrite(ed: &mut ComputationEditor<'_>, id: InstrId) -> Option<InstrId> {
    let instr = ed.instr(id);
    if !matches!(instr.op, Op::Binary(BinaryOp::Divide)) || instr.operands.len() != 2 {
        return None;
    }
    let arr = instr.shape.as_array()?;
    if !arr.dynamic.is_empty() {
        return None;
    }
    let ty = arr.element_type;
    // The type XLA CPU divides in when its simplifier runs.
    let compute = match ty {
        ElementType::BF16 => ElementType::F32,
        ElementType::F16 | ElementType::F32 | ElementType::F64 => ty,
        _ => return None,
    };
    let (a, b) = (instr.operands[0], instr.operands[1]);
    if matches!(ed.instr(a).op, Op::Constant { .. }) {
        return None;
    }
    // The divisor: a constant, or a broadcast of anything (`x` is what is
    // inverted, `dims` how its reciprocal is broadcast back).
    let (x, dims) = match &ed.instr(b).op {
        Op::Constant { .. } => (b, None),
        Op::Broadcast { dimensions } if ed.instr(b).operands.len() == 1 => {
            (ed.instr(b).operands[0], Some(dimensions.clone()))
        }
        _ => return None,
    };
    let x_shape = ed.instr(x).shape.clone();
    if x_shape.as_array().is_none_or(|s| !s.dynamic.is_empty()) {
        return None;
    }
    let b_shape = ed.instr(b).shape.clone();
    let d_shape = ed.instr(id).shape.clone();
    let one = one(compute)?;
    let widen = |ed: &mut ComputationEditor<'_>, v: InstrId, shape: &Shape| -> InstrId {
        if compute == ty {
            v
        } else {
            ed.add_derived(id, "convert", retyped(shape, compute), Op::Convert, vec![v])
        }
    };
    let xc = widen(ed, x, &x_shape);
    let ac = widen(ed, a, &d_shape);
    let c1 = ed.add_derived(
        id,
        "constant",
        Shape::scalar(compute),
        Op::Constant { literal: one },
        vec![],
    );
    let x_c_shape = retyped(&x_shape, compute);
    let ones = ed.add_derived(
        id,
        "broadcast",
        x_c_shape.clone(),
        Op::Broadcast { dimensions: vec![] },
        vec![c1],
    );
    let recip = ed.add_derived(
        id,
        "reciprocal",
        x_c_shape,
        Op::Binary(BinaryOp::Divide),
        vec![ones, xc],
    );
    let recip = match dims {
        Some(dimensions) => ed.add_derived(
            id,
            "broadcast",
            retyped(&b_shape, compute),
            Op::Broadcast { dimensions },
            vec![recip],
        ),
        None => recip,
    };
    let product = ed.add_derived(
        id,
        "multiply",
        retyped(&d_shape, compute),
        Op::Binary(BinaryOp::Multiply),
        vec![ac, recip],
    );
    Some(if compute == ty {
        product
    } else {
        ed.add_derived(id, "convert", d_shape, Op::Convert, vec![product])
    })
}

impl HloPass for DivideByReciprocal {
    fn name(&self) -> &str {
        "divide-by-reciprocal"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        // Only the instructions present before the pass are offered: the new
        // ones are never divisions the rule covers (the reciprocal's numerator
        // is a broadcast constant but its divisor is not a broadcast).
        let candidate = |i: &hlo_ir::HloInstruction| matches!(i.op, Op::Binary(BinaryOp::Divide));
        rewrite_instructions(module, candidate, rewrite)
    }
}
