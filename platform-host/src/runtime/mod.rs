//! The Host platform's runtime: devices, memory, streams, events, the compute
//! thread pool and the rendezvous that collectives meet at.
//!
//! # Design
//! * Devices, memory, streams and events are the platform kit's
//!   (`platform_api::kit`), configured in [`executor`]: a [`HostPlatform`] owns N
//!   [`HostExecutor`]s, all in this process's memory; N is
//!   `PlatformOptions::device_count` (default 1), so replicated programs can
//!   run on one machine.
//! * Memory is plain heap memory, 64-byte aligned and zero-filled when fresh (so
//!   nothing ever reads bytes that were never written), counted per executor:
//!   bytes in use, peak, live allocations. Freed large blocks are kept for reuse
//!   (the kit's block cache): repeated executions do not pay page faults.
//! * A [`HostStream`] is a worker thread with an ordered queue. Every copy, host
//!   callback, event marker and execution is a work item run in order on that
//!   thread; enqueueing returns at once. The first error a work item reports is
//!   kept, later items are skipped, and `block_host_until_done` returns and clears
//!   it.
//! * Kernels share one process-wide compute pool ([`pool`]) sized to the machine's
//!   cores; stream threads only orchestrate.
//! * Collectives of executions that share a `run_id` meet at a [`rendezvous`].

pub mod executor;
pub mod platform;
pub mod pool;
pub mod rendezvous;
pub mod transfer;

pub use executor::HostExecutor;
pub use platform::HostPlatform;
pub use platform_api::kit::{HostEvent, HostStream};
pub use transfer::HostTransferManager;
