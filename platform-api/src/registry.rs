//! The registries: how backends plug in without anyone naming their types.
//!
//! A backend crate submits, with `inventory::submit!`, a [`PlatformRegistration`]
//! and a factory each for its [`Compiler`], [`TransferManager`] and (optionally)
//! [`ComputationPlacer`], keyed by the platform's name. The service looks them up
//! by name at run time. Linking a backend crate is what registers it; a crate that
//! is never referenced is not linked and its submissions vanish, which is why the
//! service names each backend once (`use platform_host as _;`).
//!
//! `inventory` gives no order, so listings are sorted by priority (highest first),
//! then name. Lookups by name or alias ignore case. Duplicate names are errors,
//! reported on the first lookup.

use crate::compiler::Compiler;
use crate::error::{Error, Result};
use crate::placer::{ComputationPlacer, DefaultComputationPlacer};
use crate::platform::{Platform, PlatformOptions};
use crate::transfer::TransferManager;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Whether a platform can run here, as its probe says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// Usable, with this many devices by default.
    Available { devices: usize },
    /// Not usable on this machine, and why (`"libcuda.so not found"`).
    Unavailable(String),
}

impl Availability {
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available { .. })
    }
}

/// A platform's entry in the registry.
pub struct PlatformRegistration {
    /// Canonical name ("Interpreter", "Host", "CUDA"); also the platform id.
    pub name: &'static str,
    /// Other names it answers to ("cpu", "gpu").
    pub aliases: &'static [&'static str],
    /// Higher wins when choosing a default (CUDA 210 > Host 60 > Interpreter 40).
    pub priority: i32,
    /// Says whether the platform can run here. Must be cheap and free of side
    /// effects (no device initialisation): it runs for every listing.
    pub probe: fn() -> Availability,
    /// Creates the platform. Called only after a successful probe.
    pub create: fn(&PlatformOptions) -> Result<Arc<dyn Platform>>,
}

/// A compiler factory for one platform.
pub struct CompilerRegistration {
    pub platform: &'static str,
    pub create: fn() -> Arc<dyn Compiler>,
}

/// A transfer-manager factory for one platform.
pub struct TransferManagerRegistration {
    pub platform: &'static str,
    pub create: fn() -> Arc<dyn TransferManager>,
}

/// A computation-placer factory. An empty `platforms` list makes it the default
/// for every platform that registers none of its own.
pub struct ComputationPlacerRegistration {
    pub platforms: &'static [&'static str],
    pub create: fn() -> Arc<dyn ComputationPlacer>,
}

inventory::collect!(PlatformRegistration);
inventory::collect!(CompilerRegistration);
inventory::collect!(TransferManagerRegistration);
inventory::collect!(ComputationPlacerRegistration);

inventory::submit! {
    ComputationPlacerRegistration { platforms: &[], create: default_placer }
}

fn default_placer() -> Arc<dyn ComputationPlacer> {
    Arc::new(DefaultComputationPlacer)
}

/// Every registered platform, highest priority first, then by name. Fails if two
/// registrations share a name or alias.
pub fn registered_platforms() -> Result<Vec<&'static PlatformRegistration>> {
    let mut regs: Vec<&'static PlatformRegistration> =
        inventory::iter::<PlatformRegistration>().collect();
    regs.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(b.name)));
    let mut names: HashMap<String, &'static str> = HashMap::new();
    for r in &regs {
        let mut own: Vec<String> = std::iter::once(&r.name)
            .chain(r.aliases.iter())
            .map(|n| n.to_lowercase())
            .collect();
        own.sort();
        own.dedup();
        for n in own {
            if let Some(other) = names.insert(n.clone(), r.name) {
                return Err(Error::already_exists(format!(
                    "the name \"{n}\" is registered by both {other} and {}",
                    r.name
                )));
            }
        }
    }
    Ok(regs)
}

/// One row of a platform listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformListing {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub priority: i32,
    pub availability: Availability,
}

/// Every registered platform with its probe's answer, in registry order.
pub fn list_platforms() -> Result<Vec<PlatformListing>> {
    Ok(registered_platforms()?
        .into_iter()
        .map(|r| PlatformListing {
            name: r.name,
            aliases: r.aliases,
            priority: r.priority,
            availability: (r.probe)(),
        })
        .collect())
}

fn describe_registered() -> String {
    match list_platforms() {
        Ok(list) if list.is_empty() => "none (no backend crate is linked)".to_string(),
        Ok(list) => list
            .iter()
            .map(|p| match &p.availability {
                Availability::Available { .. } => p.name.to_string(),
                Availability::Unavailable(why) => format!("{} (unavailable: {why})", p.name),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Err(e) => e.message().to_string(),
    }
}

/// The registration answering to `name` (a name or alias, any case).
pub fn find_platform(name: &str) -> Result<&'static PlatformRegistration> {
    let wanted = name.to_lowercase();
    registered_platforms()?
        .into_iter()
        .find(|r| {
            r.name.to_lowercase() == wanted || r.aliases.iter().any(|a| a.to_lowercase() == wanted)
        })
        .ok_or_else(|| {
            Error::not_found(format!(
                "no platform named \"{name}\"; registered: {}",
                describe_registered()
            ))
        })
}

fn platform_cache() -> &'static Mutex<HashMap<&'static str, Arc<dyn Platform>>> {
    static CACHE: OnceLock<Mutex<HashMap<&'static str, Arc<dyn Platform>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The shared instance of the platform answering to `name`, created with default
/// options on first use. An unavailable platform is a `FailedPrecondition` error
/// carrying its probe's reason.
pub fn platform(name: &str) -> Result<Arc<dyn Platform>> {
    let reg = find_platform(name)?;
    let mut cache = platform_cache()
        .lock()
        .map_err(|_| Error::internal("platform cache lock poisoned"))?;
    if let Some(p) = cache.get(reg.name) {
        return Ok(p.clone());
    }
    let p = create_from(reg, &PlatformOptions::default())?;
    cache.insert(reg.name, p.clone());
    Ok(p)
}

/// A new, unshared instance of the platform answering to `name`, with `options`
/// (e.g. a device count for replicated programs).
pub fn create_platform(name: &str, options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    create_from(find_platform(name)?, options)
}

fn create_from(
    reg: &'static PlatformRegistration,
    options: &PlatformOptions,
) -> Result<Arc<dyn Platform>> {
    match (reg.probe)() {
        Availability::Available { .. } => (reg.create)(options),
        Availability::Unavailable(why) => Err(Error::failed_precondition(format!(
            "platform {} is unavailable: {why}",
            reg.name
        ))),
    }
}

/// The highest-priority available platform.
pub fn default_platform_name() -> Result<&'static str> {
    registered_platforms()?
        .into_iter()
        .find(|r| (r.probe)().is_available())
        .map(|r| r.name)
        .ok_or_else(|| {
            Error::not_found(format!(
                "no platform is available; registered: {}",
                describe_registered()
            ))
        })
}

/// The shared instance of the default platform.
pub fn default_platform() -> Result<Arc<dyn Platform>> {
    platform(default_platform_name()?)
}

fn single<T: 'static>(
    what: &str,
    platform: &str,
    matches: impl Iterator<Item = &'static T>,
) -> Result<&'static T> {
    let found: Vec<&'static T> = matches.collect();
    match found.len() {
        0 => Err(Error::failed_precondition(format!(
            "platform {platform} has no {what} registered; is the crate that provides it linked?"
        ))),
        1 => Ok(found[0]),
        n => Err(Error::already_exists(format!(
            "platform {platform} has {n} {what}s registered; exactly one is allowed"
        ))),
    }
}

/// The compiler registered for a platform id.
pub fn compiler(platform_id: &str) -> Result<Arc<dyn Compiler>> {
    let reg = single(
        "compiler",
        platform_id,
        inventory::iter::<CompilerRegistration>().filter(|r| r.platform == platform_id),
    )?;
    Ok((reg.create)())
}

/// The transfer manager registered for a platform id.
pub fn transfer_manager(platform_id: &str) -> Result<Arc<dyn TransferManager>> {
    let reg = single(
        "transfer manager",
        platform_id,
        inventory::iter::<TransferManagerRegistration>().filter(|r| r.platform == platform_id),
    )?;
    Ok((reg.create)())
}

/// The computation placer for a platform id: its own if it registered one, else
/// the default.
pub fn computation_placer(platform_id: &str) -> Result<Arc<dyn ComputationPlacer>> {
    let own: Vec<_> = inventory::iter::<ComputationPlacerRegistration>()
        .filter(|r| r.platforms.contains(&platform_id))
        .collect();
    if !own.is_empty() {
        return single("computation placer", platform_id, own.into_iter()).map(|r| (r.create)());
    }
    single(
        "computation placer",
        platform_id,
        inventory::iter::<ComputationPlacerRegistration>().filter(|r| r.platforms.is_empty()),
    )
    .map(|r| (r.create)())
    .map_err(|e| {
        Error::new(
            e.code(),
            format!(
                "could not find a registered computation placer for platform {platform_id}: {} (check target linkage)",
                e.message()
            ),
        )
    })
}
