//! `stochastic-convert` as elementwise ops: [`ExpandStochasticConvert`].
//!
//! XLA defines `stochastic-convert(x, random)` for a float `x` and a signed
//! integer result (its evaluator and its CPU and GPU compilers all decompose it
//! this way; float results are unimplemented there, and are `Unimplemented`
//! here too). With `a = |x|`, `t = floor(a)` and the fraction `f = a - t`
//! (`f16` fractions widened to `f32` first), the magnitude rounds up when the
//! random bits, read as an unsigned integer, are below `f * 2^w` converted to
//! the random type (`w` its width); the sign is put back, and `x <= MIN` or
//! `x >= MAX` of the result type gives that bound. NaN gives 0.
//!
//! The expansion uses `sign`, `abs`, `floor`, `subtract`, `multiply`,
//! `compare`, `select`, `add`, `negate` and `convert`, which every platform
//! here runs (a narrow result, `s4` say, is then widened by
//! [`super::narrow`]).

use crate::HloPass;
use hlo_ir::error::{Error, Result};
use hlo_ir::literal::Literal;
use hlo_ir::native::Scalar;
use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
use hlo_ir::shape::{ArrayShape, ElementType, Shape};
use hlo_ir::{BinaryOp, ComparisonDirection, InstrId, Op, UnaryOp};

/// See the module docs.
#[derive(Debug, Default)]
pub struct ExpandStochasticConvert;

impl HloPass for ExpandStochasticConvert {
    fn name(&self) -> &str {
        "expand-stochastic-convert"
    }

    fn run(&mut self, module: &mut hlo_ir::HloModule) -> Result<bool> {
        let any = module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .any(|i| matches!(i.op, Op::StochasticConvert));
        if !any {
            return Ok(false);
        }
        hlo_ir::rewrite::check_references(module)?;
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        let mut changed = false;
        for comp in module.computations.iter_mut() {
            let targets: Vec<InstrId> = comp
                .ids()
                .filter(|&id| matches!(comp.instr(id).op, Op::StochasticConvert))
                .collect();
            if targets.is_empty() {
                continue;
            }
            let mut ed = ComputationEditor::new(comp, &mut names);
            for id in targets {
                let new = expand(&mut ed, id)?;
                ed.replace_all_uses(id, new)?;
            }
            changed |= ed.finish(&effectful)?;
        }
        Ok(changed)
    }
}

fn expand(ed: &mut ComputationEditor, id: InstrId) -> Result<InstrId> {
    let instr = ed.instr(id).clone();
    let [x, random] = instr.operands[..] else {
        return Err(Error::invalid_argument(format!(
            "stochastic-convert %{} takes 2 operands, not {}",
            instr.name,
            instr.operands.len()
        )));
    };
    let result = instr.shape.array_or_err()?.clone();
    let xs = ed.instr(x).shape.array_or_err()?.clone();
    let rs = ed.instr(random).shape.array_or_err()?.clone();
    let (from, to, rt) = (xs.element_type, result.element_type, rs.element_type);
    if !to.is_signed_int() {
        return Err(Error::unimplemented(format!(
            "stochastic-convert from {from} to {to} (%{}): XLA defines it for signed \
             integer results only",
            instr.name
        )));
    }
    let base = instr.name.clone();
    let like = |t: ElementType| Shape::Array(ArrayShape::new(t, xs.dims.clone()));
    let pred = like(ElementType::Pred);
    let konst = |ed: &mut ComputationEditor, t: ElementType, v: Scalar| -> InstrId {
        let scalar = Shape::scalar(t);
        let mut literal = Literal::zeros(&scalar);
        // A scalar converted to `t` (its wide value for a narrow `t`) always fits.
        let _ = literal.set(0, hlo_semantics::convert_scalar(v, t));
        let c = ed.add_op(&base, scalar, Op::Constant { literal }, vec![]);
        ed.add_op(
            &base,
            like(t),
            Op::Broadcast { dimensions: vec![] },
            vec![c],
        )
    };
    let unary = |ed: &mut ComputationEditor, op: UnaryOp, a: InstrId, t: ElementType| {
        ed.add_op(&base, like(t), Op::Unary(op), vec![a])
    };
    let binary = |ed: &mut ComputationEditor, op: BinaryOp, a: InstrId, b: InstrId, t| {
        ed.add_op(&base, like(t), Op::Binary(op), vec![a, b])
    };
    let compare = |ed: &mut ComputationEditor, d: ComparisonDirection, a: InstrId, b: InstrId| {
        ed.add_op(
            &base,
            pred.clone(),
            Op::Compare {
                direction: d,
                compare_type: None,
            },
            vec![a, b],
        )
    };
    let select = |ed: &mut ComputationEditor, c: InstrId, a: InstrId, b: InstrId, t| {
        ed.add_op(&base, like(t), Op::Select, vec![c, a, b])
    };
    let convert = |ed: &mut ComputationEditor, a: InstrId, t: ElementType| {
        ed.add_op(&base, like(t), Op::Convert, vec![a])
    };

    let sign = unary(ed, UnaryOp::Sign, x, from);
    let zero = konst(ed, from, Scalar::F64(0.0));
    let negative = compare(ed, ComparisonDirection::Lt, sign, zero);
    let magnitude = unary(ed, UnaryOp::Abs, x, from);
    let whole = unary(ed, UnaryOp::Floor, magnitude, from);
    let mut fraction = binary(ed, BinaryOp::Subtract, magnitude, whole, from);
    let mut ft = from;
    if from == ElementType::F16 {
        fraction = convert(ed, fraction, ElementType::F32);
        ft = ElementType::F32;
    }
    let scale = konst(ed, ft, Scalar::F64(2f64.powi(rt.bit_width() as i32)));
    let fixed = binary(ed, BinaryOp::Multiply, fraction, scale, ft);
    let fixed = convert(ed, fixed, rt);
    let up = compare(ed, ComparisonDirection::Lt, random, fixed);
    let truncated = convert(ed, whole, to);
    let one = konst(ed, to, Scalar::S64(1));
    let plus_one = binary(ed, BinaryOp::Add, truncated, one, to);
    let rounded = select(ed, up, plus_one, truncated, to);
    let negated = unary(ed, UnaryOp::Negate, rounded, to);
    let signed = select(ed, negative, negated, rounded, to);
    let bits = to.bit_width() as u32;
    let (min, max) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
    let min_f = konst(ed, from, Scalar::F64(min as f64));
    let at_min = compare(ed, ComparisonDirection::Le, x, min_f);
    let min_i = konst(ed, to, Scalar::S64(min));
    let clamped = select(ed, at_min, min_i, signed, to);
    let max_f = konst(ed, from, Scalar::F64(max as f64));
    let at_max = compare(ed, ComparisonDirection::Ge, x, max_f);
    let max_i = konst(ed, to, Scalar::S64(max));
    Ok(select(ed, at_max, max_i, clamped, to))
}
