//! Platform "Host" (alias "cpu", priority 60): a compiler for the CPU and a
//! runtime that runs its output with all cores.
//!
//! # Structure
//! * [`runtime`]: the platform, executors (aligned host memory with
//!   accounting), streams (worker threads with ordered queues), events, the
//!   shared compute pool, the rendezvous for collectives, the transfer manager.
//! * [`compiler`]: HLO passes (the shared standard pipeline, then the Host's
//!   fusion decisions), FMA contraction as XLA CPU does it, buffer assignment
//!   by liveness, lowering to thunks.
//! * [`thunk`]: the compiled form: [`thunk::Thunk`]s over [`thunk::BufferSlice`]s
//!   of an execution's allocations, grouped in [`thunk::ThunkSequence`]s.
//! * [`elementwise_ops`]: the single op table: how every elementwise op
//!   computes, for standalone elementwise thunks, fusions and scalar programs
//!   alike (so an op gives the same bits whether fusion grouped it or not).
//! * [`kernels`]: one module per op family; each lowers an instruction to a
//!   thunk with typed inner loops. `dot` and `convolution` run on the Host's
//!   own blocked GEMM ([`kernels::gemm`]).
//! * [`fusion`]: how `fusion` instructions run: a block program (elementwise
//!   chains, broadcasts, slices, iotas, row and column reductions evaluated
//!   in cache-sized blocks on the compute pool) where supported, a nested
//!   thunk sequence otherwise; behind one interface so that generated fused
//!   loops can replace it.
//! * [`executable`]: argument checks, result allocation, enqueueing.
//! * [`runner`]: compile HLO text and run it on literals (tests, tools).
//! * [`vmath`]: multiversioned elementwise slice kernels (exact arithmetic,
//!   vectorized transcendentals) that the op table calls.
//!
//! The crate registers itself with `inventory`: linking it is enough for the
//! registry to find "Host" (or "cpu").

pub mod arg_reduce;
pub mod compiler;
pub mod elementwise_ops;
pub mod executable;
pub mod fma;
pub mod fusion;
pub mod kernels;
pub mod lowering;
pub mod runner;
pub mod runtime;
pub mod thunk;
pub mod vmath;

use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::{Compiler, Platform, PlatformOptions, Result, TransferManager};
use std::sync::Arc;

pub use compiler::HostCompiler;
pub use executable::HostExecutable;
pub use runtime::{HostExecutor, HostPlatform, HostStream, HostTransferManager};

/// The platform's registered name (and the id compilers and transfer managers
/// are registered under).
pub const PLATFORM_NAME: &str = "Host";

fn probe() -> Availability {
    Availability::Available { devices: 1 }
}

fn create(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    Ok(Arc::new(crate::runtime::platform::create(options)?))
}

fn create_compiler() -> Arc<dyn Compiler> {
    Arc::new(HostCompiler)
}

fn create_transfer_manager() -> Arc<dyn TransferManager> {
    Arc::new(HostTransferManager::new())
}

platform_api::inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: &["cpu"],
        priority: 60,
        probe,
        create,
    }
}

platform_api::inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: create_compiler }
}

platform_api::inventory::submit! {
    TransferManagerRegistration { platform: PLATFORM_NAME, create: create_transfer_manager }
}

// Conformance cases (tests/op_matrix) this platform knowingly fails, and why.
platform_api::inventory::submit! {
    platform_api::registry::ConformanceGap {
        platform: PLATFORM_NAME,
        case: "clamp_c64",
        form: None,
        reason: "clamp of c64: XLA defines no order on complex numbers, yet XLA CPU accepts \
                 it (the case records its result); no fused clamp kernel for complex",
    }
}
