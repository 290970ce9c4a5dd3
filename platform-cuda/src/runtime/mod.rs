//! The runtime half of the CUDA platform: devices, memory, streams, events,
//! loaded modules and custom calls, over the raw CUDA driver API (cudarc's
//! `driver::sys` / `driver::result`).
//!
//! * [`context`]: [`Context`], a device's retained primary context, made
//!   current on the calling thread before every driver call.
//! * [`device`]: [`CudaExecutor`], the `StreamExecutor` of one device.
//! * [`memory`]: [`Ledger`], the executor's allocation accounting (pure), and
//!   pinned host staging buffers.
//! * [`stream`]: [`CudaStream`], a CUDA stream behind the `Stream` contract.
//! * [`event`]: [`CudaEvent`], a `cuEvent` without timing.
//! * [`platform`]: [`CudaPlatform`], [`create_platform`], [`probe`].
//! * [`module`]: [`LoadedModule`], a PTX module and its kernels.
//! * [`custom_call`]: calling custom-call targets with XLA's GPU ABI.
//! * [`kernel_device`]: [`StreamRun`], the schedule runner's `KernelDevice`
//!   over a stream and a module.
//!
//! # Driver presence
//! cudarc loads `libcuda` lazily and panics if it is missing. Nothing here
//! calls the driver before [`probe`] or [`create_platform`] checked
//! `is_culib_present()`, and every other value can only be obtained from a
//! platform, so no path reaches a panicking load.
//!
//! # Errors
//! A failed driver call becomes an [`Error`] naming the call and the CUDA error
//! (`cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS`); out-of-memory is
//! `ResourceExhausted`, everything else `Internal`.

pub mod context;
pub mod custom_call;
pub mod device;
pub mod event;
pub mod kernel_device;
pub mod memory;
pub mod module;
pub mod platform;
pub mod stream;

#[cfg(test)]
mod gpu_tests;

pub use context::Context;
pub use device::CudaExecutor;
pub use event::CudaEvent;
pub use kernel_device::StreamRun;
pub use memory::Ledger;
pub use module::LoadedModule;
pub use platform::{create_platform, probe, CudaPlatform};
pub use stream::CudaStream;

use cudarc::driver::sys::{self, CUresult};
use platform_api::{Error, Result};

/// The error for driver call `call` that returned `code`. Pure: names the
/// error from the enum, so it needs no driver (usable in tests).
pub fn driver_error(call: &str, code: CUresult) -> Error {
    let message = format!("{call}: {code:?}");
    match code {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::resource_exhausted(message),
        _ => Error::internal(message),
    }
}

/// `Ok` for `CUDA_SUCCESS`, else [`driver_error`].
pub fn check(call: &str, code: CUresult) -> Result<()> {
    match code {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        other => Err(driver_error(call, other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::Code;

    #[test]
    fn driver_errors_name_the_call_and_the_cuda_error() {
        let e = driver_error("cuStreamSynchronize", CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(e.code(), Code::Internal);
        assert!(
            e.message().contains("cuStreamSynchronize"),
            "{}",
            e.message()
        );
        assert!(
            e.message().contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
            "{}",
            e.message()
        );
        let oom = driver_error("cuMemAllocAsync", CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(oom.code(), Code::ResourceExhausted);
        assert!(check("x", CUresult::CUDA_SUCCESS).is_ok());
    }
}
