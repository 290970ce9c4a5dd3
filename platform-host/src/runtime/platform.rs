//! [`HostPlatform`]: N host devices in this process.

use super::executor::HostExecutor;
use crate::PLATFORM_NAME;
use platform_api::{Error, Platform, PlatformOptions, Result, StreamExecutor};
use std::sync::Arc;

/// The Host platform: `device_count` executors sharing this machine's memory and
/// cores.
pub struct HostPlatform {
    executors: Vec<Arc<HostExecutor>>,
}

impl HostPlatform {
    /// A platform with `options.device_count` devices (default 1; 0 is an error).
    pub fn new(options: &PlatformOptions) -> Result<Self> {
        let count = options.device_count.unwrap_or(1);
        if count == 0 {
            return Err(Error::invalid_argument(
                "the Host platform needs at least one device (device_count was 0)",
            ));
        }
        Ok(HostPlatform {
            executors: (0..count).map(|i| Arc::new(HostExecutor::new(i))).collect(),
        })
    }
}

impl Platform for HostPlatform {
    fn id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn device_count(&self) -> usize {
        self.executors.len()
    }

    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        self.executors
            .get(ordinal)
            .map(|e| e.clone() as Arc<dyn StreamExecutor>)
            .ok_or_else(|| {
                Error::out_of_range(format!(
                    "Host platform has {} device(s); device {ordinal} was asked for",
                    self.executors.len()
                ))
            })
    }
}
