//! The device interface: a [`StreamExecutor`] (one device: its memory, streams
//! and events), the [`Stream`]s and [`Event`]s on it, and the plain
//! [`DeviceMemoryBase`] handles they pass around.
//!
//! These are defined together because they name each other: a stream knows its
//! executor, an executor creates streams and copies between memory handles.
//! Everything else in this crate that touches a device (allocations, shaped
//! buffers, transfers, executables) is built on this module and is never named
//! by it.

use crate::error::Result;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

/// A region of device memory: an address in the device's address space and a size.
/// Holds no ownership; whoever hands one out says how long it stays valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceMemoryBase {
    pub opaque: *mut c_void,
    pub size: usize,
}

// SAFETY: the handle is an address, not a borrow; synchronising access to the bytes
// it names is the job of streams and events, as on every device runtime.
unsafe impl Send for DeviceMemoryBase {}
// SAFETY: as above.
unsafe impl Sync for DeviceMemoryBase {}

impl DeviceMemoryBase {
    pub const NULL: DeviceMemoryBase = DeviceMemoryBase {
        opaque: std::ptr::null_mut(),
        size: 0,
    };
    pub fn new(opaque: *mut c_void, size: usize) -> Self {
        DeviceMemoryBase { opaque, size }
    }
    pub fn is_null(&self) -> bool {
        self.opaque.is_null()
    }
    /// The address as an integer (what an index table stores).
    pub fn addr(&self) -> u64 {
        self.opaque as usize as u64
    }
}

// ---------------------------------------------------------------------------
// The executor: one device.

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

// ---------------------------------------------------------------------------
// Streams and events.

/// Work a stream runs on the host when it reaches it in its queue.
pub type HostCallback = Box<dyn FnOnce() -> Result<()> + Send + 'static>;

/// An ordered queue of work on one device.
///
/// # Ordering
/// Work enqueued on one stream runs in enqueue order; work on different streams is
/// unordered unless joined with [`Event`]s.
///
/// # Errors
/// Enqueue methods report only what is wrong at enqueue time. A failure while the
/// work runs (a custom call that sets an error status, a device fault) is kept by
/// the stream and returned by the next [`block_host_until_done`](Self::block_host_until_done),
/// which also clears it: the stream is usable again afterwards, and work enqueued
/// after a failure is skipped until then.
///
/// # Threading
/// A stream may be shared between threads; enqueues from several threads are
/// serialised in some order.
pub trait Stream: Send + Sync + Any {
    /// The device this stream runs on.
    fn executor(&self) -> Arc<dyn StreamExecutor>;

    /// Copies host bytes to device memory. `src` is read before this call returns
    /// (implementations copy synchronously or stage the bytes), so the caller may
    /// reuse it at once. `dst.size` must be at least `src.len()`.
    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()>;

    /// Enqueues a copy of `len` bytes from device memory to host memory.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes until the stream has run the
    /// copy (after [`block_host_until_done`](Self::block_host_until_done) returns),
    /// and nothing else may access it meanwhile.
    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()>;

    /// Enqueues a device-to-device copy of `len` bytes.
    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()>;

    /// Enqueues a host function; it runs after all work enqueued before it. If it
    /// returns an error, that error becomes the stream's.
    fn host_callback(&self, callback: HostCallback) -> Result<()>;

    /// Enqueues a marker: `event` completes when the stream reaches it.
    fn record_event(&self, event: &Arc<dyn Event>) -> Result<()>;

    /// Makes later work on this stream wait until `event` has completed.
    fn wait_for_event(&self, event: &Arc<dyn Event>) -> Result<()>;

    /// Blocks the calling thread until every enqueued item has run; returns (and
    /// clears) the first error any of them reported.
    fn block_host_until_done(&self) -> Result<()>;

    /// Runs a host function after all work enqueued before it and waits for
    /// it: [`Stream::host_callback`] then [`Stream::block_host_until_done`],
    /// as the default does. A stream whose queue is empty may instead run
    /// the function on the calling thread (the caller waits either way, and
    /// handing the work to another thread and back costs more than a small
    /// program's whole run); work enqueued meanwhile from elsewhere then
    /// runs after it, as it would have.
    fn run_host_callback_and_wait(&self, callback: HostCallback) -> Result<()> {
        self.host_callback(callback)?;
        self.block_host_until_done()
    }

    /// Runs `work` on the calling thread, in order, and returns its result,
    /// when the stream can do that now: nothing queued, running or failed
    /// (the stream counts it as one item, and work enqueued meanwhile from
    /// elsewhere runs after it). `None`, with `work` not run, when it cannot
    /// (the default): the caller then enqueues owned work instead. Unlike a
    /// [`HostCallback`], `work` may borrow from the caller's stack, so a
    /// launch on an idle stream need not box its work or keep its buffers
    /// alive by reference counts. An error `work` returns is returned, not
    /// kept by the stream.
    fn run_on_caller_if_idle(&self, work: &mut dyn FnMut() -> Result<()>) -> Option<Result<()>> {
        let _ = work;
        None
    }

    /// For backends to recover their concrete type.
    fn as_any(&self) -> &dyn Any;

    /// Copies device memory to a new host vector, waiting for it (and for all
    /// earlier work on the stream).
    fn read_to_vec(&self, src: DeviceMemoryBase, len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        // SAFETY: `out` outlives the copy because we block until the stream is done
        // before returning or dropping it, and nothing else can reach it.
        unsafe { self.memcpy_device_to_host(out.as_mut_ptr(), src, len)? };
        self.block_host_until_done()?;
        Ok(out)
    }
}

/// The state of an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventStatus {
    /// Not recorded yet, or recorded and the stream has not reached it.
    Pending,
    Complete,
    /// The stream that recorded it failed before reaching it.
    Error,
}

/// A marker in a stream's queue.
///
/// # Lifecycle
/// Created by [`StreamExecutor::create_event`]; recorded by
/// [`Stream::record_event`] (recording again moves the marker); waited on by
/// streams ([`Stream::wait_for_event`]) or the host ([`Event::synchronize`]).
pub trait Event: Send + Sync + Any {
    fn status(&self) -> EventStatus;
    /// Blocks until the event completes (returns at once if it never was recorded).
    fn synchronize(&self) -> Result<()>;
    fn as_any(&self) -> &dyn Any;
}
