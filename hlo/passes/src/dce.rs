//! Dead-code elimination: instructions and computations nothing needs.
//!
//! An instruction is needed if the computation's root depends on it, if it has
//! an effect (its op has a side effect, or it calls a computation containing one:
//! a `while` whose body runs an `outfeed` stays even if its result is unused), if
//! a needed instruction names it as a control predecessor, or if it is a
//! parameter (removing one would change the computation's signature). A
//! computation is needed if the entry reaches it through calls. Everything else is
//! removed; nothing that is removed could have changed a result.

use super::HloPass;
use hlo_ir::error::Result;
use hlo_ir::rewrite::{
    effectful_computations, remove_dead_instructions, remove_unreachable_computations,
};
use hlo_ir::HloModule;

/// Removes unused instructions and unreachable computations.
#[derive(Clone, Debug, Default)]
pub struct DeadCodeElimination;

impl DeadCodeElimination {
    pub fn new() -> Self {
        DeadCodeElimination
    }
}

impl HloPass for DeadCodeElimination {
    fn name(&self) -> &str {
        "dce"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let mut changed = remove_unreachable_computations(module)? > 0;
        let effectful = effectful_computations(module);
        for comp in &mut module.computations {
            changed |= remove_dead_instructions(comp, &effectful)?;
        }
        // Removing an instruction may have been the last call of a computation.
        changed |= remove_unreachable_computations(module)? > 0;
        Ok(changed)
    }
}
