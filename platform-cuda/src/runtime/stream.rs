//! [`CudaStream`]: a CUDA stream behind the `Stream` contract, with pinned
//! staging for host copies and host callbacks through `cuLaunchHostFunc`.

use super::context::{log_error, Context};
use super::device::CudaExecutor;
use super::event::{create_raw_event, destroy_raw_event, CudaEvent};
use super::memory::PinnedBuffer;
use super::{check, driver_error};
use cudarc::driver::sys::{self, CUevent, CUresult, CUstream};
use platform_api::device::HostCallback;
use platform_api::{DeviceMemoryBase, Error, Event, Result, Stream, StreamExecutor};
use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

/// A raw `CUstream` (non-blocking) owned together with its context: the
/// stream is synchronized and destroyed on drop, with the context bound.
pub(crate) struct RawStream {
    ctx: Arc<Context>,
    raw: CUstream,
}

// SAFETY: a CUstream is a process-wide handle; the driver's stream calls are
// thread-safe and the context is bound before each use.
unsafe impl Send for RawStream {}
// SAFETY: as above.
unsafe impl Sync for RawStream {}

impl RawStream {
    /// `cuStreamCreate(CU_STREAM_NON_BLOCKING)` in `ctx`.
    pub(crate) fn new(ctx: &Arc<Context>) -> Result<RawStream> {
        ctx.bind()?;
        let mut raw: CUstream = std::ptr::null_mut();
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        // SAFETY: out-pointer to a local; the context is current.
        check("cuStreamCreate", unsafe {
            sys::cuStreamCreate(&mut raw, flags)
        })?;
        Ok(RawStream {
            ctx: ctx.clone(),
            raw,
        })
    }

    pub(crate) fn raw(&self) -> CUstream {
        self.raw
    }

    /// Binds the context and waits for the stream (`cuStreamSynchronize`).
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: `raw` is a live stream of the bound context.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(self.raw)
        })
    }
}

impl Drop for RawStream {
    fn drop(&mut self) {
        let done = self.synchronize().and_then(|()| {
            // SAFETY: `raw` is live and destroyed once; its work is done.
            check("cuStreamDestroy", unsafe {
                sys::cuStreamDestroy_v2(self.raw)
            })
        });
        if let Err(e) = done {
            log_error(&e);
        }
    }
}

/// A pinned buffer some queued copy (or host callback) still uses, and an
/// event recorded after that work: once the event completes, it may go.
struct Staged {
    ctx: Arc<Context>,
    event: CUevent,
    _buffer: PinnedBuffer,
}

// SAFETY: the event handle is process-wide; see `RawStream`.
unsafe impl Send for Staged {}

impl Staged {
    fn is_done(&self) -> bool {
        // SAFETY: `event` is a live, recorded event of `ctx` (bound by the caller).
        unsafe { sys::cuEventQuery(self.event) == CUresult::CUDA_SUCCESS }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // SAFETY: created by `create_raw_event` in `ctx`; destroyed once.
        unsafe { destroy_raw_event(&self.ctx, self.event) };
    }
}

/// The first failure of work the stream ran (host callbacks), kept until
/// `block_host_until_done` returns it.
type Failure = Arc<Mutex<Option<Error>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A CUDA stream of one device.
///
/// # Lifecycle
/// Created by `CudaExecutor::create_stream` (`cuStreamCreate`, non-blocking);
/// holds its executor (so its context) alive. On drop it waits for its work,
/// frees its staging buffers and destroys the stream.
///
/// # Copies
/// Host-to-device copies go through a fresh pinned buffer the source is copied
/// into before the call returns; device-to-host copies land in a pinned
/// buffer and a host callback moves them to the destination when the stream
/// reaches it (so the destination must stay valid until
/// `block_host_until_done`, as the contract says). Each staging buffer is kept
/// with an event recorded after its last use and freed once that event
/// completes (checked on every copy and at `block_host_until_done`). Where
/// pinned memory cannot be had, the driver's pageable copies are used (they
/// read or write the host memory before returning).
///
/// # Errors
/// A host callback's error (or panic) is kept and returned, and cleared, by
/// the next `block_host_until_done`; callbacks enqueued after it are skipped
/// until then. A device fault (`CUDA_ERROR_ILLEGAL_ADDRESS`, ...) is returned
/// by `block_host_until_done` naming the CUDA error; such errors are sticky in
/// CUDA: the device's context stays unusable, and later work fails too.
///
/// # Threading
/// Any thread; every call binds the device's context first.
pub struct CudaStream {
    executor: Arc<CudaExecutor>,
    staged: Mutex<Vec<Staged>>,
    failure: Failure,
    // Dropped after `staged`; `Drop` has synchronized the stream by then.
    // Shared only with the executor's (weak) list of streams.
    stream: Arc<RawStream>,
}

impl CudaStream {
    /// A new stream on `executor`'s device.
    pub fn new(executor: Arc<CudaExecutor>) -> Result<CudaStream> {
        let stream = Arc::new(RawStream::new(executor.context())?);
        executor.register_stream(&stream);
        Ok(CudaStream {
            executor,
            staged: Mutex::new(Vec::new()),
            failure: Arc::new(Mutex::new(None)),
            stream,
        })
    }

    /// The raw `CUstream` (valid while `self` lives), e.g. for custom calls.
    pub fn raw(&self) -> CUstream {
        self.stream.raw()
    }

    /// The device this stream runs on, typed.
    pub fn cuda_executor(&self) -> &Arc<CudaExecutor> {
        &self.executor
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        self.executor.context()
    }

    /// Frees the staging buffers whose work is done.
    fn reap(&self) {
        if self.context().bind().is_ok() {
            lock(&self.staged).retain(|s| !s.is_done());
        }
    }

    /// Keeps `buffer` until the work enqueued so far is done: records an event
    /// after it, or (if that fails) waits for the stream.
    fn keep_until_done(&self, buffer: PinnedBuffer) -> Result<()> {
        let event = create_raw_event(self.context())?;
        // SAFETY: live event and stream of the bound context.
        let recorded = check("cuEventRecord", unsafe {
            sys::cuEventRecord(event, self.raw())
        });
        let staged = Staged {
            ctx: self.context().clone(),
            event,
            _buffer: buffer,
        };
        match recorded {
            Ok(()) => {
                lock(&self.staged).push(staged);
                Ok(())
            }
            Err(e) => {
                // Dropping `staged` frees the buffer: wait for its copy first.
                let _ = self.stream.synchronize();
                Err(e)
            }
        }
    }

    /// Enqueues a copy of `src` to device address `dst`; `src` may be reused
    /// as soon as this returns.
    pub fn upload(&self, dst: u64, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.reap();
        match PinnedBuffer::new(self.context(), src.len()) {
            Ok(mut buffer) => {
                buffer.fill_from(src);
                // SAFETY: `buffer` holds `src.len()` bytes and is kept until
                // the copy is done; `dst` is device memory (caller's promise).
                check("cuMemcpyHtoDAsync", unsafe {
                    sys::cuMemcpyHtoDAsync_v2(dst, buffer.as_ptr(), src.len(), self.raw())
                })?;
                self.keep_until_done(buffer)
            }
            Err(_) => {
                self.context().bind()?;
                // SAFETY: for pageable memory the driver has read `src` before
                // returning.
                check("cuMemcpyHtoDAsync", unsafe {
                    sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), self.raw())
                })
            }
        }
    }

    /// Enqueues a copy of `len` bytes at device address `src` to `dst`.
    ///
    /// # Safety
    /// As `Stream::memcpy_device_to_host`: `dst` stays valid for `len` bytes
    /// of writes, touched by nothing else, until `block_host_until_done`.
    pub unsafe fn download_async(&self, dst: *mut u8, src: u64, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.reap();
        let Ok(buffer) = PinnedBuffer::new(self.context(), len) else {
            self.context().bind()?;
            // SAFETY: the caller's promise; pageable copies complete before
            // the driver returns.
            return check("cuMemcpyDtoHAsync", unsafe {
                sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, len, self.raw())
            });
        };
        // SAFETY: `buffer` holds `len` bytes and is kept until the callback ran.
        check("cuMemcpyDtoHAsync", unsafe {
            sys::cuMemcpyDtoHAsync_v2(buffer.as_ptr(), src, len, self.raw())
        })?;
        let (from, to) = (buffer.as_ptr() as usize, dst as usize);
        let queued = self.enqueue_callback(Box::new(move || {
            // SAFETY: the staging buffer lives until an event recorded after
            // this callback completes; `dst` is valid (caller's promise).
            unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, len) };
            Ok(())
        }));
        if let Err(e) = queued {
            // The copy into `buffer` is queued: let it finish before freeing.
            let _ = self.stream.synchronize();
            return Err(e);
        }
        self.keep_until_done(buffer)
    }

    /// Enqueues `callback` through `cuLaunchHostFunc`.
    fn enqueue_callback(&self, callback: HostCallback) -> Result<()> {
        self.context().bind()?;
        let payload = Box::into_raw(Box::new(Payload {
            callback,
            failure: self.failure.clone(),
        }));
        // SAFETY: `trampoline` takes back ownership of `payload` exactly once
        // when the stream runs it.
        let code = unsafe { sys::cuLaunchHostFunc(self.raw(), Some(trampoline), payload.cast()) };
        if code != CUresult::CUDA_SUCCESS {
            // SAFETY: not enqueued, so still ours.
            drop(unsafe { Box::from_raw(payload) });
            return Err(driver_error("cuLaunchHostFunc", code));
        }
        Ok(())
    }

    fn typed_event<'e>(&self, event: &'e Arc<dyn Event>) -> Result<&'e CudaEvent> {
        event
            .as_any()
            .downcast_ref::<CudaEvent>()
            .ok_or_else(|| Error::invalid_argument("a CUDA stream was given a non-CUDA event"))
    }
}

/// What a host callback carries through the driver.
struct Payload {
    callback: HostCallback,
    failure: Failure,
}

/// Runs a [`Payload`] on the driver's callback thread. Makes no CUDA calls
/// (the driver forbids them there); panics are caught.
unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` is the `Box<Payload>` leaked by `enqueue_callback`,
    // handed to us exactly once.
    let payload = unsafe { Box::from_raw(data.cast::<Payload>()) };
    run_payload(*payload);
}

/// Runs the callback unless the stream already failed; keeps its error.
fn run_payload(payload: Payload) {
    if lock(&payload.failure).is_some() {
        return;
    }
    let outcome = catch_unwind(AssertUnwindSafe(payload.callback))
        .unwrap_or_else(|_| Err(Error::internal("a host callback on a CUDA stream panicked")));
    if let Err(e) = outcome {
        lock(&payload.failure).get_or_insert(e);
    }
}

impl Stream for CudaStream {
    fn executor(&self) -> Arc<dyn StreamExecutor> {
        self.executor.clone()
    }

    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()> {
        if dst.size < src.len() {
            return Err(Error::invalid_argument(format!(
                "host-to-device copy of {} bytes into a {}-byte buffer",
                src.len(),
                dst.size
            )));
        }
        self.upload(dst.addr(), src)
    }

    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        if src.size < len {
            return Err(Error::invalid_argument(format!(
                "device-to-host copy of {len} bytes from a {}-byte buffer",
                src.size
            )));
        }
        // SAFETY: the caller's promise, passed on.
        unsafe { self.download_async(dst, src.addr(), len) }
    }

    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        if dst.size < len || src.size < len {
            return Err(Error::invalid_argument(format!(
                "device-to-device copy of {len} bytes between buffers of {} and {} bytes",
                src.size, dst.size
            )));
        }
        copy_device(self, dst.addr(), src.addr(), len)
    }

    fn host_callback(&self, callback: HostCallback) -> Result<()> {
        self.enqueue_callback(callback)
    }

    fn record_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = self.typed_event(event)?;
        if !Arc::ptr_eq(event.context(), self.context()) {
            return Err(Error::invalid_argument(
                "a CUDA event can only be recorded on a stream of its own device",
            ));
        }
        self.context().bind()?;
        // SAFETY: live event and stream of the bound context.
        check("cuEventRecord", unsafe {
            sys::cuEventRecord(event.raw(), self.raw())
        })?;
        event.mark_recorded();
        Ok(())
    }

    fn wait_for_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = self.typed_event(event)?;
        self.context().bind()?;
        // SAFETY: live event and stream; waits across devices are allowed.
        check("cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(self.raw(), event.raw(), 0)
        })
    }

    fn block_host_until_done(&self) -> Result<()> {
        let synced = self.stream.synchronize();
        if synced.is_ok() {
            lock(&self.staged).clear();
        } else {
            self.reap();
        }
        let failure = lock(&self.failure).take();
        synced?;
        failure.map_or(Ok(()), Err)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Enqueues `cuMemcpyDtoDAsync` of `len` bytes on `stream`.
pub(crate) fn copy_device(stream: &CudaStream, dst: u64, src: u64, len: usize) -> Result<()> {
    stream.context().bind()?;
    // SAFETY: device addresses (the caller vouches for them); stream is live.
    check("cuMemcpyDtoDAsync", unsafe {
        sys::cuMemcpyDtoDAsync_v2(dst, src, len, stream.raw())
    })
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        // Wait before the staging buffers (a field dropped first) are freed.
        if let Err(e) = self.stream.synchronize() {
            log_error(&e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(callback: HostCallback, failure: &Failure) -> Payload {
        Payload {
            callback,
            failure: failure.clone(),
        }
    }

    #[test]
    fn callbacks_keep_the_first_error_and_skip_after_it() {
        let failure: Failure = Arc::default();
        let ran = Arc::new(Mutex::new(Vec::new()));
        let r = ran.clone();
        run_payload(payload(
            Box::new(move || {
                lock(&r).push(1);
                Ok(())
            }),
            &failure,
        ));
        run_payload(payload(
            Box::new(|| Err(Error::internal("first"))),
            &failure,
        ));
        let r = ran.clone();
        run_payload(payload(
            Box::new(move || {
                lock(&r).push(3);
                Ok(())
            }),
            &failure,
        ));
        assert_eq!(*lock(&ran), vec![1]);
        assert_eq!(lock(&failure).take().unwrap().message(), "first");
    }

    #[test]
    fn a_panicking_callback_becomes_an_error() {
        let failure: Failure = Arc::default();
        run_payload(payload(Box::new(|| panic!("boom")), &failure));
        let e = lock(&failure).take().unwrap();
        assert!(e.message().contains("panicked"), "{}", e.message());
    }
}
