//! [`LoadedModule`]: a PTX module loaded into a device's context, and its
//! kernels' function handles.

use super::context::{log_error, Context};
use super::device::CudaExecutor;
use super::{check, driver_error};
use cudarc::driver::sys::{self, CUfunction, CUjit_option, CUmodule, CUresult};
use platform_api::{Error, Result};
use std::ffi::{c_void, CString};
use std::sync::Arc;

/// Bytes of JIT error log kept when loading fails.
const JIT_LOG_BYTES: usize = 16 << 10;

/// A module loaded with `cuModuleLoadDataEx` and the functions looked up in
/// it, in the order the kernel names were given.
///
/// # Lifecycle
/// Created by [`CudaExecutor::load_module`]; unloaded (`cuModuleUnload`, the
/// context bound) on drop, so it must outlive every launch of its kernels
/// that is still queued (drop it after the streams that used it are done).
///
/// # Threading
/// `Send + Sync`: the handles are process-wide and launching is thread-safe.
pub struct LoadedModule {
    ctx: Arc<Context>,
    raw: CUmodule,
    functions: Vec<(String, CUfunction)>,
}

// SAFETY: CUmodule / CUfunction are process-wide handles; the driver API is
// thread-safe and the context is bound before each use.
unsafe impl Send for LoadedModule {}
// SAFETY: as above; nothing is mutated through `&self`.
unsafe impl Sync for LoadedModule {}

impl LoadedModule {
    /// Kernel `index`'s function handle (valid while `self` lives).
    pub fn function(&self, index: usize) -> Option<CUfunction> {
        self.functions.get(index).map(|(_, f)| *f)
    }

    /// Kernel `index`'s name.
    pub fn kernel_name(&self, index: usize) -> Option<&str> {
        self.functions.get(index).map(|(n, _)| n.as_str())
    }

    /// How many kernels were looked up.
    pub fn kernel_count(&self) -> usize {
        self.functions.len()
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    fn look_up(&mut self, name: &str) -> Result<()> {
        let c_name = CString::new(name).map_err(|_| {
            Error::invalid_argument(format!("kernel name {name:?} contains a NUL byte"))
        })?;
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; live module of the bound context.
        check("cuModuleGetFunction", unsafe {
            sys::cuModuleGetFunction(&mut f, self.raw, c_name.as_ptr())
        })
        .map_err(|e| e.context(format_args!("kernel \"{name}\"")))?;
        self.functions.push((name.to_string(), f));
        Ok(())
    }
}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        let done = self.ctx.bind().and_then(|()| {
            // SAFETY: loaded once by `load_module`, unloaded once.
            check("cuModuleUnload", unsafe { sys::cuModuleUnload(self.raw) })
        });
        if let Err(e) = done {
            log_error(&e);
        }
    }
}

impl CudaExecutor {
    /// Loads `ptx` (JIT-compiled by the driver for this device) and looks up
    /// `kernel_names` in order. Errors name the driver's error and, for a
    /// failed load, carry the JIT error log.
    pub fn load_module(&self, ptx: &str, kernel_names: &[String]) -> Result<LoadedModule> {
        let image = CString::new(ptx)
            .map_err(|_| Error::invalid_argument("PTX text contains a NUL byte"))?;
        self.context().bind()?;
        let raw = load_with_log(&image)?;
        let mut module = LoadedModule {
            ctx: self.context().clone(),
            raw,
            functions: Vec::with_capacity(kernel_names.len()),
        };
        for name in kernel_names {
            module.look_up(name)?;
        }
        Ok(module)
    }
}

/// `cuModuleLoadDataEx` with an error-log buffer; the log joins the error.
/// The context must be bound.
fn load_with_log(image: &CString) -> Result<CUmodule> {
    let mut log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // The size option's value is the size itself, cast to a pointer.
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void];
    let mut raw: CUmodule = std::ptr::null_mut();
    // SAFETY: NUL-terminated image; two options with matching values; the log
    // buffer outlives the call and holds the size given.
    let code = unsafe {
        sys::cuModuleLoadDataEx(
            &mut raw,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if code == CUresult::CUDA_SUCCESS {
        return Ok(raw);
    }
    let err = driver_error("cuModuleLoadDataEx", code);
    match jit_log_text(&log) {
        Some(text) => Err(Error::new(
            err.code(),
            format!("{}; JIT error log:\n{text}", err.message()),
        )),
        None => Err(err),
    }
}

/// The NUL-terminated text at the start of `log`, if not empty.
fn jit_log_text(log: &[u8]) -> Option<String> {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jit_log_stops_at_nul_and_skips_empty() {
        assert_eq!(jit_log_text(b"\0\0"), None);
        assert_eq!(
            jit_log_text(b"ptxas error: bad\n\0junk").as_deref(),
            Some("ptxas error: bad")
        );
        assert_eq!(jit_log_text(b"no nul").as_deref(), Some("no nul"));
    }
}
