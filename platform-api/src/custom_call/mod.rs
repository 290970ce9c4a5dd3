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
pub fn call_host_target(
    platform: &str,
    instr: &HloInstruction,
    operands: &[&Literal],
) -> Result<Literal> {
    let _ = (platform, operands);
    Err(Error::unimplemented(format!(
        "custom calls are not implemented yet (target of %{})",
        instr.name
    )))
}

/// Loads a shared library whose exported symbols serve as custom-call targets
/// (found by symbol name, as XLA resolves `custom_call_target`), for every
/// platform that runs host code. Errors name the file and why it is unusable.
pub fn load_library(path: &std::path::Path) -> Result<()> {
    Err(Error::unimplemented(format!(
        "loading custom-call libraries is not implemented yet ({})",
        path.display()
    )))
}

/// Compile-time check of a `custom-call` instruction for `platform`: the target
/// exists and was registered for the calling convention the instruction's
/// `api_version` names (the error names both conventions otherwise). Compilers
/// call this from `run_backend`.
pub fn check_instruction(platform: &str, instr: &HloInstruction) -> Result<()> {
    let _ = platform;
    Err(Error::unimplemented(format!(
        "custom calls are not implemented yet (target of %{})",
        instr.name
    )))
}
