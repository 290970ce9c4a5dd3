//! Inline streams and events.
//!
//! The interpreter has no device queue: every piece of stream work runs in the
//! call that enqueues it, on the caller's thread, which trivially keeps the
//! stream's order. What remains of stream semantics is the error contract: a
//! failure while work runs is *kept* (the enqueue call itself succeeds), work
//! enqueued after it is skipped, and [`Stream::block_host_until_done`] returns
//! the first kept error and clears it. Events complete when recorded (or fail
//! if the stream had already failed).
//!
//! Copies check that the device side of every copy lies inside a live
//! allocation of this stream's executor, so a stale or foreign
//! [`DeviceMemoryBase`] is an error, never a wild write.

use crate::executor::InterpreterExecutor;
use platform_api::{
    DeviceMemoryBase, Error, Event, EventStatus, HostCallback, Result, Stream, StreamExecutor,
};
use std::any::Any;
use std::sync::{Arc, Mutex};

/// A stream of the interpreter: runs everything inline.
pub struct InlineStream {
    executor: Arc<InterpreterExecutor>,
    /// The first error raised by work on this stream since the last
    /// `block_host_until_done`.
    error: Mutex<Option<Error>>,
}

impl InlineStream {
    pub fn new(executor: Arc<InterpreterExecutor>) -> Self {
        InlineStream {
            executor,
            error: Mutex::new(None),
        }
    }

    fn failed(&self) -> bool {
        self.error.lock().map(|e| e.is_some()).unwrap_or(true)
    }

    /// Runs `work` now unless the stream has failed; keeps its error.
    fn run(&self, work: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.failed() {
            return Ok(());
        }
        if let Err(e) = work() {
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert(e);
            }
        }
        Ok(())
    }

    fn check_device_range(&self, mem: DeviceMemoryBase, len: usize, what: &str) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        if len > mem.size {
            return Err(Error::invalid_argument(format!(
                "{what}: {len} bytes do not fit a device buffer of {} bytes",
                mem.size
            )));
        }
        if mem.is_null() || !self.executor.owns_range(mem.opaque as usize, len) {
            return Err(Error::invalid_argument(format!(
                "{what}: {:p} (+{len} bytes) is not memory of interpreter device {}",
                mem.opaque,
                self.executor.ordinal()
            )));
        }
        Ok(())
    }
}

impl Stream for InlineStream {
    fn executor(&self) -> Arc<dyn StreamExecutor> {
        self.executor.clone()
    }

    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()> {
        self.check_device_range(dst, src.len(), "host-to-device copy")?;
        self.run(|| {
            if !src.is_empty() {
                // SAFETY: the destination range was checked to lie inside a live
                // allocation of this executor, and `src` is a valid slice.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.as_ptr(), dst.opaque.cast::<u8>(), src.len())
                }
            }
            Ok(())
        })
    }

    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        self.check_device_range(src, len, "device-to-host copy")?;
        self.run(|| {
            if len > 0 {
                // SAFETY: the source range is live device (host) memory; the caller
                // guarantees `dst` is valid for `len` bytes.
                unsafe { std::ptr::copy(src.opaque.cast::<u8>(), dst, len) }
            }
            Ok(())
        })
    }

    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        self.check_device_range(dst, len, "device-to-device copy (destination)")?;
        self.check_device_range(src, len, "device-to-device copy (source)")?;
        self.run(|| {
            if len > 0 {
                // SAFETY: both ranges are live allocations of this executor.
                unsafe { std::ptr::copy(src.opaque.cast::<u8>(), dst.opaque.cast::<u8>(), len) }
            }
            Ok(())
        })
    }

    fn host_callback(&self, callback: HostCallback) -> Result<()> {
        self.run(callback)
    }

    fn record_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = event
            .as_any()
            .downcast_ref::<InlineEvent>()
            .ok_or_else(|| {
                Error::invalid_argument("an interpreter stream can only record interpreter events")
            })?;
        let status = if self.failed() {
            EventStatus::Error
        } else {
            EventStatus::Complete
        };
        event.set(status);
        Ok(())
    }

    fn wait_for_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        // Whatever stream recorded the event ran its work inline before recording,
        // so there is never anything left to wait for.
        let _ = event;
        Ok(())
    }

    fn block_host_until_done(&self) -> Result<()> {
        let taken = self
            .error
            .lock()
            .map_err(|_| Error::internal("interpreter stream error slot poisoned"))?
            .take();
        match taken {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An event of an inline stream: complete as soon as it is recorded.
#[derive(Debug)]
pub struct InlineEvent {
    status: Mutex<EventStatus>,
}

impl Default for InlineEvent {
    fn default() -> Self {
        InlineEvent {
            status: Mutex::new(EventStatus::Pending),
        }
    }
}

impl InlineEvent {
    fn set(&self, status: EventStatus) {
        if let Ok(mut s) = self.status.lock() {
            *s = status;
        }
    }
}

impl Event for InlineEvent {
    fn status(&self) -> EventStatus {
        self.status.lock().map(|s| *s).unwrap_or(EventStatus::Error)
    }

    fn synchronize(&self) -> Result<()> {
        match self.status() {
            EventStatus::Error => Err(Error::internal(
                "the stream that recorded this event failed before reaching it",
            )),
            _ => Ok(()),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
