//! [`InterpreterPlatform`]: any number of interpreter devices on one host.

use crate::executor::InterpreterExecutor;
use platform_api::{Error, Platform, PlatformOptions, Result, StreamExecutor};
use std::sync::Arc;

/// The registered name of the platform (also its id).
pub const PLATFORM_NAME: &str = "Interpreter";

/// The interpreter platform. Devices are cheap (host memory and a ledger), so
/// they are all created up front.
pub struct InterpreterPlatform {
    executors: Vec<Arc<InterpreterExecutor>>,
}

impl InterpreterPlatform {
    /// A platform with `device_count` devices.
    pub fn new(device_count: usize) -> Result<Self> {
        if device_count == 0 {
            return Err(Error::invalid_argument(
                "the interpreter platform needs at least one device",
            ));
        }
        Ok(InterpreterPlatform {
            executors: (0..device_count)
                .map(|i| Arc::new(InterpreterExecutor::new(PLATFORM_NAME, i)))
                .collect(),
        })
    }

    /// Creates the platform as the registry does: `options.device_count`, default 1.
    pub fn create(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
        Ok(Arc::new(InterpreterPlatform::new(
            options.device_count.unwrap_or(1),
        )?))
    }
}

impl Platform for InterpreterPlatform {
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
                    "interpreter device {ordinal} does not exist; this platform has {} device(s)",
                    self.executors.len()
                ))
            })
    }
}
