//! [`Backend`]: one platform with everything needed to compile for it and run on it.
//!
//! A backend is what a user picks by name ("interpreter", "cpu", "CUDA"). Picking
//! one means resolving, through [`platform_api::registry`], the platform instance,
//! its executors (one per device), and the compiler, transfer manager and
//! computation placer registered under the platform's id. Nothing here names a
//! backend type: the registry is the only way in, so a backend crate that links
//! is a backend that works.
//!
//! Resolution happens once, in [`Backend::new`], so that missing pieces (a
//! platform whose crate registered no compiler, say) fail there, all named in
//! the registry's one message, rather than halfway through a run.

use platform_api::registry;
use platform_api::{
    Compiler, ComputationPlacer, Error, Platform, PlatformOptions, Result, StreamExecutor,
    TransferManager,
};
use std::sync::Arc;

/// The environment variable naming the platform to use when none is given.
pub const PLATFORM_ENV_VAR: &str = "HLORUN_PLATFORM";

/// The canonical name of the platform `name` refers to.
///
/// `name` may be any registered name or alias, in any case. With `None`, the
/// platform named by the `HLORUN_PLATFORM` environment variable is used if it is
/// set (and not empty), else the highest-priority available platform.
pub fn resolve_platform_name(name: Option<&str>) -> Result<&'static str> {
    let from_env = std::env::var(PLATFORM_ENV_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty());
    match name.map(str::to_string).or(from_env) {
        Some(wanted) => Ok(registry::find_platform(wanted.trim())?.name),
        None => registry::default_platform_name(),
    }
}

/// A platform with its executors, compiler, transfer manager and placer resolved.
///
/// Cheap to share (`Arc<Backend>`); every part is itself thread-safe.
pub struct Backend {
    platform: Arc<dyn Platform>,
    executors: Vec<Arc<dyn StreamExecutor>>,
    compiler: Arc<dyn Compiler>,
    transfer_manager: Arc<dyn TransferManager>,
    placer: Arc<dyn ComputationPlacer>,
}

impl Backend {
    /// The backend for `name` (a platform name or alias, any case), or for the
    /// default platform when `None` (see [`resolve_platform_name`]). Uses the
    /// process-wide shared platform instance.
    pub fn new(name: Option<&str>) -> Result<Backend> {
        let canonical = resolve_platform_name(name)?;
        Backend::from_platform(registry::platform(canonical)?)
    }

    /// Like [`Backend::new`] but with a fresh, unshared platform instance created
    /// with `options` (for example a device count for replicated programs).
    pub fn with_options(name: Option<&str>, options: &PlatformOptions) -> Result<Backend> {
        let canonical = resolve_platform_name(name)?;
        Backend::from_platform(registry::create_platform(canonical, options)?)
    }

    /// A backend around an existing platform instance; its compiler, transfer
    /// manager and placer are looked up under the platform's id.
    pub fn from_platform(platform: Arc<dyn Platform>) -> Result<Backend> {
        let id = platform.id();
        // All pieces at once: a backend missing several learns of all of them.
        let registry::Components {
            compiler,
            transfer_manager,
            placer,
        } = registry::components(id)?;
        let executors = platform.executors()?;
        if executors.is_empty() {
            return Err(Error::failed_precondition(format!(
                "platform {id} exposes no devices"
            )));
        }
        Ok(Backend {
            platform,
            executors,
            compiler,
            transfer_manager,
            placer,
        })
    }

    /// The platform's canonical name (also its id).
    pub fn platform_name(&self) -> &'static str {
        self.platform.id()
    }

    pub fn platform(&self) -> &Arc<dyn Platform> {
        &self.platform
    }

    /// Number of devices this backend can run on.
    pub fn device_count(&self) -> usize {
        self.executors.len()
    }

    /// The executor of device `ordinal`, or an error naming the valid range.
    pub fn executor(&self, ordinal: usize) -> Result<&Arc<dyn StreamExecutor>> {
        self.executors.get(ordinal).ok_or_else(|| {
            Error::out_of_range(format!(
                "platform {} has {} device(s); device {ordinal} does not exist",
                self.platform_name(),
                self.executors.len()
            ))
        })
    }

    /// Every executor, in ordinal order.
    pub fn executors(&self) -> &[Arc<dyn StreamExecutor>] {
        &self.executors
    }

    pub fn compiler(&self) -> &Arc<dyn Compiler> {
        &self.compiler
    }

    pub fn transfer_manager(&self) -> &Arc<dyn TransferManager> {
        &self.transfer_manager
    }

    pub fn placer(&self) -> &Arc<dyn ComputationPlacer> {
        &self.placer
    }
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("platform", &self.platform_name())
            .field("devices", &self.executors.len())
            .finish()
    }
}
