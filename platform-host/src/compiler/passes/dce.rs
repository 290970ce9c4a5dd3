//! Dead-code elimination: drops every instruction of a computation that neither
//! the root, a side-effecting instruction, nor a control successor of a kept
//! instruction needs. Parameters always stay (their numbers are the
//! computation's signature).

use platform_api::hlo::{HloComputation, InstrId, Op};
use platform_api::{HloModule, Result};

pub fn run(mut module: HloModule) -> Result<HloModule> {
    for comp in &mut module.computations {
        remove_dead(comp);
    }
    Ok(module)
}

fn remove_dead(comp: &mut HloComputation) {
    let n = comp.instructions.len();
    let mut live = vec![false; n];
    let mut stack = vec![comp.root];
    for (i, instr) in comp.instructions.iter().enumerate() {
        if instr.op.has_side_effect() || matches!(instr.op, Op::Parameter { .. }) {
            stack.push(InstrId(i as u32));
        }
    }
    while let Some(id) = stack.pop() {
        let Some(flag) = live.get_mut(id.index()) else {
            continue;
        };
        if *flag {
            continue;
        }
        *flag = true;
        let instr = &comp.instructions[id.index()];
        stack.extend(instr.operands.iter().copied());
        stack.extend(instr.control_predecessors.iter().copied());
    }
    if live.iter().all(|&l| l) {
        return;
    }
    let mut map = vec![None; n];
    let mut kept = Vec::with_capacity(n);
    for (i, instr) in std::mem::take(&mut comp.instructions).into_iter().enumerate() {
        if live[i] {
            map[i] = Some(InstrId(kept.len() as u32));
            kept.push(instr);
        }
    }
    for instr in &mut kept {
        // Operands of a live instruction are live, so every lookup succeeds.
        instr.operands = instr.operands.iter().filter_map(|o| map[o.index()]).collect();
        instr.control_predecessors = instr
            .control_predecessors
            .iter()
            .filter_map(|o| map[o.index()])
            .collect();
    }
    comp.root = map[comp.root.index()].unwrap_or(InstrId(0));
    comp.instructions = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_unused_keeps_parameters_and_root() {
        let text = r#"
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  dead = f32[2] negate(p)
  ROOT r = f32[2] add(p, p)
}
"#;
        let m = run(HloModule::parse(text).unwrap()).unwrap();
        let names: Vec<&str> = m.entry().instructions.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["p", "q", "r"]);
        assert_eq!(m.entry().root_instr().name, "r");
        let root = m.entry().root_instr();
        assert_eq!(root.operands, vec![InstrId(0), InstrId(0)]);
    }
}
