//! Platform "CUDA" (priority 210, alias "gpu"): NVIDIA GPUs through `cudarc`.
//!
//! # Design
//! The backend is two halves that meet in a [`program::Program`]:
//!
//! * **The compiler** needs no device. [`compiler::optimize`] runs the shared
//!   pipeline and legalizes the module to the ops [`codegen`] implements;
//!   [`codegen::generate`] turns it into one CUDA C translation unit (kernels
//!   that fuse elementwise chains, broadcasts, transposes, slices, gathers and
//!   the producers of reductions and dots, element by element) and a host-side
//!   schedule of thunks over one arena. [`nvrtc`] compiles the source to PTX
//!   for a named architecture. So `hlorun compile --platform cuda --target
//!   sm_90 --emit ptx` works on a machine without a GPU, and CI compiles the
//!   whole corpus that way.
//! * **The runtime** ([`runtime`]) is the driver API through `cudarc`'s
//!   dynamic loading: executors over primary contexts, stream-ordered memory
//!   with the ledger every platform keeps, CUDA streams and events, host
//!   callbacks, pinned staging for copies, PTX modules, and custom calls with
//!   XLA's GPU ABI. [`executable::CudaExecutable`] compiles the PTX for the
//!   executor's compute capability once per device and runs the schedule
//!   through [`run::run_program`] on a [`runtime::StreamRun`].
//!
//! The schedule runner is shared with the host emulator ([`emulate`]), which
//! compiles the generated kernels as C and runs them on the CPU: that is how
//! the tests check the generated code on machines with no GPU.
//!
//! The crate builds and links with no CUDA installed. The probe loads the
//! driver only to ask it for devices, never panics, and says why the platform
//! is unavailable where it is.

pub mod codegen;
pub mod compiler;
pub mod emulate;
pub mod executable;
pub mod nvrtc;
pub mod program;
pub mod run;
pub mod runtime;

use platform_api::registry::{
    CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::GenericTransferManager;
use std::sync::Arc;

/// The platform's registered name.
pub const PLATFORM_NAME: &str = "CUDA";

/// What the driver says about this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverProbe {
    /// `libcuda.so` could not be loaded.
    NoDriver,
    /// The driver loaded but `cuInit` or the device query failed.
    InitFailed(String),
    /// The driver works and sees this many devices.
    Devices(usize),
}

/// Loads the driver if it is present and counts devices. Creates no context.
pub fn probe_driver() -> DriverProbe {
    // SAFETY: `is_culib_present` only tries to open the shared library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return DriverProbe::NoDriver;
    }
    if let Err(e) = cudarc::driver::result::init() {
        return DriverProbe::InitFailed(format!("cuInit failed: {e:?}"));
    }
    match cudarc::driver::result::device::get_count() {
        Ok(n) => DriverProbe::Devices(n.max(0) as usize),
        Err(e) => DriverProbe::InitFailed(format!("cuDeviceGetCount failed: {e:?}")),
    }
}

platform_api::inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: &["gpu"],
        priority: 210,
        probe: runtime::probe,
        create: runtime::create_platform,
    }
}
platform_api::inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: || Arc::new(executable::CudaCompiler) }
}
platform_api::inventory::submit! {
    // Device memory is reached only through stream copies, which is all the
    // generic transfer manager uses.
    TransferManagerRegistration {
        platform: PLATFORM_NAME,
        create: || Arc::new(GenericTransferManager::new(PLATFORM_NAME)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_is_complete_and_the_probe_explains_itself() {
        let listing = platform_api::registry::find_platform("gpu").unwrap();
        assert_eq!(listing.name, PLATFORM_NAME);
        let availability = runtime::probe();
        if !availability.is_available() {
            let err = platform_api::registry::platform("cuda").err().unwrap();
            assert_eq!(err.code(), platform_api::Code::FailedPrecondition);
            assert!(err.message().contains("unavailable"), "{}", err.message());
        }
        let problems = platform_api::registry::problems();
        assert!(
            !problems.iter().any(|p| p.contains(PLATFORM_NAME)),
            "{problems:?}"
        );
    }
}
