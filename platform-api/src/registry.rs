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
//! then name. Every lookup ignores case, and a compiler, transfer manager,
//! placer or conformance gap may be keyed by any of its platform's names or
//! aliases: a key differing only in case from the platform's name must not be
//! a silent "not found".
//!
//! # Mistakes are reported where they bite, and only there
//!
//! Registrations come from many crates, so mistakes in them are expected, and
//! one plugin's mistake must not take the others down. Hence:
//! * two platforms claiming one name or alias make *those two* unusable (an
//!   `AlreadyExists` error naming both when either is looked up, and a problem
//!   in their listing rows); every other platform works as before;
//! * a platform whose created instance reports another [`Platform::id`] than its
//!   registered name is refused when created, naming both (it would otherwise
//!   run with the other platform's compiler);
//! * a platform missing several pieces (compiler, transfer manager) is reported
//!   with all of them in one error ([`components`]), not one per attempt;
//! * pieces and gaps registered for a platform that does not exist (a typo, or a
//!   platform whose crate is not linked) are listed by [`problems`], which
//!   `hlorun platforms` prints;
//! * every "not found" lists what *is* registered and says how to link a crate,
//!   since an unreferenced crate's registrations silently vanish.

use crate::compiler::Compiler;
use crate::error::{Code, Error, Result};
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

/// A conformance case a platform is known to fail, registered by the backend
/// crate itself (`inventory::submit!`) so that its gap list travels with it.
///
/// The conformance runner (`service::conformance`) reports such a case as a
/// known gap instead of a failure, and flags the gap when the case passes, so
/// the list always says exactly what does not work yet.
#[derive(Debug)]
pub struct ConformanceGap {
    /// The platform's name (or an alias; case is ignored).
    pub platform: &'static str,
    /// The case's folder name in the corpus (`"fft_complex"`).
    pub case: &'static str,
    /// `Some("module")`, `Some("optimized")` or `Some("stablehlo")` for one
    /// program of the case; `None` for all of them.
    pub form: Option<&'static str>,
    /// Why it fails, for the report (`"no FFT kernel yet"`).
    pub reason: &'static str,
}

/// The forms a [`ConformanceGap`] may name.
pub const CONFORMANCE_FORMS: [&str; 3] = ["module", "optimized", "stablehlo"];

inventory::collect!(PlatformRegistration);
inventory::collect!(ConformanceGap);
inventory::collect!(CompilerRegistration);
inventory::collect!(TransferManagerRegistration);
inventory::collect!(ComputationPlacerRegistration);

inventory::submit! {
    ComputationPlacerRegistration { platforms: &[], create: default_placer }
}

fn default_placer() -> Arc<dyn ComputationPlacer> {
    Arc::new(DefaultComputationPlacer)
}

/// How to make a backend crate's registrations exist: said by every "not found",
/// because an unreferenced crate is not linked and nothing else would say so.
pub const LINK_HINT: &str = "a backend crate registers itself only when it is linked into the \
program: reference it once (`use my_backend as _;`) from a crate that is built in, or enable \
its cargo feature on the service crate (e.g. `--features cuda`)";

fn same_name(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

/// A registration's canonical name followed by its aliases.
fn names_of(r: &PlatformRegistration) -> impl Iterator<Item = &'static str> {
    std::iter::once(r.name).chain(r.aliases.iter().copied())
}

fn answers_to(r: &PlatformRegistration, name: &str) -> bool {
    names_of(r).any(|n| same_name(n, name))
}

/// Every platform registration, highest priority first, then by name.
fn all_registrations() -> Vec<&'static PlatformRegistration> {
    let mut regs: Vec<&'static PlatformRegistration> =
        inventory::iter::<PlatformRegistration>().collect();
    regs.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(b.name)));
    regs
}

/// The names `r` shares with other registrations, one sentence each.
fn conflicts_of(r: &PlatformRegistration, all: &[&'static PlatformRegistration]) -> Vec<String> {
    let mut out = Vec::new();
    for other in all.iter().filter(|o| !std::ptr::eq(**o, r)) {
        let mut shared: Vec<String> = names_of(r)
            .filter(|n| answers_to(other, n))
            .map(str::to_lowercase)
            .collect();
        shared.dedup();
        for n in shared {
            let (a, b) = if r.name <= other.name {
                (r.name, other.name)
            } else {
                (other.name, r.name)
            };
            out.push(format!(
                "the name \"{n}\" is registered by both {a} and {b} (names and aliases must be unique, ignoring case)"
            ));
        }
    }
    out
}

/// Every registered platform, highest priority first, then by name.
///
/// Never fails: a name two platforms share is a problem of those two only
/// (reported when either is looked up, and by [`problems`]). The `Result` is
/// kept so callers need not change.
pub fn registered_platforms() -> Result<Vec<&'static PlatformRegistration>> {
    Ok(all_registrations())
}

/// One row of a platform listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformListing {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub priority: i32,
    pub availability: Availability,
    /// What is wrong with this platform's registrations (a name shared with
    /// another platform, a missing compiler); empty when it is usable.
    pub problems: Vec<String>,
}

/// Every registered platform with its probe's answer and its problems, in
/// registry order.
pub fn list_platforms() -> Result<Vec<PlatformListing>> {
    let all = all_registrations();
    Ok(all
        .iter()
        .map(|r| PlatformListing {
            name: r.name,
            aliases: r.aliases,
            priority: r.priority,
            availability: (r.probe)(),
            problems: platform_problems(r, &all),
        })
        .collect())
}

/// Conflicts and missing or doubled pieces of one platform.
fn platform_problems(
    r: &PlatformRegistration,
    all: &[&'static PlatformRegistration],
) -> Vec<String> {
    let mut out = conflicts_of(r, all);
    out.extend(missing_pieces(r.name).into_iter().map(|(_, m)| m));
    out
}

fn describe_registered() -> String {
    match list_platforms() {
        Ok(list) if list.is_empty() => "none (no backend crate is linked)".to_string(),
        Ok(list) => list
            .iter()
            .map(|p| match (&p.availability, p.problems.is_empty()) {
                (Availability::Unavailable(why), _) => format!("{} (unavailable: {why})", p.name),
                (Availability::Available { .. }, false) => {
                    format!("{} (broken: {})", p.name, p.problems.join("; "))
                }
                (Availability::Available { .. }, true) => p.name.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Err(e) => e.message().to_string(),
    }
}

/// The registration answering to `name` (a name or alias, any case).
///
/// `NotFound` lists what is registered and how to link a crate;
/// `AlreadyExists` when the platform shares a name with another.
pub fn find_platform(name: &str) -> Result<&'static PlatformRegistration> {
    let all = all_registrations();
    let matches: Vec<&'static PlatformRegistration> = all
        .iter()
        .copied()
        .filter(|r| answers_to(r, name))
        .collect();
    let Some(first) = matches.first() else {
        return Err(Error::not_found(format!(
            "no platform named \"{name}\"; registered: {}. Note: {LINK_HINT}",
            describe_registered()
        )));
    };
    let mut conflicts: Vec<String> = matches.iter().flat_map(|r| conflicts_of(r, &all)).collect();
    conflicts.sort();
    conflicts.dedup();
    if !conflicts.is_empty() {
        return Err(Error::already_exists(format!(
            "platform \"{name}\" cannot be used: {}; rename one of them",
            conflicts.join("; ")
        )));
    }
    Ok(first)
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
    let created = match (reg.probe)() {
        Availability::Available { .. } => (reg.create)(options)?,
        Availability::Unavailable(why) => {
            return Err(Error::failed_precondition(format!(
                "platform {} is unavailable: {why}",
                reg.name
            )))
        }
    };
    // The id is the key the compiler and transfer manager are found under: an
    // instance answering with another id would run with another platform's.
    if created.id() != reg.name {
        return Err(Error::failed_precondition(format!(
            "the platform registered as \"{}\" created an instance whose id() is \"{}\"; \
             they must be equal (the id selects the compiler and transfer manager), so fix \
             the registration's name or the platform's id()",
            reg.name,
            created.id()
        )));
    }
    Ok(created)
}

/// The highest-priority available platform without registration problems.
pub fn default_platform_name() -> Result<&'static str> {
    list_platforms()?
        .into_iter()
        .find(|p| p.availability.is_available() && p.problems.is_empty())
        .map(|p| p.name)
        .ok_or_else(|| {
            Error::not_found(format!(
                "no platform is available; registered: {}. Note: {LINK_HINT}",
                describe_registered()
            ))
        })
}

/// The shared instance of the default platform.
pub fn default_platform() -> Result<Arc<dyn Platform>> {
    platform(default_platform_name()?)
}

/// The names a piece keyed `platform_id` may be registered under: every name
/// and alias of the platform answering to it, or the id alone when no
/// registered platform does (a platform instance built outside the registry).
fn keys_for(platform_id: &str) -> Vec<&'static str> {
    let all = all_registrations();
    let by_name = all.iter().find(|r| same_name(r.name, platform_id));
    match by_name.or_else(|| all.iter().find(|r| answers_to(r, platform_id))) {
        Some(r) => names_of(r).collect(),
        None => Vec::new(),
    }
}

fn key_matches(keys: &[&str], platform_id: &str, key: &str) -> bool {
    same_name(key, platform_id) || keys.iter().any(|k| same_name(k, key))
}

/// The one registration of a kind for `platform_id`, or why not: `(code,
/// message)` without the link hint, so several can be joined into one error.
fn single<T: 'static>(
    what: &str,
    platform_id: &str,
    keys_of: fn(&T) -> &[&'static str],
) -> std::result::Result<&'static T, (Code, String)>
where
    inventory::iter<T>: IntoIterator<Item = &'static T>,
{
    let keys = keys_for(platform_id);
    let found: Vec<&'static T> = inventory::iter::<T>
        .into_iter()
        .filter(|r| {
            keys_of(r)
                .iter()
                .any(|k| key_matches(&keys, platform_id, k))
        })
        .collect();
    match found.len() {
        0 => {
            let mut registered: Vec<&str> = inventory::iter::<T>
                .into_iter()
                .flat_map(|r| keys_of(r).iter().copied())
                .collect();
            registered.sort_unstable();
            registered.dedup();
            let registered = if registered.is_empty() {
                "none".to_string()
            } else {
                registered.join(", ")
            };
            Err((
                Code::FailedPrecondition,
                format!("platform {platform_id} has no {what} registered ({what}s are registered for: {registered})"),
            ))
        }
        1 => Ok(found[0]),
        n => Err((
            Code::AlreadyExists,
            format!("platform {platform_id} has {n} {what}s registered; exactly one is allowed"),
        )),
    }
}

fn with_hint((code, message): (Code, String)) -> Error {
    if code == Code::FailedPrecondition {
        Error::new(code, format!("{message}; {LINK_HINT}"))
    } else {
        Error::new(code, message)
    }
}

fn compiler_keys(r: &CompilerRegistration) -> &[&'static str] {
    std::slice::from_ref(&r.platform)
}

fn transfer_keys(r: &TransferManagerRegistration) -> &[&'static str] {
    std::slice::from_ref(&r.platform)
}

fn placer_keys(r: &ComputationPlacerRegistration) -> &[&'static str] {
    r.platforms
}

/// The compiler registered for a platform id (or any of its names, any case).
pub fn compiler(platform_id: &str) -> Result<Arc<dyn Compiler>> {
    let reg = single("compiler", platform_id, compiler_keys).map_err(with_hint)?;
    Ok((reg.create)())
}

/// The transfer manager registered for a platform id (or any of its names).
pub fn transfer_manager(platform_id: &str) -> Result<Arc<dyn TransferManager>> {
    let reg = single("transfer manager", platform_id, transfer_keys).map_err(with_hint)?;
    Ok((reg.create)())
}

/// The placer registration for a platform: its own if it registered one, else
/// the default (the one registration with an empty platform list).
fn placer_for(
    platform_id: &str,
) -> std::result::Result<&'static ComputationPlacerRegistration, (Code, String)> {
    let keys = keys_for(platform_id);
    let own = inventory::iter::<ComputationPlacerRegistration>
        .into_iter()
        .any(|r| {
            r.platforms
                .iter()
                .any(|k| key_matches(&keys, platform_id, k))
        });
    if own {
        return single("computation placer", platform_id, placer_keys);
    }
    let defaults: Vec<_> = inventory::iter::<ComputationPlacerRegistration>
        .into_iter()
        .filter(|r| r.platforms.is_empty())
        .collect();
    match defaults.len() {
        1 => Ok(defaults[0]),
        n => Err((
            if n == 0 {
                Code::FailedPrecondition
            } else {
                Code::AlreadyExists
            },
            format!("platform {platform_id} has no computation placer of its own and {n} default placers are registered; exactly one is allowed"),
        )),
    }
}

/// The computation placer for a platform id: its own if it registered one, else
/// the default.
pub fn computation_placer(platform_id: &str) -> Result<Arc<dyn ComputationPlacer>> {
    placer_for(platform_id)
        .map(|r| (r.create)())
        .map_err(with_hint)
}

/// Everything a platform needs besides itself, resolved together.
pub struct Components {
    pub compiler: Arc<dyn Compiler>,
    pub transfer_manager: Arc<dyn TransferManager>,
    pub placer: Arc<dyn ComputationPlacer>,
}

/// What is missing (or registered twice) among a platform's pieces, every one.
fn missing_pieces(platform_id: &str) -> Vec<(Code, String)> {
    [
        single("compiler", platform_id, compiler_keys).err(),
        single("transfer manager", platform_id, transfer_keys).err(),
        placer_for(platform_id).err(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The compiler, transfer manager and placer of a platform id. When several
/// are missing, the one error names all of them, so a new backend learns
/// everything it lacks at once.
pub fn components(platform_id: &str) -> Result<Components> {
    let missing = missing_pieces(platform_id);
    if let Some((code, _)) = missing.first() {
        let messages: Vec<String> = missing.iter().map(|(_, m)| m.clone()).collect();
        return Err(with_hint((*code, messages.join("; "))));
    }
    Ok(Components {
        compiler: compiler(platform_id)?,
        transfer_manager: transfer_manager(platform_id)?,
        placer: computation_placer(platform_id)?,
    })
}

/// The conformance gaps registered for a platform (by any of its names, any case).
pub fn conformance_gaps(platform_id: &str) -> Vec<&'static ConformanceGap> {
    let keys = keys_for(platform_id);
    let mut gaps: Vec<&'static ConformanceGap> = inventory::iter::<ConformanceGap>
        .into_iter()
        .filter(|g| key_matches(&keys, platform_id, g.platform))
        .collect();
    gaps.sort_by(|a, b| a.case.cmp(b.case).then(a.form.cmp(&b.form)));
    gaps
}

/// Every problem in the registrations, one sentence each: platforms sharing a
/// name, platforms missing a piece, and pieces or gaps registered for a
/// platform that is not registered (a typo, or its crate is not linked).
/// Empty when all is well.
pub fn problems() -> Vec<String> {
    let all = all_registrations();
    let mut out: Vec<String> = Vec::new();
    for r in &all {
        // Each sentence names its platforms; a conflict, seen from both
        // sides, is listed once.
        for p in platform_problems(r, &all) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    let registered = || {
        let names: Vec<&str> = all.iter().map(|r| r.name).collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    let mut orphan = |what: &str, key: &str| {
        if !all.iter().any(|r| answers_to(r, key)) {
            out.push(format!(
                "a {what} is registered for platform \"{key}\", which does not exist \
                 (registered platforms: {}); a misspelt name, or the platform's crate is not linked",
                registered()
            ));
        }
    };
    for r in inventory::iter::<CompilerRegistration> {
        orphan("compiler", r.platform);
    }
    for r in inventory::iter::<TransferManagerRegistration> {
        orphan("transfer manager", r.platform);
    }
    for r in inventory::iter::<ComputationPlacerRegistration> {
        for key in r.platforms {
            orphan("computation placer", key);
        }
    }
    for g in inventory::iter::<ConformanceGap> {
        orphan(&format!("conformance gap (case {})", g.case), g.platform);
    }
    for g in inventory::iter::<ConformanceGap> {
        if let Some(form) = g.form.filter(|f| !CONFORMANCE_FORMS.contains(f)) {
            out.push(format!(
                "the conformance gap of platform {} for case {} names form \"{form}\"; \
                 expected one of {CONFORMANCE_FORMS:?} or None for all",
                g.platform, g.case
            ));
        }
    }
    out
}
