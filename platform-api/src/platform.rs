//! [`Platform`]: a kind of device, and the devices of that kind on this machine.

use crate::device::StreamExecutor;
use crate::error::Result;
use std::sync::Arc;

/// A kind of device ("Interpreter", "Host", "CUDA") and its devices.
///
/// # Lifecycle
/// Created once per process by the registry ([`crate::registry::platform`]) from
/// its [`crate::registry::PlatformRegistration`], and shared. Executors are created
/// on first request and cached: `executor(i)` returns the same `Arc` every time.
///
/// # Threading
/// All methods are callable from any thread.
pub trait Platform: Send + Sync {
    /// The registered name; also the key compilers and transfer managers are
    /// registered under. The registry refuses an instance whose id is not
    /// exactly its registration's name (it would run with another's pieces).
    fn id(&self) -> &'static str;

    /// Devices this platform instance exposes.
    fn device_count(&self) -> usize;

    /// The executor for device `ordinal` (an `OutOfRange` error past the count).
    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>>;

    /// Every executor, in ordinal order.
    fn executors(&self) -> Result<Vec<Arc<dyn StreamExecutor>>> {
        (0..self.device_count()).map(|i| self.executor(i)).collect()
    }
}

/// Settings a platform is created with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PlatformOptions {
    /// Devices to expose (platforms of host memory can make any number; hardware
    /// platforms expose at most what they find). `None`: the platform's default.
    pub device_count: Option<usize>,
}
