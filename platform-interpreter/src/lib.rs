//! Platform "Interpreter": evaluates HLO one instruction at a time on host memory.
//!
//! This is the reference every other backend is judged by, so it is written to
//! be right first and clear second; it is fast only where that costs no clarity
//! (no copies of shared values, no quadratic loops, one copying engine for all
//! data movement).
//!
//! The crate mirrors XLA's interpreter backend:
//! * [`platform`]: the platform, with any number of devices;
//! * [`executor`]: a device — 64-byte-aligned host allocations with a ledger of
//!   live bytes;
//! * [`stream`]: streams and events that run their work inline;
//! * [`compiler`]: no number-changing passes, just planning;
//! * [`executable`]: argument checks, reading and writing device buffers;
//! * [`eval`]: the evaluator (values, control flow, collectives);
//! * [`ops`]: the operations the evaluator implements itself;
//! * [`kernels`]: the compute-heavy operations (dot, convolution, reduce, ...).
//!
//! Elementwise ops are not defined here: they come from
//! `platform_api::semantics`, the one definition all backends share.
//!
//! Linking this crate registers the platform, its compiler and its transfer
//! manager with `platform_api`'s registries.

pub mod compiler;
pub mod eval;
pub mod executable;
pub mod executor;
pub mod kernels;
pub mod ops;
pub mod platform;
pub mod stream;

pub use compiler::InterpreterCompiler;
pub use executable::InterpreterExecutable;
pub use executor::InterpreterExecutor;
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
        create: InterpreterPlatform::create,
    }
}

inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: create_compiler }
}

inventory::submit! {
    TransferManagerRegistration { platform: PLATFORM_NAME, create: create_transfer_manager }
}
