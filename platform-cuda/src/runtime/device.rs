//! [`CudaExecutor`]: the `StreamExecutor` of one CUDA device.

use super::context::{log_error, Context};
use super::event::{create_raw_event, destroy_raw_event, CudaEvent};
use super::memory::Ledger;
use super::stream::{CudaStream, RawStream};
use super::{check, driver_error};
use crate::PLATFORM_NAME;
use cudarc::driver::sys::{self, CUdevice, CUdevice_attribute, CUdeviceptr, CUresult, CUstream};
use platform_api::{
    DeviceDescription, DeviceMemoryBase, Error, Event, MemoryUsage, Result, Stream, StreamExecutor,
};
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// One CUDA device: its primary context, its memory and what it is.
///
/// # Lifecycle
/// Created once per device by [`super::CudaPlatform`] and shared as an `Arc`;
/// streams, events and modules hold it (or its [`Context`]) alive.
///
/// # Memory
/// [`allocate`](StreamExecutor::allocate) takes memory from the device's
/// default memory pool (`cuMemAllocAsync` on an internal allocation stream,
/// then waits for that stream, so the memory is usable on any stream at
/// once), or with `cuMemAlloc` on devices without memory pools. A zero-byte
/// request returns [`DeviceMemoryBase::NULL`], which owns nothing, is not
/// counted, and which `deallocate` accepts.
///
/// [`deallocate`](StreamExecutor::deallocate) never blocks on device work yet
/// is safe for a buffer dropped while work that uses it is still queued (as
/// the host kit's deferred frees are): it records an event on every live
/// stream of the device, makes an internal free stream wait for them all,
/// and frees there with `cuMemFreeAsync` (without pools it waits for that
/// stream, then `cuMemFree`). If that ordering fails it falls back to
/// `cuCtxSynchronize` before freeing.
///
/// Every live allocation (these and the stream-ordered ones of
/// [`super::StreamRun`]) is in one [`Ledger`]: bytes in use, peak, count.
///
/// # Threading
/// Any thread; every method that calls the driver binds the context first.
pub struct CudaExecutor {
    ordinal: usize,
    description: DeviceDescription,
    compute_capability: (u32, u32),
    pools: bool,
    ledger: Mutex<Ledger>,
    /// The streams created on this device, for ordering frees after them.
    streams: Mutex<Vec<Weak<RawStream>>>,
    /// Internal streams for `allocate` and `deallocate`.
    alloc_stream: RawStream,
    free_stream: RawStream,
    ctx: Arc<Context>,
}

impl CudaExecutor {
    /// Opens device `ordinal`: retains its primary context, reads its
    /// description and creates the internal stream.
    ///
    /// # Safety
    /// The driver library is present and `cuInit` succeeded.
    pub unsafe fn open(ordinal: usize) -> Result<CudaExecutor> {
        // SAFETY: the caller's promise.
        let ctx = Arc::new(unsafe { Context::retain(ordinal) }?);
        ctx.bind()?;
        let dev = ctx.device();
        let attribute = |a| device_attribute(dev, a);
        let major = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let sms = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let pools = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
            .is_ok_and(|v| v != 0);
        let compute_capability = (major, minor);
        let description = DeviceDescription {
            name: device_name(dev)?,
            memory_bytes: total_memory(dev)?,
            core_count: sms as usize,
            details: vec![
                format!("compute capability {major}.{minor}"),
                format!("sm_{major}{minor}"),
            ],
        };
        Ok(CudaExecutor {
            ordinal,
            description,
            compute_capability,
            pools,
            ledger: Mutex::new(Ledger::default()),
            streams: Mutex::new(Vec::new()),
            alloc_stream: RawStream::new(&ctx)?,
            free_stream: RawStream::new(&ctx)?,
            ctx,
        })
    }

    /// (major, minor), e.g. (9, 0) for an H100.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// The device's retained primary context.
    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a stream of this device, so frees wait for its queued work.
    pub(crate) fn register_stream(&self, stream: &Arc<RawStream>) {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        streams.retain(|w| w.strong_count() > 0);
        streams.push(Arc::downgrade(stream));
    }

    fn live_streams(&self) -> Vec<Arc<RawStream>> {
        let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        streams.iter().filter_map(Weak::upgrade).collect()
    }

    /// Makes the free stream wait for everything enqueued so far on every
    /// live stream of the device.
    fn order_frees_after_streams(&self) -> Result<()> {
        for stream in self.live_streams() {
            let event = create_raw_event(&self.ctx)?;
            // SAFETY: live event and streams of the bound context; the event
            // may be destroyed once the wait is enqueued (the wait keeps the
            // state it captured).
            let ordered = check("cuEventRecord", unsafe {
                sys::cuEventRecord(event, stream.raw())
            })
            .and_then(|()| {
                // SAFETY: as above.
                check("cuStreamWaitEvent", unsafe {
                    sys::cuStreamWaitEvent(self.free_stream.raw(), event, 0)
                })
            });
            // SAFETY: created above, destroyed once.
            unsafe { destroy_raw_event(&self.ctx, event) };
            ordered?;
        }
        Ok(())
    }

    /// Allocates `bytes` (> 0) ordered on `stream` (from the default pool;
    /// `cuMemAlloc` without pools) and records it. The memory is usable by
    /// work enqueued on `stream` after this call.
    pub(crate) fn alloc_on(&self, stream: CUstream, bytes: usize) -> Result<u64> {
        self.ctx.bind()?;
        let mut ptr: CUdeviceptr = 0;
        let code = if self.pools {
            // SAFETY: out-pointer to a local; live stream of the bound context.
            unsafe { sys::cuMemAllocAsync(&mut ptr, bytes, stream) }
        } else {
            // SAFETY: out-pointer to a local; the context is bound.
            unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }
        };
        if code != CUresult::CUDA_SUCCESS {
            return Err(driver_error("cuMemAlloc", code).context(format_args!(
                "{PLATFORM_NAME} device {}: allocating {bytes} bytes",
                self.ordinal
            )));
        }
        self.ledger().record_alloc(ptr, bytes as u64);
        Ok(ptr)
    }

    /// Frees `ptr` ordered on `stream` and forgets it. Unknown addresses are
    /// logged and left alone (never passed to the driver).
    ///
    /// # Safety
    /// `ptr` came from [`alloc_on`](Self::alloc_on) (or `allocate`) on this
    /// executor; all work that uses it is ordered before this point of
    /// `stream` (enqueued earlier on it, or waited for by it), and nothing
    /// enqueued later uses it.
    pub(crate) unsafe fn free_on(&self, stream: CUstream, ptr: u64) {
        if self.ledger().record_free(ptr).is_none() {
            tracing::error!("ignoring a free of {ptr:#x}: not a live allocation of this device");
            return;
        }
        let freed = self.ctx.bind().and_then(|()| self.release(stream, ptr));
        if let Err(e) = freed {
            log_error(&e);
        }
    }

    fn release(&self, stream: CUstream, ptr: u64) -> Result<()> {
        if self.pools {
            // SAFETY: live pool allocation; the caller orders its last use.
            return check("cuMemFreeAsync", unsafe {
                sys::cuMemFreeAsync(ptr, stream)
            });
        }
        // Without pools the free is immediate: wait for `stream` first.
        // SAFETY: live stream of the bound context.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(stream)
        })?;
        // SAFETY: live `cuMemAlloc` allocation no queued work uses.
        check("cuMemFree", unsafe { sys::cuMemFree_v2(ptr) })
    }
}

fn device_attribute(dev: CUdevice, attribute: CUdevice_attribute) -> Result<u32> {
    let mut value = 0i32;
    // SAFETY: out-pointer to a local; `dev` is a valid device.
    check("cuDeviceGetAttribute", unsafe {
        sys::cuDeviceGetAttribute(&mut value, attribute, dev)
    })?;
    Ok(value.max(0) as u32)
}

fn device_name(dev: CUdevice) -> Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as i32, dev)
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

fn total_memory(dev: CUdevice) -> Result<u64> {
    let mut bytes = 0usize;
    // SAFETY: out-pointer to a local; `dev` is a valid device.
    check("cuDeviceTotalMem", unsafe {
        sys::cuDeviceTotalMem_v2(&mut bytes, dev)
    })?;
    Ok(bytes as u64)
}

impl StreamExecutor for CudaExecutor {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn description(&self) -> DeviceDescription {
        self.description.clone()
    }

    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        if size == 0 {
            return Ok(DeviceMemoryBase::NULL);
        }
        let ptr = self.alloc_on(self.alloc_stream.raw(), size)?;
        if let Err(e) = self.alloc_stream.synchronize() {
            // SAFETY: just allocated; nothing uses it.
            unsafe { self.free_on(self.alloc_stream.raw(), ptr) };
            return Err(e);
        }
        Ok(DeviceMemoryBase::new(ptr as usize as *mut _, size))
    }

    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        if mem.is_null() {
            return;
        }
        if let Err(e) = self.order_frees_after_streams() {
            log_error(&e);
            if let Err(e) = self.synchronize_all_activity() {
                log_error(&e);
            }
        }
        // SAFETY: from `allocate` (the caller's promise); the free is ordered
        // after all work queued so far on the device's streams.
        unsafe { self.free_on(self.free_stream.raw(), mem.addr()) };
    }

    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        Ok(Arc::new(CudaStream::new(self)?))
    }

    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
        Ok(Arc::new(CudaEvent::new(self.ctx.clone())?))
    }

    fn synchronize_all_activity(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the context is bound.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }

    fn memory_usage(&self) -> MemoryUsage {
        self.ledger().usage()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl std::fmt::Debug for CudaExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaExecutor")
            .field("ordinal", &self.ordinal)
            .field("description", &self.description)
            .finish()
    }
}

/// An error for a device the platform does not have.
pub(crate) fn no_such_device(ordinal: usize, count: usize) -> Error {
    Error::out_of_range(format!(
        "the {PLATFORM_NAME} platform has {count} device(s); device {ordinal} was asked for"
    ))
}
