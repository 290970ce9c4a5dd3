//! Custom calls: the registry of targets and XLA's calling conventions.
//!
//! A `custom-call` instruction names a target (`custom_call_target="..."`) and a
//! calling convention (`api_version=...`). This module honours XLA's custom-call
//! guide byte for byte and adds a typed Rust API:
//!
//! * [`abi`]: the conventions as function-pointer types (CPU original,
//!   status-returning and unified; GPU original and status-returning), and the
//!   rule mapping `api_version` to one. `include/xla_custom_call.h` is the same
//!   for C, C++ and CUDA authors.
//! * [`status`]: `XlaCustomCallStatus` and the exported C functions
//!   `XlaCustomCallStatusSetSuccess` / `XlaCustomCallStatusSetFailure`.
//! * [`registry`]: targets keyed by (target name, platform name), registered
//!   statically with [`register_custom_call!`](crate::register_custom_call) or at
//!   run time with [`register_target`]; duplicates are errors.
//! * [`load_library`]: targets exported by shared libraries, found by symbol name.
//! * [`typed`] and [`attributes`]: the typed API (`API_VERSION_TYPED_FFI`):
//!   handlers get typed buffer views and attributes decoded from `backend_config`.
//! * [`HostCustomCall`]: calling a target on host memory (Interpreter, Host):
//!   operands laid out with pointer tables for tuples, the result allocated,
//!   the status checked; from literals or from raw buffers.
//! * The built-in `TopK` target XLA CPU's optimized HLO calls.
//!
//! A target is found in this order: the registry for (target, platform), then
//! the loaded libraries by symbol. [`check_instruction`] (compile time) refuses a
//! target that does not exist or was registered with another convention than the
//! instruction's `api_version` names, naming both.
//!
//! Errors: a failure a target reports through its status is `Internal` (XLA's
//! code for it) carrying the target's message; a typed handler's `Err` keeps its
//! own code; an unknown target is `NotFound`; a convention mismatch, a bad
//! library or bad attributes are `InvalidArgument`; a duplicate registration is
//! `AlreadyExists`. A failed call leaves nothing behind: the next call works.

pub mod abi;
pub mod attributes;
mod host;
mod library;
pub mod registry;
pub mod status;
mod topk;
pub mod typed;

pub use abi::{
    gpu_buffer_slots, Convention, CpuOriginalFn, CpuStatusReturningFn, CpuStatusReturningUnifiedFn,
    CuStream, DeviceKind, GpuBufferSlot, GpuOriginalFn, GpuStatusReturningFn,
};
pub use attributes::{AttrValue, Attributes, FromAttr};
pub use host::HostCustomCall;
pub use library::loaded_libraries;
pub use registry::{lookup, register_target, registered_targets, StaticRegistration, Target};
pub use status::{
    XlaCustomCallStatus, XlaCustomCallStatusSetFailure, XlaCustomCallStatusSetSuccess,
};
pub use typed::{Arg, CallFrame, Ret, TypedClosure, TypedFn};

use crate::hlo::{CustomCallApiVersion, CustomCallAttrs, HloInstruction, Op};
use crate::{Error, Literal, Result};
use std::path::PathBuf;

/// Runs the `custom-call` instruction `instr` on host memory for platform
/// `platform` (e.g. "Interpreter", "Host"): looks its target up in the registry
/// (statically registered, registered at run time, or loaded from a shared
/// library), lays the operands out as XLA's CPU ABI wants (tuples as pointer
/// tables), calls it with the convention `api_version` names, and returns the
/// result. A target that reports failure through `XlaCustomCallStatus` yields an
/// error carrying its message.
///
/// Each call resolves the target anew; a platform that runs an instruction many
/// times can [`HostCustomCall::prepare`] it once and call that.
pub fn call_host_target(
    platform: &str,
    instr: &HloInstruction,
    operands: &[&Literal],
) -> Result<Literal> {
    HostCustomCall::prepare(platform, instr)?.call(operands)
}

/// Loads a shared library whose exported symbols serve as custom-call targets
/// (found by symbol name, as XLA resolves `custom_call_target`), for every
/// platform that runs host code. Errors name the file and why it is unusable.
/// Loading a file already loaded does nothing.
pub fn load_library(path: &std::path::Path) -> Result<()> {
    library::load_library(path)
}

/// Compile-time check of a `custom-call` instruction for `platform`: the target
/// exists and was registered for the calling convention the instruction's
/// `api_version` names (the error names both conventions otherwise). Compilers
/// call this from `run_backend`. For a typed target it also decodes the
/// attributes in `backend_config`, so a malformed dictionary fails here.
pub fn check_instruction(platform: &str, instr: &HloInstruction) -> Result<()> {
    let attrs = custom_call_attrs(instr)?;
    let resolved = resolve(platform, instr)?;
    let typed = matches!(
        resolved,
        Resolved::Registered(Target::Typed(_) | Target::TypedClosure(_))
    );
    if typed && attrs.api_version == CustomCallApiVersion::TypedFfi {
        let config = instr
            .backend_config
            .as_ref()
            .map(|b| b.as_str())
            .unwrap_or("");
        Attributes::parse(config)
            .map_err(|e| e.context(format_args!("custom-call %{} backend_config", instr.name)))?;
    }
    Ok(())
}

/// Where a custom call's target was found.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// In the registry (static or run-time registration).
    Registered(Target),
    /// A symbol of a loaded library, to be called with the convention the
    /// instruction's `api_version` names.
    Symbol { address: usize, library: PathBuf },
}

/// Finds `instr`'s target for `platform` and checks its convention against the
/// instruction's `api_version` (and the platform's kind: CPU conventions on host
/// platforms, GPU ones on "CUDA"/"ROCM"). Platforms that call targets themselves
/// (the CUDA platform) start here.
pub fn resolve(platform: &str, instr: &HloInstruction) -> Result<Resolved> {
    let attrs = custom_call_attrs(instr)?;
    let device = DeviceKind::of_platform(platform);
    let wanted = Convention::for_api_version(attrs.api_version, device);
    let here = |message: String| format!("custom-call %{}: {message}", instr.name);
    let found = lookup(&attrs.target, platform)
        .map_err(|e| e.context(format_args!("custom-call %{}", instr.name)))?;
    if let Some(target) = found {
        if let Some(registered) = target.convention() {
            if registered.device().is_some_and(|d| d != device) {
                return Err(Error::invalid_argument(here(format!(
                    "target \"{}\" is registered for platform \"{platform}\" with the {} convention {}, \
                     but \"{platform}\" runs {} custom calls",
                    attrs.target,
                    if device == DeviceKind::Host { "GPU" } else { "CPU" },
                    registered,
                    if device == DeviceKind::Host { "CPU" } else { "GPU" },
                ))));
            }
            if !registered.accepts(attrs.api_version) {
                return Err(Error::invalid_argument(here(format!(
                    "target \"{}\" is registered for platform \"{platform}\" as {registered}, \
                     but the instruction's api_version={} calls it as {}",
                    attrs.target,
                    attrs.api_version,
                    wanted.signature()
                ))));
            }
        }
        return Ok(Resolved::Registered(target));
    }
    if let Some((address, library)) = library::find_symbol(&attrs.target) {
        if attrs.api_version == CustomCallApiVersion::TypedFfi {
            return Err(Error::invalid_argument(here(format!(
                "target \"{}\" is a symbol of {}, but api_version=API_VERSION_TYPED_FFI needs a typed Rust \
                 handler (register_custom_call! with Typed(...)); XLA's C FFI is not supported",
                attrs.target,
                library.display()
            ))));
        }
        return Ok(Resolved::Symbol {
            address: address as usize,
            library,
        });
    }
    let registered = registered_targets(platform);
    Err(Error::not_found(here(format!(
        "no custom-call target \"{}\" for platform \"{platform}\"; registered for {platform}: {}; {}",
        attrs.target,
        if registered.is_empty() {
            "none".to_string()
        } else {
            registered.join(", ")
        },
        library::describe_libraries()
    ))))
}

/// The custom-call attributes of `instr`, or an error if it is not a custom call.
fn custom_call_attrs(instr: &HloInstruction) -> Result<&CustomCallAttrs> {
    match &instr.op {
        Op::CustomCall(attrs) => Ok(attrs),
        _ => Err(Error::invalid_argument(format!(
            "%{} is a {}, not a custom-call",
            instr.name,
            instr.opcode()
        ))),
    }
}
