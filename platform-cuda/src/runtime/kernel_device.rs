//! [`StreamRun`]: the schedule runner's [`KernelDevice`] over a CUDA stream
//! and a loaded module.

use super::custom_call::{call_gpu_target, resolve_gpu_target};
use super::driver_error;
use super::module::LoadedModule;
use super::stream::{copy_device, CudaStream};
use crate::run::KernelDevice;
use cudarc::driver::sys::{self, CUresult};
use platform_api::hlo::CustomCallApiVersion;
use platform_api::{Error, Result, Stream};
use std::ffi::c_void;
use std::sync::Arc;

/// One run of a program's schedule: everything is enqueued on `stream`, and
/// kernels are `module`'s (index = position in the kernel names it was
/// loaded with, i.e. `Program::kernels`).
///
/// Allocations are stream-ordered (`cuMemAllocAsync` / `cuMemFreeAsync` on
/// the stream, from the device's default pool) and counted in the executor's
/// ledger. `download` waits for the stream and returns (and clears) its
/// pending error. The module and stream must belong to the same device.
pub struct StreamRun<'a> {
    pub stream: &'a CudaStream,
    pub module: &'a LoadedModule,
}

impl StreamRun<'_> {
    fn check_same_device(&self) -> Result<()> {
        if Arc::ptr_eq(self.module.context(), self.stream.context()) {
            Ok(())
        } else {
            Err(Error::invalid_argument(
                "the module was loaded on another CUDA device than the stream's",
            ))
        }
    }
}

impl KernelDevice for StreamRun<'_> {
    fn alloc(&self, bytes: u64) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        let bytes = usize::try_from(bytes)
            .map_err(|_| Error::resource_exhausted(format!("cannot allocate {bytes} bytes")))?;
        self.stream
            .cuda_executor()
            .alloc_on(self.stream.raw(), bytes)
    }

    unsafe fn free(&self, ptr: u64) {
        if ptr != 0 {
            // SAFETY: the caller's promise (from `alloc`; nothing later uses it).
            unsafe { self.stream.cuda_executor().free_on(self.stream.raw(), ptr) };
        }
    }

    fn upload(&self, dst: u64, data: &[u8]) -> Result<()> {
        self.stream.upload(dst, data)
    }

    fn download(&self, src: u64, out: &mut [u8]) -> Result<()> {
        // SAFETY: `out` outlives the copy: we block until the stream is done.
        unsafe {
            self.stream
                .download_async(out.as_mut_ptr(), src, out.len())?
        };
        self.stream.block_host_until_done()
    }

    fn copy(&self, dst: u64, src: u64, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        copy_device(self.stream, dst, src, bytes as usize)
    }

    fn launch(&self, kernel: usize, grid: u32, block: u32, args: &[u64]) -> Result<()> {
        self.check_same_device()?;
        let function = self.module.function(kernel).ok_or_else(|| {
            Error::internal(format!(
                "kernel {kernel} out of range (the module has {})",
                self.module.kernel_count()
            ))
        })?;
        let mut values = args.to_vec();
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| (v as *mut u64).cast::<c_void>())
            .collect();
        self.stream.context().bind()?;
        // SAFETY: `function` lives as long as the module; `params` points to
        // one u64 per kernel parameter (each a `char*`), read by the driver
        // before it returns; the stream is live.
        let code = unsafe {
            sys::cuLaunchKernel(
                function,
                grid.max(1),
                1,
                1,
                block.max(1),
                1,
                1,
                0,
                self.stream.raw(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if code != CUresult::CUDA_SUCCESS {
            let name = self.module.kernel_name(kernel).unwrap_or("?");
            return Err(
                driver_error("cuLaunchKernel", code).context(format_args!("kernel \"{name}\""))
            );
        }
        Ok(())
    }

    fn custom_call(
        &self,
        target: &str,
        api_version: CustomCallApiVersion,
        buffers: &[u64],
        opaque: &[u8],
    ) -> Result<()> {
        let callee = resolve_gpu_target(target, api_version)?;
        self.stream.context().bind()?;
        // SAFETY: live stream with its context current; the buffers are the
        // schedule's device pointers for this call.
        unsafe { call_gpu_target(target, callee, self.stream.raw().cast(), buffers, opaque) }
    }
}
