//! Applying a scalar computation (a sort comparator, a `select-and-scatter`
//! selector or combiner, a `map`'s function) to whole arrays, lane by lane.
//!
//! The computation's instructions are copied with array shapes: parameters
//! become the given arrays, scalar constants are broadcast, every other
//! instruction is the same elementwise op on arrays. Only computations of
//! elementwise ops on scalars qualify ([`applies_lanewise`]); the copy computes
//! every lane exactly as the evaluator computes the scalar computation on that
//! lane's values. (Both sides of a `select` are computed for every lane; the
//! ops have no side effects, so that changes nothing.)
//!
//! [`MapExpander`]: `map` is exactly this, its function applied to its
//! operands lane-wise in a new computation the expansion `call`s; its ops are
//! legalized after inlining like any others. Exact.

use super::{Emitted, Emitter, Expander};
use hlo_ir::builder::{HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloComputation, InstrId, Op, Opcode};

/// Whether an instruction can be applied to whole arrays lane by lane.
fn elementwise(op: &Op) -> bool {
    op.is_elementwise()
        || matches!(
            op,
            Op::Parameter { .. } | Op::Constant { .. } | Op::BitcastConvert
        )
}

/// A `bitcast-convert` is lane-wise only between types of one width (a
/// width change adds or drops a dimension).
fn same_width_bitcast(comp: &HloComputation, instr: &hlo_ir::HloInstruction) -> bool {
    let width = |s: &Shape| s.element_type().map(|t| t.byte_size());
    match (&instr.op, instr.operands.first()) {
        (Op::BitcastConvert, Some(o)) => comp
            .instructions
            .get(o.index())
            .is_some_and(|operand| width(&operand.shape) == width(&instr.shape)),
        (Op::BitcastConvert, None) => false,
        _ => true,
    }
}

/// If `comp` has exactly the parameters `0..params`, all scalars, is made only
/// of elementwise ops on scalars, each operand defined before its use, the
/// element type of its (scalar) root.
pub(super) fn applies_lanewise(comp: &HloComputation, params: usize) -> Option<ElementType> {
    let mut seen = vec![false; params];
    for (i, instr) in comp.instructions.iter().enumerate() {
        let scalar = matches!(&instr.shape, Shape::Array(a) if a.dims.is_empty());
        if !scalar
            || !elementwise(&instr.op)
            || instr.operands.iter().any(|o| o.index() >= i)
            || !same_width_bitcast(comp, instr)
        {
            return None;
        }
        if let Op::Parameter { number } = instr.op {
            *seen.get_mut(number)? = true;
        }
    }
    if !seen.iter().all(|&s| s) {
        return None;
    }
    let root = comp.instructions.get(comp.root.index())?;
    Some(root.shape.array_or_err().ok()?.element_type)
}

/// `comp` applied lane by lane to arrays of `dims`: `args[p]` stands for
/// parameter `p`. Returns its root.
pub(super) fn apply(
    bb: &mut HloBuilder,
    comp: &HloComputation,
    args: &[Value],
    dims: &[usize],
) -> Result<Value> {
    let mut vals: Vec<Value> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let ty = instr.shape.array_or_err()?.element_type;
        let v = match &instr.op {
            Op::Parameter { number } => *args
                .get(*number)
                .ok_or_else(|| Error::invalid_argument("parameter out of range"))?,
            Op::Constant { literal } => {
                let c = bb.constant(literal.clone())?;
                bb.broadcast(c, dims)?
            }
            op => {
                let operands = instr
                    .operands
                    .iter()
                    .map(|o| {
                        vals.get(o.index()).copied().ok_or_else(|| {
                            Error::invalid_argument("operand used before its definition")
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                bb.add_op(op.clone(), &operands, Shape::array(ty, dims.to_vec()))?
            }
        };
        vals.push(v);
    }
    vals.get(comp.root.index())
        .copied()
        .ok_or_else(|| Error::invalid_argument("root out of range"))
}

/// `map` → its function on whole arrays; see the module docs.
pub struct MapExpander;

impl Expander for MapExpander {
    fn name(&self) -> &'static str {
        "map"
    }
    fn plan(&self, op: Opcode, _types: &[ElementType]) -> Option<Vec<Emitted>> {
        // What the function computes is legalized after the call is inlined.
        (op == Opcode::Map).then(|| vec![(Opcode::Call, vec![])])
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::Map { to_apply, .. } = instr.op else {
            return false;
        };
        let Ok((t, dims)) = b.array(id) else {
            return false;
        };
        let Ok(f) = b.computation(to_apply) else {
            return false;
        };
        !instr.operands.is_empty()
            && instr
                .operands
                .iter()
                .all(|&o| b.array(o).is_ok_and(|(_, d)| d == dims))
            && applies_lanewise(f, instr.operands.len()) == Some(t)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::Map { to_apply, .. } = instr.op else {
            return Err(Error::invalid_argument("not a map"));
        };
        let f = b.computation(to_apply)?.clone();
        let (_, dims) = b.array(id)?;
        let mut bb = HloBuilder::new("map");
        let mut args = Vec::new();
        for (i, &o) in instr.operands.iter().enumerate() {
            let (t, d) = b.array(o)?;
            args.push(bb.parameter(i, Shape::array(t, d), &format!("operand{i}"))?);
        }
        let root = apply(&mut bb, &f, &args, &dims)?;
        let built = bb.build_computation(root)?;
        let callee = b.attach(&built)?;
        Ok(b.add(
            instr.shape.clone(),
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            instr.operands.clone(),
        ))
    }
}
