//! [`StreamExecutor`]: one device, and the memory, streams and events on it.

use crate::error::Result;
use crate::memory::DeviceMemoryBase;
use crate::stream::{Event, Stream};
use std::any::Any;
use std::sync::Arc;

/// What a device is, for listings and for compilers that tune to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceDescription {
    /// Human-readable device name (`"Interpreter"`, `"Intel Xeon (2 cores)"`, `"NVIDIA H100"`).
    pub name: String,
    /// Bytes of memory the device can allocate (0 when unknown or unbounded).
    pub memory_bytes: u64,
    /// Parallel units the backend uses (CPU threads, SMs).
    pub core_count: usize,
    /// Free-form facts worth printing (`"avx512f"`, `"compute capability 9.0"`).
    pub details: Vec<String>,
}

/// Bytes and allocations live on a device, for leak checks and peak-memory reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    pub bytes_in_use: u64,
    pub peak_bytes_in_use: u64,
    pub live_allocations: u64,
}

/// One device of a platform.
///
/// # Lifecycle
/// A platform creates each executor once ([`crate::Platform::executor`]) and hands
/// out clones of the same `Arc`; it lives as long as any stream, allocation or
/// executable refers to it.
///
/// # Threading
/// Every method may be called from any thread at any time; implementations
/// synchronise internally.
///
/// # Memory
/// [`allocate`](Self::allocate) returns raw device memory owned by the caller until
/// it passes it back to [`deallocate`](Self::deallocate). Most code never calls
/// these directly: [`crate::memory::DeviceAllocation`] pairs them.
pub trait StreamExecutor: Send + Sync + Any {
    /// The id of the platform this device belongs to (its registered name).
    fn platform_id(&self) -> &'static str;

    /// The device's index within its platform.
    fn ordinal(&self) -> usize;

    fn description(&self) -> DeviceDescription;

    /// Allocates `size` bytes (64-byte aligned on host platforms). Never blocks on
    /// streams. A zero-size request may return a null handle.
    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase>;

    /// Frees memory from [`allocate`](Self::allocate).
    ///
    /// # Safety
    /// `mem` must have come from `allocate` on this executor, must not have been
    /// freed already, and no queued or running stream work may still use it.
    unsafe fn deallocate(&self, mem: DeviceMemoryBase);

    /// Creates a stream on this device. Streams are independent queues of work.
    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>>;

    /// Creates an event that streams can record and wait on.
    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>>;

    /// Blocks until all work on every stream of this device has finished.
    fn synchronize_all_activity(&self) -> Result<()>;

    /// Bytes and allocations currently live on this device.
    fn memory_usage(&self) -> MemoryUsage;

    /// For backends to recover their concrete type.
    fn as_any(&self) -> &dyn Any;
}
