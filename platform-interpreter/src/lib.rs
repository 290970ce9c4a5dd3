//! Platform "Interpreter": the reference evaluator behind the platform contracts.
//!
//! This is what XLA's interpreter platform is: a thin layer that lets the
//! service run the reference evaluator (`hlo-evaluator`, re-exported as
//! `platform_api::evaluator`) like any other backend, so a program's numbers on
//! a real backend can be checked against it by platform name. Everything that
//! computes lives in the evaluator; this crate holds only what a platform is:
//! * [`platform`]: the platform, with any number of devices, made of the
//!   platform kit (`platform_api::kit`: host memory with a ledger, inline
//!   streams and events);
//! * [`compiler`]: the verifier and the evaluation plan, no number-changing pass;
//! * [`executable`]: the evaluator as the kit's `LiteralProgram` (the kit checks
//!   arguments and moves buffers), and the hooks through which the evaluator
//!   reaches this platform's custom calls and the run's profile.
//!
//! Linking this crate registers the platform, its compiler and its transfer
//! manager with `platform_api`'s registries.

pub mod compiler;
pub mod executable;
pub mod platform;

pub use compiler::InterpreterCompiler;
pub use executable::{InterpreterExecutable, InterpreterProgram};
pub use platform::{InterpreterPlatform, PLATFORM_NAME};

use platform_api::{
    inventory, Availability, Compiler, CompilerRegistration, GenericTransferManager,
    PlatformRegistration, TransferManager, TransferManagerRegistration,
};
use std::sync::Arc;

fn probe() -> Availability {
    Availability::Available { devices: 1 }
}

fn create_compiler() -> Arc<dyn Compiler> {
    Arc::new(InterpreterCompiler)
}

fn create_transfer_manager() -> Arc<dyn TransferManager> {
    Arc::new(GenericTransferManager::new(PLATFORM_NAME))
}

inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: &[],
        priority: 40,
        probe,
        create: platform::create,
    }
}

inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: create_compiler }
}

inventory::submit! {
    TransferManagerRegistration { platform: PLATFORM_NAME, create: create_transfer_manager }
}

// Conformance cases (tests/op_matrix) this platform knowingly fails, and why.
inventory::submit! {
    platform_api::registry::ConformanceGap {
        platform: PLATFORM_NAME,
        case: "clamp_c64",
        form: None,
        reason: "clamp of c64: XLA defines no order on complex numbers, yet XLA CPU accepts \
                 it (the case's values are clamped by their real part, a NaN one going to the \
                 upper bound); the interpreter refuses it rather than copy an unspecified order",
    }
}
