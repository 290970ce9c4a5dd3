//! `service`: choosing a backend by name, compiling once, running many times.
//!
//! This crate is what people running HLO programs use. It names no backend
//! type: a [`Backend`] is resolved by name through [`platform_api::registry`]
//! (platform, executors, compiler, transfer manager, placer), and the backend
//! crates are only *linked* here, one cargo feature each, so their `inventory`
//! registrations exist in the final binary.
//!
//! * [`backend`] — [`Backend`]: a platform with its pieces resolved.
//! * [`cache`] — the compile cache, keyed by a fingerprint of the module's
//!   canonical text, the platform and the compile options.
//! * [`client`] — [`LocalClient`]: compile (cached), run on host values, on
//!   device-resident buffers, or on several replicas at once; thread-safe.
//! * [`async_client`] — [`AsyncClient`]: the same for Tokio, never blocking the
//!   runtime's workers.
//! * [`process`] — process-wide allocator settings for repeated runs.
//! * [`profile`] — per-execution spans written as a Chrome trace.
//! * [`random`] — seeded random arguments and bench spec files.
//! * [`sharded`] — partitioned (SPMD) programs on global arrays: arguments cut
//!   by their parameters' shardings, results assembled by theirs.
//! * [`multiprocess`] — a launch spread over processes, several devices
//!   each: which process runs which device, and the collectives transport
//!   that meets local devices in memory and other processes over a link
//!   (MPI, the `mpi` module behind the feature of that name).
//! * [`compare`] — result-against-reference comparison, as the conformance
//!   corpus defines it.
//! * [`conformance`] — the conformance corpus on a platform by name: a status
//!   per case and form (pass, unsupported ops, first wrong element, error
//!   code), with the gaps each backend registers for itself.
//!
//! * [`cli`] — the `hlorun` command line over all of it, as a library function
//!   so a backend crate can ship `hlorun` with its own platform linked
//!   (`src/bin/hlorun.rs` is that function with the in-tree backends).

// Linking a backend crate is what registers it (see the module docs).
#[cfg(feature = "example")]
use example_backend as _;
#[cfg(feature = "cuda")]
use platform_cuda as _;
#[cfg(feature = "host")]
use platform_host as _;
#[cfg(feature = "interpreter")]
use platform_interpreter as _;
// XLA CPU's LAPACK custom-call targets, registered for Interpreter and Host.
#[cfg(feature = "lapack")]
use xla_lapack as _;

pub mod async_client;
pub mod backend;
pub mod cache;
pub mod cli;
pub mod client;
pub mod compare;
pub mod conformance;
pub mod graph;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod multiprocess;
pub mod process;
pub mod profile;
pub mod program;
pub mod random;
pub mod sharded;
pub mod text;
pub mod watch;

pub use async_client::AsyncClient;
pub use backend::{resolve_platform_name, Backend, PLATFORM_ENV_VAR};
pub use cache::Fingerprint;
pub use client::{
    BufferExecution, Compiled, DeviceBuffer, ExecuteOptions, Execution, LoadedExecutable,
    LocalClient, Parameter,
};
pub use compare::{
    compare_by_scale, compare_by_tolerance, compare_results, compare_scaled, shadow_reference,
    ComparisonReport, LeafComparison, ScaleRule, ScaledComparison, Tolerance,
};
