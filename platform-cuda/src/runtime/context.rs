//! [`Context`]: one device's primary context, retained for as long as
//! anything of the device (executor, stream, event, module) lives.

use super::check;
use cudarc::driver::sys::{self, CUcontext, CUdevice};
use platform_api::Result;

/// A device's retained primary context.
///
/// # Lifecycle
/// [`Context::retain`] calls `cuDevicePrimaryCtxRetain`; dropping the last
/// owner calls `cuDevicePrimaryCtxRelease`. Every handle created in the
/// context (streams, events, modules, memory) holds an `Arc<Context>`, so the
/// context outlives them.
///
/// # Threading
/// The driver's "current context" is per thread and the service calls from
/// many threads, so every method that calls the driver first calls
/// [`Context::bind`] (`cuCtxSetCurrent`, cheap when already current).
#[derive(Debug)]
pub struct Context {
    device: CUdevice,
    raw: CUcontext,
}

// SAFETY: a CUcontext is a process-wide handle; the driver API is thread-safe
// and each thread binds the context before using it.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Context {
    /// Retains the primary context of device `ordinal`.
    ///
    /// # Safety
    /// The driver library is present and `cuInit` succeeded (the platform's
    /// probe checked both); otherwise cudarc panics loading it.
    pub unsafe fn retain(ordinal: usize) -> Result<Context> {
        let mut device: CUdevice = 0;
        // SAFETY: out-pointer to a local; the driver is loaded (caller's promise).
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut device, ordinal as i32)
        })?;
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; `device` is valid.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut raw, device)
        })?;
        Ok(Context { device, raw })
    }

    /// Makes the context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: `raw` is a retained context, valid until `self` drops.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.raw) })
    }

    /// The driver's device handle.
    pub fn device(&self) -> CUdevice {
        self.device
    }

    /// The raw context handle.
    pub fn raw(&self) -> CUcontext {
        self.raw
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: balances the retain in `Context::retain`; nothing created in
        // the context is left (each holds an `Arc<Context>`).
        let code = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
        if let Err(e) = check("cuDevicePrimaryCtxRelease", code) {
            log_error(&e);
        }
    }
}

/// Where errors in destructors go (they cannot be returned).
pub(crate) fn log_error(e: &platform_api::Error) {
    tracing::error!("platform-cuda: {e}");
}
