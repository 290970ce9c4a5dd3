//! [`InterpreterPlatform`]: any number of interpreter devices on one host,
//! made of the platform kit: host memory with a ledger, inline streams, and
//! copies checked against the ledger (a reference backend reports a wild copy
//! instead of making it).

use platform_api::kit::{HostDeviceConfig, HostDevices};
use platform_api::{DeviceDescription, Platform, PlatformOptions, Result};
use std::sync::Arc;

/// The registered name of the platform (also its id).
pub const PLATFORM_NAME: &str = "Interpreter";

/// The interpreter platform: devices are cheap, so all are created up front.
pub type InterpreterPlatform = HostDevices;

fn describe(_ordinal: usize) -> DeviceDescription {
    DeviceDescription {
        name: "Interpreter".to_string(),
        memory_bytes: 0,
        core_count: 1,
        details: vec!["evaluates HLO one instruction at a time on host memory".to_string()],
    }
}

/// A platform with `device_count` devices (0 is an error).
pub fn new(device_count: usize) -> Result<InterpreterPlatform> {
    HostDevices::new(
        HostDeviceConfig::inline(PLATFORM_NAME, describe),
        device_count,
    )
}

/// Creates the platform as the registry does: `options.device_count`, default 1.
pub fn create(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    Ok(Arc::new(new(options.device_count.unwrap_or(1))?))
}
