//! [`CudaEvent`]: a `cuEvent` (timing disabled) behind the `Event` contract.

use super::context::Context;
use super::{check, driver_error};
use cudarc::driver::sys::{self, CUevent, CUresult};
use platform_api::{Event, EventStatus, Result};
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A marker streams record and wait on.
///
/// # Lifecycle
/// Created by `CudaExecutor::create_event` (`cuEventCreate` with
/// `CU_EVENT_DISABLE_TIMING`), destroyed on drop. Until the first
/// `CudaStream::record_event` it is `Pending` and `synchronize` returns at
/// once (the driver would call a never-recorded event complete; the contract
/// says pending).
///
/// # Threading
/// Any thread; each call binds the device's context first.
pub struct CudaEvent {
    ctx: Arc<Context>,
    raw: CUevent,
    recorded: AtomicBool,
}

// SAFETY: a CUevent is a process-wide handle and the driver API is
// thread-safe; the context is bound before each use.
unsafe impl Send for CudaEvent {}
// SAFETY: as above.
unsafe impl Sync for CudaEvent {}

impl CudaEvent {
    /// Creates an event in `ctx`.
    pub fn new(ctx: Arc<Context>) -> Result<CudaEvent> {
        let raw = create_raw_event(&ctx)?;
        Ok(CudaEvent {
            ctx,
            raw,
            recorded: AtomicBool::new(false),
        })
    }

    /// The raw handle (valid while `self` lives).
    pub fn raw(&self) -> CUevent {
        self.raw
    }

    /// Notes that a stream recorded the event (called by the stream after a
    /// successful `cuEventRecord`).
    pub(crate) fn mark_recorded(&self) {
        self.recorded.store(true, Ordering::Release);
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }
}

/// `cuEventCreate(CU_EVENT_DISABLE_TIMING)` with `ctx` bound.
pub(crate) fn create_raw_event(ctx: &Context) -> Result<CUevent> {
    ctx.bind()?;
    let mut raw: CUevent = std::ptr::null_mut();
    let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
    // SAFETY: out-pointer to a local; the context is current.
    check("cuEventCreate", unsafe {
        sys::cuEventCreate(&mut raw, flags)
    })?;
    Ok(raw)
}

/// `cuEventDestroy` with `ctx` bound; errors are logged.
///
/// # Safety
/// `raw` came from [`create_raw_event`] in `ctx` and is destroyed once.
pub(crate) unsafe fn destroy_raw_event(ctx: &Context, raw: CUevent) {
    let done = ctx.bind().and_then(|()| {
        // SAFETY: the caller's promise.
        check("cuEventDestroy", unsafe { sys::cuEventDestroy_v2(raw) })
    });
    if let Err(e) = done {
        super::context::log_error(&e);
    }
}

impl Event for CudaEvent {
    fn status(&self) -> EventStatus {
        if !self.recorded.load(Ordering::Acquire) || self.ctx.bind().is_err() {
            return EventStatus::Pending;
        }
        // SAFETY: `raw` is a live event of the bound context.
        match unsafe { sys::cuEventQuery(self.raw) } {
            CUresult::CUDA_SUCCESS => EventStatus::Complete,
            CUresult::CUDA_ERROR_NOT_READY => EventStatus::Pending,
            _ => EventStatus::Error,
        }
    }

    fn synchronize(&self) -> Result<()> {
        if !self.recorded.load(Ordering::Acquire) {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: `raw` is a live event of the bound context.
        match unsafe { sys::cuEventSynchronize(self.raw) } {
            CUresult::CUDA_SUCCESS => Ok(()),
            code => Err(driver_error("cuEventSynchronize", code)),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        // SAFETY: created by `create_raw_event` in `ctx`; dropped once.
        unsafe { destroy_raw_event(&self.ctx, self.raw) };
    }
}
