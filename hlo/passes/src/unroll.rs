//! While-loop unrolling: a `while` that runs a few iterations known at
//! compile time is replaced by that many copies of its body.
//!
//! JAX's `fori_loop` with constant bounds lowers to a `while` whose state
//! holds a counter starting at a constant, a condition `counter < bound` and
//! a body that adds one to it. Its random number generator is such a loop:
//! threefry runs five iterations of four rounds over the whole `[N, M]`
//! counter arrays. Run as a loop, every iteration reads and writes the state
//! arrays in memory; unrolled, the rounds form one elementwise chain the
//! fusion pass fuses with what consumes the random bits, and the counter
//! becomes a constant in each copy.
//!
//! The copies are the body's instructions with its parameter bound to the
//! previous copy's root (the first to the loop's operand), in order, so
//! every value and every effect is what the loop computed, in the same
//! sequence. Only loops matching the pattern exactly are unrolled, and only
//! while the copies stay small ([`WhileLoopUnroller::max_trip_count`],
//! [`WhileLoopUnroller::max_instructions`]): a long scan stays a loop.

use super::HloPass;
use hlo_ir::error::Result;
use hlo_ir::rewrite::{
    effectful_computations, instruction_has_effect, remove_unreachable_computations,
    unshare_owned_computations, ComputationEditor, NameGen,
};
use hlo_ir::{BinaryOp, ComparisonDirection, HloComputation, HloModule, InstrId, Op};

/// Unrolls `while` loops with a small constant trip count.
#[derive(Clone, Debug)]
pub struct WhileLoopUnroller {
    /// Loops of more iterations stay loops.
    pub max_trip_count: usize,
    /// Loops whose copies would add more instructions stay loops.
    pub max_instructions: usize,
}

impl Default for WhileLoopUnroller {
    fn default() -> Self {
        WhileLoopUnroller {
            max_trip_count: 8,
            max_instructions: 2000,
        }
    }
}

impl WhileLoopUnroller {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The integer value of a scalar constant.
fn scalar_constant(comp: &HloComputation, id: InstrId) -> Option<i64> {
    match &comp.instructions.get(id.index())?.op {
        Op::Constant { literal } if literal.shape().is_scalar() => literal.get(0).ok()?.to_i64(),
        _ => None,
    }
}

/// `get-tuple-element(parameter 0, index)`: the index.
fn state_element(comp: &HloComputation, id: InstrId) -> Option<usize> {
    let instr = comp.instructions.get(id.index())?;
    match instr.op {
        Op::GetTupleElement { index } => {
            let of = comp.instructions.get(instr.operands.first()?.index())?;
            matches!(of.op, Op::Parameter { number: 0 }).then_some(index)
        }
        _ => None,
    }
}

/// The trip count of `while(init)` with `condition` and `body`, when the
/// state's element `i` starts at a constant, the condition is exactly
/// `element i < bound` (or `bound > element i`) for a constant bound, and the
/// body's result has `element i + 1` there.
fn trip_count(
    parent: &HloComputation,
    init: InstrId,
    condition: &HloComputation,
    body: &HloComputation,
) -> Option<usize> {
    let root = condition.instr(condition.root);
    let (counter, bound) = match (&root.op, &root.operands[..]) {
        (
            Op::Compare {
                direction: ComparisonDirection::Lt,
                ..
            },
            &[a, b],
        ) => (a, b),
        (
            Op::Compare {
                direction: ComparisonDirection::Gt,
                ..
            },
            &[a, b],
        ) => (b, a),
        _ => return None,
    };
    let index = state_element(condition, counter)?;
    let bound = scalar_constant(condition, bound)?;
    let init_instr = parent.instr(init);
    let start = match init_instr.op {
        Op::Tuple => scalar_constant(parent, *init_instr.operands.get(index)?)?,
        _ => return None,
    };
    // The counter's type: the comparison is signed or unsigned as it is.
    let ty = condition.instr(counter).shape.as_array()?.element_type;
    if !ty.is_integer() || body.instr(body.root).shape != parent.instr(init).shape {
        return None;
    }
    let body_root = body.instr(body.root);
    if !matches!(body_root.op, Op::Tuple) {
        return None;
    }
    let next = body.instr(*body_root.operands.get(index)?);
    let increments = match (&next.op, &next.operands[..]) {
        (Op::Binary(BinaryOp::Add), &[a, b]) => {
            (state_element(body, a) == Some(index) && scalar_constant(body, b) == Some(1))
                || (state_element(body, b) == Some(index) && scalar_constant(body, a) == Some(1))
        }
        _ => false,
    };
    if !increments {
        return None;
    }
    // Both constants were read as i64 (u64 wraps): compare within the type.
    let (start, bound) = if ty.is_unsigned_int() {
        (start as u64 as i128, bound as u64 as i128)
    } else {
        (start as i128, bound as i128)
    };
    usize::try_from((bound - start).max(0)).ok()
}

impl HloPass for WhileLoopUnroller {
    fn name(&self) -> &str {
        "while-unroll"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        let mut changed = false;
        for c in 0..module.computations.len() {
            // Find the loops first, reading the module; then edit.
            let comp = &module.computations[c];
            let loops: Vec<(InstrId, usize)> = comp
                .ids()
                .filter_map(|id| {
                    let instr = comp.instr(id);
                    let Op::While { condition, body } = instr.op else {
                        return None;
                    };
                    if condition.index() == c || body.index() == c {
                        return None;
                    }
                    let (cond, body) = (
                        module.computations.get(condition.index())?,
                        module.computations.get(body.index())?,
                    );
                    let trips = trip_count(comp, *instr.operands.first()?, cond, body)?;
                    (trips <= self.max_trip_count
                        && trips.saturating_mul(body.instructions.len()) <= self.max_instructions)
                        .then_some((id, trips))
                })
                .collect();
            if loops.is_empty() {
                continue;
            }
            let placeholder = HloComputation {
                name: String::new(),
                instructions: Vec::new(),
                root: InstrId(0),
            };
            let mut parent = std::mem::replace(&mut module.computations[c], placeholder);
            let result = unroll_in(&mut parent, module, &loops, &mut names, &effectful);
            module.computations[c] = parent;
            result?;
            changed = true;
        }
        if changed {
            remove_unreachable_computations(module)?;
            unshare_owned_computations(module)?;
        }
        Ok(changed)
    }
}

/// Replaces each loop of `loops` (with its trip count) in `parent` by copies
/// of its body.
fn unroll_in(
    parent: &mut HloComputation,
    module: &HloModule,
    loops: &[(InstrId, usize)],
    names: &mut NameGen,
    effectful: &[bool],
) -> Result<()> {
    let mut ed = ComputationEditor::new(parent, names);
    for &(id, trips) in loops {
        let Op::While { body, .. } = ed.instr(id).op else {
            continue;
        };
        let body = module.computation(body);
        let preds = ed.instr(id).control_predecessors.clone();
        ed.set_insertion_point(Some(id));
        let first_new = ed.len();
        let mut state = ed.instr(id).operands[0];
        for _ in 0..trips {
            state = ed.inline_computation(body, &[state])?;
        }
        // The loop's control predecessors now order the copies' effects.
        for new in first_new..ed.len() {
            let new = InstrId(new as u32);
            if instruction_has_effect(ed.instr(new), effectful) {
                for &p in &preds {
                    ed.add_control_predecessor(new, p);
                }
            }
        }
        ed.replace_all_uses(id, state)?;
        ed.remove(id);
        ed.set_insertion_point(None);
    }
    ed.finish(effectful)?;
    Ok(())
}
