//! Floating-point contraction, as XLA CPU's code generator does it.
//!
//! XLA CPU lets LLVM fuse a `multiply` into the `add`/`subtract` that is its
//! only use (one rounding instead of two). Programs that amplify rounding (the
//! conformance case `fori_loop`) only agree with XLA, and with the interpreter's
//! default `fp_contract=xla`, when the Host does the same. The rule deciding
//! which pairs contract is shared: [`contraction_candidate`].
//!
//! The rewrite replaces each contracting add/subtract by the internal custom
//! call of [`crate::fma`] (the multiply's two operands and the add's other
//! operand; how they combine in its `backend_config`); the multiply is left
//! without uses and dead-code elimination removes it. `fp_contract=off` (a
//! compile debug option) turns the rewrite off.

use crate::fma;
use platform_api::hlo::InstrId;
use platform_api::semantics::contraction::contraction_candidate;
use platform_api::{CompileOptions, HloModule, Result};

/// Whether contraction is on for these options (default: yes, like XLA CPU).
pub fn enabled(options: &CompileOptions) -> Result<bool> {
    platform_api::semantics::contraction::fp_contract_option(options.debug_option("fp_contract"))
}

/// Rewrites every contracting add/subtract of every computation.
#[allow(clippy::needless_range_loop)] // indices cross several per-instruction tables
pub fn run(module: &mut HloModule) -> Result<bool> {
    let mut changed = false;
    for comp in &mut module.computations {
        let n = comp.instructions.len();
        // Live uses only: dead instructions do not keep a multiply shared.
        let mut live = vec![false; n];
        if comp.root.index() < n {
            live[comp.root.index()] = true;
        }
        for i in (0..n).rev() {
            let instr = &comp.instructions[i];
            if instr.op.has_side_effect() {
                live[i] = true;
            }
            if live[i] {
                for o in &instr.operands {
                    if let Some(l) = live.get_mut(o.index()) {
                        *l = true;
                    }
                }
            }
        }
        let mut uses = vec![0u32; n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            if live[i] {
                for o in &instr.operands {
                    if let Some(u) = uses.get_mut(o.index()) {
                        *u += 1;
                    }
                }
            }
        }
        let mut taken = vec![false; n];
        for i in 0..n {
            if !live[i] {
                continue;
            }
            let Some((k, how)) = contraction_candidate(comp, InstrId(i as u32), &uses) else {
                continue;
            };
            let m = comp.instructions[i].operands[k];
            if std::mem::replace(&mut taken[m.index()], true) {
                continue;
            }
            let (a, b) = (
                comp.instructions[m.index()].operands[0],
                comp.instructions[m.index()].operands[1],
            );
            let c = comp.instructions[i].operands[1 - k];
            fma::rewrite_as_fused_multiply_add(&mut comp.instructions[i], how, [a, b, c]);
            changed = true;
        }
    }
    Ok(changed)
}
