//! Call inlining: every `call` is replaced by a copy of the computation it calls.
//!
//! JAX wraps every `jax.jit`-ed or named function in a `call`, often several
//! deep. A `call` is only structure — it runs its computation on its operands and
//! returns the root — so replacing it by the computation's instructions, with
//! parameters bound to the operands, computes the same bits. Inlining lets
//! simplification, CSE and fusion see across the former boundaries.
//!
//! [`CallInliner`] inlines only `call`; [`FusionInliner`] (for backends
//! without a fusion emitter, see `legalize`) does the same to `fusion`.
//! Otherwise The computations other ops call (`to_apply` of
//! `reduce`, `map`, `sort`; `while` bodies; `conditional` branches; fusions) are
//! left as they are, but `call`s inside them are inlined too.
//!
//! Computations are processed callees first, so a computation is copied only once
//! it contains no `call`s itself. The copy takes the call's place in the
//! instruction order, so side effects (`rng` draws, effectful custom calls) run
//! in the sequence they ran before. A computation no longer called by anything
//! is removed at the end. A callee inlined twice would leave two `fusion`s
//! sharing one fused computation; each gets its own copy, as in XLA.
//!
//! Layouts: where a parameter's layout differs from the operand bound to it, or
//! the root's from the `call`'s, a `copy` to the expected layout is inserted (a
//! copy is the identity on values; it keeps a layout-sensitive `bitcast` reading
//! the bytes it read before). After [`super::LayoutNormalization`] there are no
//! layouts and no copies are needed.

use super::HloPass;
use hlo_ir::error::{Error, Result};
use hlo_ir::rewrite::{
    effectful_computations, instruction_has_effect, remove_unreachable_computations,
    unshare_owned_computations, CallGraph, ComputationEditor, NameGen,
};
use hlo_ir::shape::Shape;
use hlo_ir::{CompId, HloComputation, HloModule, InstrId, Op};

/// Inlines every `call` reachable from the entry.
#[derive(Clone, Debug, Default)]
pub struct CallInliner;

impl CallInliner {
    pub fn new() -> Self {
        CallInliner
    }
}

/// The computation a `call` runs (the op [`CallInliner`] inlines).
fn called_by_call(op: &Op) -> Option<CompId> {
    match op {
        Op::Call { to_apply, .. } => Some(*to_apply),
        _ => None,
    }
}

/// The fused computation of a `fusion` (the op [`FusionInliner`] inlines).
fn called_by_fusion(op: &Op) -> Option<CompId> {
    match op {
        Op::Fusion { calls, .. } => Some(*calls),
        _ => None,
    }
}

impl HloPass for CallInliner {
    fn name(&self) -> &str {
        "call-inliner"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        inline_all(module, called_by_call)
    }
}

/// Inlines every `fusion`: replaces it by the instructions of its fused
/// computation, with the fused parameters bound to the fusion's operands.
///
/// A fusion, whatever its kind (`kLoop`, `kInput`, `kOutput`, `kCustom`), means
/// exactly "run this computation on these operands"; the kind only tells a code
/// generator how XLA meant to emit it. So inlining is exact, and it is what a
/// backend without a fusion emitter needs: XLA-optimized modules are mostly
/// fusions. It is the same rewrite as [`CallInliner`]'s (layouts and control
/// edges handled the same way); fusions nested in fused computations are
/// inlined first.
#[derive(Clone, Debug, Default)]
pub struct FusionInliner;

impl FusionInliner {
    pub fn new() -> Self {
        FusionInliner
    }
}

impl HloPass for FusionInliner {
    fn name(&self) -> &str {
        "fusion-inliner"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        inline_all(module, called_by_fusion)
    }
}

/// Inlines every instruction for which `callee` names a computation, callees
/// first; returns whether anything was inlined.
fn inline_all(module: &mut HloModule, callee: fn(&Op) -> Option<CompId>) -> Result<bool> {
    hlo_ir::rewrite::check_references(module)?;
    let order = CallGraph::build(module).post_order(module)?;
    let has_call =
        |comp: &HloComputation| comp.instructions.iter().any(|i| callee(&i.op).is_some());
    if !order.iter().any(|c| has_call(module.computation(*c))) {
        return Ok(false);
    }
    let effectful = effectful_computations(module);
    let mut names = NameGen::for_instructions(module);
    for c in order {
        if !has_call(module.computation(c)) {
            continue;
        }
        // Take the caller out of the module so its callees can be read while
        // it is edited (a computation never calls itself: the call graph is
        // acyclic, or `post_order` would have failed).
        let placeholder = HloComputation {
            name: String::new(),
            instructions: Vec::new(),
            root: InstrId(0),
        };
        let mut caller = std::mem::replace(&mut module.computations[c.index()], placeholder);
        let result = inline_calls_in(&mut caller, module, &mut names, &effectful, callee);
        module.computations[c.index()] = caller;
        result?;
    }
    remove_unreachable_computations(module)?;
    // A callee inlined twice leaves two fusions calling one fused
    // computation; each gets its own again.
    unshare_owned_computations(module)?;
    Ok(true)
}

/// Inlines the `call`s of one computation whose callees contain no `call`s.
fn inline_calls_in(
    caller: &mut HloComputation,
    module: &HloModule,
    names: &mut NameGen,
    effectful: &[bool],
    callee_of: fn(&Op) -> Option<CompId>,
) -> Result<()> {
    let mut ed = ComputationEditor::new(caller, names);
    let original = ed.len();
    for i in 0..original {
        let id = InstrId(i as u32);
        let Some(to_apply) = callee_of(&ed.instr(id).op) else {
            continue;
        };
        let callee = module.computations.get(to_apply.index()).ok_or_else(|| {
            Error::invalid_argument(format!(
                "%{} calls computation #{}, which does not exist",
                ed.instr(id).name,
                to_apply.0
            ))
        })?;
        let params = callee.parameters();
        let operands = ed.instr(id).operands.clone();
        if params.len() != operands.len() {
            return Err(Error::invalid_argument(format!(
                "%{} passes {} operands to %{}, which has {} parameters",
                ed.instr(id).name,
                operands.len(),
                callee.name,
                params.len()
            )));
        }
        // The callee's instructions take the call's place in the order, so
        // effects (an `rng` draw, a host callback) keep their sequence.
        ed.set_insertion_point(Some(id));
        let mut args = Vec::with_capacity(operands.len());
        for (&arg, &param) in operands.iter().zip(&params) {
            let want = &callee.instr(param).shape;
            args.push(copy_if_layout_differs(&mut ed, id, arg, want));
        }
        let first_new = ed.len();
        let root = ed.inline_computation(callee, &args)?;
        let call_shape = ed.instr(id).shape.clone();
        let root = copy_if_layout_differs(&mut ed, id, root, &call_shape);
        // The call's own control predecessors now order the inlined effects.
        let preds = ed.instr(id).control_predecessors.clone();
        if !preds.is_empty() {
            for new in first_new..ed.len() {
                let new = InstrId(new as u32);
                if instruction_has_effect(ed.instr(new), effectful) {
                    for &p in &preds {
                        ed.add_control_predecessor(new, p);
                    }
                }
            }
        }
        ed.replace_all_uses(id, root)?;
        ed.remove(id);
        ed.set_insertion_point(None);
    }
    ed.finish(effectful)?;
    Ok(())
}

/// `value`, or a `copy` of it with shape `want` if the two differ in layout.
fn copy_if_layout_differs(
    ed: &mut ComputationEditor,
    origin: InstrId,
    value: InstrId,
    want: &Shape,
) -> InstrId {
    if super::layout::same_layouts(&ed.instr(value).shape, want) {
        return value;
    }
    let name = format!("{}.copy", ed.instr(value).name);
    ed.add_derived(origin, &name, want.clone(), Op::Copy, vec![value])
}
