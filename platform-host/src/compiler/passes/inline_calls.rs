//! Inlines every `call`: the callee's instructions are copied into the caller
//! (fresh names, operands remapped, its parameters replaced by the call's
//! operands) and the call's users use the copy of the callee's root.
//!
//! Computations are processed callees first, so a callee's own calls are already
//! gone when it is copied. Callees stay in the module (other instructions may
//! still name them); dead ones are harmless.

use super::{NameGen, Rebuilder};
use platform_api::hlo::{CompId, HloComputation, InstrId, Op};
use platform_api::{Error, HloModule, Result};

pub fn run(mut module: HloModule) -> Result<HloModule> {
    let mut names = NameGen::for_module(&module);
    for comp_id in module.reachable_post_order() {
        let has_call = module
            .computation(comp_id)
            .instructions
            .iter()
            .any(|i| matches!(i.op, Op::Call { .. }));
        if !has_call {
            continue;
        }
        let rebuilt = inline_in(&module, comp_id, &mut names)?;
        *module.computation_mut(comp_id) = rebuilt;
    }
    Ok(module)
}

fn inline_in(module: &HloModule, comp_id: CompId, names: &mut NameGen) -> Result<HloComputation> {
    let comp = module.computation(comp_id);
    let mut out = Rebuilder::default();
    let mut map: Vec<InstrId> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let remap = |id: &InstrId| map[id.index()];
        if let Op::Call { to_apply } = instr.op {
            let operands: Vec<InstrId> = instr.operands.iter().map(remap).collect();
            let callee = module
                .computations
                .get(to_apply.index())
                .ok_or_else(|| Error::invalid_argument(format!("%{} calls a missing computation", instr.name)))?;
            let root = copy_body(callee, &operands, &mut out, names, &instr.name)?;
            map.push(root);
        } else {
            let mut copy = instr.clone();
            copy.operands = instr.operands.iter().map(remap).collect();
            copy.control_predecessors = instr.control_predecessors.iter().map(remap).collect();
            map.push(out.push(copy));
        }
    }
    Ok(HloComputation {
        name: comp.name.clone(),
        root: map[comp.root.index()],
        instructions: out.instructions,
    })
}

/// Copies `callee`'s instructions into `out`, its parameters bound to
/// `arguments`; returns the id of the copied root.
fn copy_body(
    callee: &HloComputation,
    arguments: &[InstrId],
    out: &mut Rebuilder,
    names: &mut NameGen,
    call_name: &str,
) -> Result<InstrId> {
    let mut map: Vec<InstrId> = Vec::with_capacity(callee.instructions.len());
    for instr in &callee.instructions {
        let new_id = match instr.op {
            Op::Parameter { number } => *arguments.get(number).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "%{call_name} passes {} operands to {}, which reads parameter {number}",
                    arguments.len(),
                    callee.name
                ))
            })?,
            Op::Call { .. } => {
                return Err(Error::internal(format!(
                    "{} still contains a call after its callees were inlined",
                    callee.name
                )))
            }
            _ => {
                let mut copy = instr.clone();
                copy.name = names.fresh(&instr.name);
                copy.operands = instr.operands.iter().map(|o| map[o.index()]).collect();
                copy.control_predecessors = instr
                    .control_predecessors
                    .iter()
                    .map(|o| map[o.index()])
                    .collect();
                out.push(copy)
            }
        };
        map.push(new_id);
    }
    Ok(map[callee.root.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_disappear_and_results_are_wired() {
        let text = r#"
HloModule m
inner {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}
outer {
  x = f32[2] parameter(0)
  c = f32[2] call(x), to_apply=inner
  ROOT s = f32[2] add(c, x)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] call(p), to_apply=outer
}
"#;
        let m = run(HloModule::parse(text).unwrap()).unwrap();
        let entry = m.entry();
        assert!(entry
            .instructions
            .iter()
            .all(|i| !matches!(i.op, Op::Call { .. })));
        let root = entry.root_instr();
        assert_eq!(root.opcode().name(), "add");
        let neg = entry.instr(root.operands[0]);
        assert_eq!(neg.opcode().name(), "negate");
        assert_eq!(entry.instr(neg.operands[0]).name, "p");
        assert_eq!(entry.instr(root.operands[1]).name, "p");
    }
}
