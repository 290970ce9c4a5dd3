//! `host-chain`: a `dot` whose operand is a fusion of another `dot` (and of
//! nothing else computed in between) becomes one `kCustom` fusion that runs
//! a block of rows at a time ([`crate::fusion::chain`]): attention's scores,
//! softmax and weighted sum without the `[batch, M, N]` intermediates.
//!
//! Runs after the fusion pass, on every computation that runs as a sequence.
//! The new fusion keeps the second product's name and shape; its computation
//! holds the two products and the fusion between them, over parameters for
//! everything else they read. A chain is formed only when
//! [`crate::fusion::chain::analyze`] accepts it, which is what the compiler
//! checks again before running it as one.

use crate::fusion::chain;
use platform_api::hlo::rewrite::NameGen;
use platform_api::hlo::{CompId, FusionKind, HloComputation, HloInstruction, InstrId, Op};
use platform_api::passes::{DeadCodeElimination, HloPass};
use platform_api::{CompileOptions, HloModule, Result};
use std::collections::{HashMap, HashSet};

/// Forms every chain of `module`; whether anything changed.
pub fn run(module: &mut HloModule, options: &CompileOptions) -> Result<bool> {
    let mut names = NameGen::for_instructions(module);
    let mut comp_names = NameGen::for_computations(module);
    let mut changed = false;
    for cid in super::fusion_pass::sequential_computations(module) {
        // Forming a chain only replaces its second product (the first and
        // the fusion die, for DCE), so every chain found keeps its ids.
        for found in find_chains(module, cid, options) {
            form_chain(module, cid, found, &mut names, &mut comp_names);
            changed = true;
        }
    }
    if changed {
        DeadCodeElimination::new().run(module)?;
    }
    Ok(changed)
}

/// The chains `[first, fusion, second]` of computation `cid`, in order, no
/// instruction in two of them: a fusion and a first product have one user,
/// so only a product that ends one chain could start a later one.
fn find_chains(module: &HloModule, cid: CompId, options: &CompileOptions) -> Vec<[InstrId; 3]> {
    let comp = module.computation(cid);
    let mut found: Vec<[InstrId; 3]> = Vec::new();
    let users = comp.users();
    let single_use = |id: InstrId, by: InstrId| {
        users[id.index()] == [by]
            && comp.root != id
            && comp.instr(by).operands.iter().filter(|&&o| o == id).count() == 1
    };
    let plain = |i: &HloInstruction| i.control_predecessors.is_empty();
    'seconds: for second in comp.ids() {
        let d2 = comp.instr(second);
        if !matches!(d2.op, Op::Dot { .. }) || !plain(d2) {
            continue;
        }
        for &fusion in &d2.operands {
            let f = comp.instr(fusion);
            if !matches!(f.op, Op::Fusion { kind, .. } if kind != FusionKind::Custom)
                || !plain(f)
                || !single_use(fusion, second)
            {
                continue;
            }
            let firsts: Vec<InstrId> = f
                .operands
                .iter()
                .copied()
                .filter(|&o| matches!(comp.instr(o).op, Op::Dot { .. }))
                .collect();
            for first in firsts {
                // The first product may end a chain found before.
                if !plain(comp.instr(first))
                    || !single_use(first, fusion)
                    || found.iter().any(|c| c[2] == first)
                {
                    continue;
                }
                let ids = [first, fusion, second];
                let operand_of = |id: InstrId| (!ids.contains(&id)).then_some(id.index());
                if chain::analyze(module, comp, ids, &operand_of, options)
                    .is_ok_and(|a| chain::pays(&a))
                {
                    found.push(ids);
                    continue 'seconds;
                }
            }
        }
    }
    found
}

/// Replaces `second` by a `kCustom` fusion of the three instructions.
fn form_chain(
    module: &mut HloModule,
    cid: CompId,
    [first, fusion, second]: [InstrId; 3],
    names: &mut NameGen,
    comp_names: &mut NameGen,
) {
    let comp = module.computation(cid);
    let chain_ids = [first, fusion, second];
    // Everything the three read from outside, once each, in order of use.
    let mut inputs: Vec<InstrId> = Vec::new();
    let mut seen = HashSet::new();
    for id in chain_ids {
        for &o in &comp.instr(id).operands {
            if !chain_ids.contains(&o) && seen.insert(o) {
                inputs.push(o);
            }
        }
    }
    let mut inner: Vec<HloInstruction> = inputs
        .iter()
        .enumerate()
        .map(|(k, &o)| {
            HloInstruction::new(
                names.fresh(&format!("param_{k}")),
                comp.instr(o).shape.clone(),
                Op::Parameter { number: k },
                vec![],
            )
        })
        .collect();
    // Inside: the parameters in input order, then the three in order.
    let local: HashMap<InstrId, InstrId> = inputs
        .iter()
        .chain(&chain_ids)
        .enumerate()
        .map(|(k, &id)| (id, InstrId(k as u32)))
        .collect();
    for id in chain_ids {
        let mut copy = comp.instr(id).clone();
        // Every operand is an input or one of the three, by construction.
        copy.operands = copy.operands.iter().map(|o| local[o]).collect();
        if id == second {
            copy.name = names.fresh(&copy.name);
        }
        inner.push(copy);
    }
    let root = InstrId(inner.len() as u32 - 1);
    let outer_second = comp.instr(second);
    let chain = HloInstruction::new(
        outer_second.name.clone(),
        outer_second.shape.clone(),
        Op::Fusion {
            kind: FusionKind::Custom,
            calls: CompId(module.computations.len() as u32),
        },
        inputs,
    );
    module.computations.push(HloComputation {
        name: comp_names.fresh("chain_computation"),
        instructions: inner,
        root,
    });
    module.computation_mut(cid).instructions[second.index()] = chain;
}
