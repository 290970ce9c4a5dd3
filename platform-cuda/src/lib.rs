//! Platform "CUDA" (priority 210, alias "gpu").
//!
//! # Where this crate stands
//! The CUDA backend is planned (executors over CUDA contexts, real streams and
//! events, kernels generated from HLO and compiled with NVRTC, cuBLAS for dots)
//! but not written yet. What exists is the part every machine needs: the
//! registration and an honest probe. The driver is loaded at run time through
//! `cudarc`'s dynamic loading, so this crate builds and links on machines with no
//! CUDA toolkit and no driver; the probe checks `is_culib_present()` before
//! touching the driver and never panics.
//!
//! Until the executors and compiler exist the probe reports the platform as
//! *unavailable* even where a driver and devices are present (saying so), so that
//! it never becomes the default platform and fails later. No compiler or transfer
//! manager is registered, which the registry reports by name if anyone asks.

use platform_api::registry::{Availability, PlatformRegistration};
use platform_api::{Error, Platform, PlatformOptions, Result};
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

fn probe() -> Availability {
    Availability::Unavailable(match probe_driver() {
        DriverProbe::NoDriver => {
            "libcuda.so not found (no NVIDIA driver on this machine)".to_string()
        }
        DriverProbe::InitFailed(why) => why,
        DriverProbe::Devices(0) => "the NVIDIA driver reports no devices".to_string(),
        DriverProbe::Devices(n) => {
            format!("driver found with {n} device(s), but the CUDA backend's executors and compiler are not implemented yet")
        }
    })
}

fn create(_options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    Err(Error::unimplemented(
        "the CUDA platform's executors are not implemented yet",
    ))
}

platform_api::inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: &["gpu"],
        priority: 210,
        probe,
        create,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_never_panics_and_reports_unavailable() {
        let availability = probe();
        assert!(!availability.is_available());
        let listing = platform_api::registry::find_platform("gpu").unwrap();
        assert_eq!(listing.name, PLATFORM_NAME);
        let err = platform_api::registry::platform("cuda").err().unwrap();
        assert_eq!(err.code(), platform_api::Code::FailedPrecondition);
        assert!(err.message().contains("unavailable"), "{}", err.message());
    }
}

pub mod program;
pub mod run;
pub mod runtime;
