//! [`HostPlatform`]: N host devices in this process (the kit's
//! [`HostDevices`] with the Host's device configuration).

use platform_api::kit::HostDevices;
use platform_api::{PlatformOptions, Result};

/// The Host platform: `device_count` executors sharing this machine's memory and
/// cores.
pub type HostPlatform = HostDevices;

/// A Host platform with `options.device_count` devices (default 1; 0 is an
/// error).
pub fn create(options: &PlatformOptions) -> Result<HostPlatform> {
    HostDevices::new(super::executor::config(), options.device_count.unwrap_or(1))
}
