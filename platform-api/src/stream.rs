//! [`Stream`] and [`Event`]: ordered queues of device work and markers in them.

use crate::error::Result;
use crate::executor::StreamExecutor;
use crate::memory::DeviceMemoryBase;
use std::any::Any;
use std::sync::Arc;

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
