//! [`CudaPlatform`]: the CUDA devices of this machine, and the probe.

use super::device::{no_such_device, CudaExecutor};
use crate::{probe_driver, DriverProbe, PLATFORM_NAME};
use platform_api::registry::Availability;
use platform_api::{Error, Platform, PlatformOptions, Result, StreamExecutor};
use std::sync::{Arc, Mutex};

/// The platform "CUDA": one [`CudaExecutor`] per device ordinal the driver
/// reports (at most `PlatformOptions::device_count`).
///
/// # Lifecycle
/// Created by [`create_platform`] after the driver was found and initialised.
/// Executors are opened on first request and cached: `executor(i)` returns
/// the same `Arc` every time (a failed open is retried on the next request).
///
/// # Threading
/// Any thread.
pub struct CudaPlatform {
    count: usize,
    executors: Mutex<Vec<Option<Arc<CudaExecutor>>>>,
}

impl CudaPlatform {
    /// Device `ordinal`, typed.
    pub fn cuda_executor(&self, ordinal: usize) -> Result<Arc<CudaExecutor>> {
        if ordinal >= self.count {
            return Err(no_such_device(ordinal, self.count));
        }
        let mut executors = self.executors.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(Some(existing)) = executors.get(ordinal) {
            return Ok(existing.clone());
        }
        // SAFETY: a `CudaPlatform` exists only after `create_platform` found the
        // driver and `cuInit` succeeded.
        let opened = Arc::new(unsafe { CudaExecutor::open(ordinal) }?);
        executors[ordinal] = Some(opened.clone());
        Ok(opened)
    }
}

impl Platform for CudaPlatform {
    fn id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn device_count(&self) -> usize {
        self.count
    }

    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        Ok(self.cuda_executor(ordinal)?)
    }
}

/// Why the driver cannot be used, or how many devices it sees.
fn devices_or_reason() -> std::result::Result<usize, String> {
    match probe_driver() {
        DriverProbe::NoDriver => {
            Err("libcuda.so not found (no NVIDIA driver on this machine)".to_string())
        }
        DriverProbe::InitFailed(why) => Err(why),
        DriverProbe::Devices(0) => Err("the NVIDIA driver reports no devices".to_string()),
        DriverProbe::Devices(n) => Ok(n),
    }
}

/// `Available { devices }` when the driver loads, `cuInit` works and it sees
/// at least one device; `Unavailable(why)` otherwise. Never panics.
pub fn probe() -> Availability {
    match devices_or_reason() {
        Ok(devices) => Availability::Available { devices },
        Err(why) => Availability::Unavailable(why),
    }
}

/// The CUDA platform over the devices the driver reports, capped by
/// `options.device_count`. `FailedPrecondition` where the driver is missing
/// or sees no device; `InvalidArgument` for a device count of 0.
pub fn create_platform(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    let found = devices_or_reason()
        .map_err(|why| Error::failed_precondition(format!("{PLATFORM_NAME}: {why}")))?;
    let count = match options.device_count {
        Some(0) => {
            return Err(Error::invalid_argument(format!(
                "the {PLATFORM_NAME} platform needs at least one device (device_count was 0)"
            )))
        }
        Some(n) => n.min(found),
        None => found,
    };
    Ok(Arc::new(CudaPlatform {
        count,
        executors: Mutex::new(vec![None; count]),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_never_panics_and_gives_a_reason_when_unavailable() {
        match probe() {
            Availability::Available { devices } => {
                assert!(devices > 0);
                println!("CUDA available with {devices} device(s)");
            }
            Availability::Unavailable(why) => {
                assert!(!why.is_empty());
                let err = create_platform(&PlatformOptions::default()).err().unwrap();
                assert_eq!(err.code(), platform_api::Code::FailedPrecondition);
                assert!(err.message().contains(&why), "{}", err.message());
            }
        }
    }
}
