//! The Host compiler's own HLO passes (interim: shared, more thorough passes will
//! live in `platform_api::passes`).
//!
//! In order:
//! 1. [`inline_calls`]: replaces every `call` by the called computation's
//!    instructions (JAX nests `call`s deeply; inlining lets buffer assignment and
//!    later fusion see across them).
//! 2. [`layout`]: layout normalization. Afterwards every value is a logical
//!    row-major array with no layout: `bitcast` (a reinterpretation of physical
//!    bytes) becomes `transpose` / `reshape` / `bitcast-convert`, and `copy`
//!    (which after normalization only ever changed a layout) is a no-op that
//!    buffer assignment treats as an alias.
//! 3. [`dce`]: removes instructions nothing uses (side effects and parameters
//!    stay).
//!
//! Each pass rewrites computations by building new instruction vectors (the IR
//! is index-based, so a rewrite is a rebuild with an id map); [`Rebuilder`] and
//! [`NameGen`] are the shared helpers.

pub mod dce;
pub mod fusion;
pub mod inline_calls;
pub mod layout;

use platform_api::hlo::{HloInstruction, InstrId};
use platform_api::{HloModule, Result};
use std::collections::HashSet;

/// Runs the Host's passes in order.
pub fn run_all(module: HloModule) -> Result<HloModule> {
    let module = inline_calls::run(module)?;
    let module = layout::run(module)?;
    fusion::run(dce::run(module)?)
}

/// Hands out instruction names unique within a module.
pub struct NameGen {
    used: HashSet<String>,
}

impl NameGen {
    pub fn for_module(module: &HloModule) -> Self {
        let used = module
            .computations
            .iter()
            .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
            .collect();
        NameGen { used }
    }

    /// `base` if unused, else `base.1`, `base.2`, ...
    pub fn fresh(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        for n in 1.. {
            let candidate = format!("{base}.{n}");
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
        unreachable!("an unbounded counter always finds a free name")
    }
}

/// Builds a computation's new instruction list.
#[derive(Default)]
pub struct Rebuilder {
    pub instructions: Vec<HloInstruction>,
}

impl Rebuilder {
    pub fn push(&mut self, instr: HloInstruction) -> InstrId {
        self.instructions.push(instr);
        InstrId(self.instructions.len() as u32 - 1)
    }
}
