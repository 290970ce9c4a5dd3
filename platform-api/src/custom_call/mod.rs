//! Custom calls: the registry of targets and XLA's calling conventions.
//!
//! (Contract fixed; implementation being written on the `customcall` branch.)

use crate::hlo::HloInstruction;
use crate::{Error, Literal, Result};

/// Runs the `custom-call` instruction `instr` on host memory for platform
/// `platform` (e.g. "Interpreter", "Host"): looks its target up in the registry
/// (statically registered, registered at run time, or loaded from a shared
/// library), lays the operands out as XLA's CPU ABI wants (tuples as pointer
/// tables), calls it with the convention `api_version` names, and returns the
/// result. A target that reports failure through `XlaCustomCallStatus` yields an
/// error carrying its message.
pub fn call_host_target(platform: &str, instr: &HloInstruction, operands: &[&Literal]) -> Result<Literal> {
    let _ = (platform, operands);
    Err(Error::unimplemented(format!(
        "custom calls are not implemented yet (target of %{})",
        instr.name
    )))
}
