//! The custom-call target registry, keyed by (target name, platform name).
//!
//! Targets come from three places, looked up in this order:
//! 1. static registrations: [`register_custom_call!`](crate::register_custom_call)
//!    submits a [`StaticRegistration`] through `inventory` (the counterpart of
//!    `XLA_REGISTER_CUSTOM_CALL_TARGET(fn, "Host")`);
//! 2. registrations at run time: [`register_target`];
//! 3. shared libraries loaded with [`load_library`](super::load_library), whose
//!    exported symbols serve every platform, by symbol name.
//!
//! Platform names compare without regard to case ("host" is "Host"); target
//! names are symbols and compare exactly. Registering the same (target,
//! platform) twice is an error: at run time [`register_target`] refuses it; two
//! static registrations of one key make every lookup of that key fail, naming
//! both places, since neither can be preferred.
//!
//! The registry is built from the static registrations on first use and lives
//! for the rest of the process; targets are never removed, so a function pointer
//! once resolved stays valid.

use super::abi::{
    Convention, CpuOriginalFn, CpuStatusReturningFn, CpuStatusReturningUnifiedFn, GpuOriginalFn,
    GpuStatusReturningFn,
};
use super::typed::{TypedClosure, TypedFn};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// A custom-call target: a function and the calling convention it was written
/// with. The variant names the convention, so a target can only be called the
/// way it was declared.
#[derive(Clone)]
pub enum Target {
    /// `void f(void* out, const void** in)`.
    CpuOriginal(CpuOriginalFn),
    /// `void f(void* out, const void** in, XlaCustomCallStatus* status)`.
    CpuStatusReturning(CpuStatusReturningFn),
    /// `void f(void* out, const void** in, const char* opaque, size_t opaque_len,
    /// XlaCustomCallStatus* status)`.
    CpuStatusReturningUnified(CpuStatusReturningUnifiedFn),
    /// `void f(CUstream, void** buffers, const char* opaque, size_t opaque_len)`
    /// (for the CUDA platform).
    GpuOriginal(GpuOriginalFn),
    /// `void f(CUstream, void** buffers, const char* opaque, size_t opaque_len,
    /// XlaCustomCallStatus* status)` (for the CUDA platform).
    GpuStatusReturning(GpuStatusReturningFn),
    /// A typed Rust handler, called for `API_VERSION_TYPED_FFI`.
    Typed(TypedFn),
    /// A typed Rust handler that captures state (registration at run time).
    TypedClosure(TypedClosure),
    /// One of XLA's own targets (such as `TopK`) implemented natively with the
    /// typed API. XLA emits these with whatever `api_version` it chooses
    /// (usually the default), so a built-in accepts any.
    Builtin(TypedFn),
}

impl Target {
    /// The convention the target was written with; `None` for a built-in, which
    /// takes any `api_version`.
    pub fn convention(&self) -> Option<Convention> {
        Some(match self {
            Target::CpuOriginal(_) => Convention::CpuOriginal,
            Target::CpuStatusReturning(_) => Convention::CpuStatusReturning,
            Target::CpuStatusReturningUnified(_) => Convention::CpuStatusReturningUnified,
            Target::GpuOriginal(_) => Convention::GpuOriginal,
            Target::GpuStatusReturning(_) => Convention::GpuStatusReturning,
            Target::Typed(_) | Target::TypedClosure(_) => Convention::Typed,
            Target::Builtin(_) => return None,
        })
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.convention() {
            Some(c) => write!(f, "Target({c:?})"),
            None => f.write_str("Target(Builtin)"),
        }
    }
}

/// A static registration, submitted with `inventory` by
/// [`register_custom_call!`](crate::register_custom_call).
pub struct StaticRegistration {
    pub name: &'static str,
    pub platform: &'static str,
    pub target: Target,
    /// `file:line` of the registration, for duplicate reports.
    pub location: &'static str,
}

inventory::collect!(StaticRegistration);

/// Registers a custom-call target for a platform when the program starts, the
/// counterpart of `XLA_REGISTER_CUSTOM_CALL_TARGET(fn, "Host")`.
///
/// The third argument is a [`Target`](crate::custom_call::Target) variant
/// (written without the `Target::` prefix):
///
/// ```
/// use platform_api::custom_call::{lookup, CallFrame};
/// use platform_api::register_custom_call;
/// use std::ffi::c_void;
///
/// /// The guide's example, `A[i] = B[i % 128] + C[i]`, with the CPU ABI.
/// unsafe extern "C" fn do_custom_call(out: *mut c_void, ins: *const *const c_void) {
///     let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), 2048) };
///     let b = unsafe { std::slice::from_raw_parts((*ins).cast::<f32>(), 128) };
///     let c = unsafe { std::slice::from_raw_parts((*ins.add(1)).cast::<f32>(), 2048) };
///     for i in 0..2048 {
///         out[i] = b[i % 128] + c[i];
///     }
/// }
/// register_custom_call!("do_custom_call", "Host", CpuOriginal(do_custom_call));
///
/// /// The same with the typed API (`api_version=API_VERSION_TYPED_FFI`).
/// fn do_typed(call: &mut CallFrame<'_>) -> platform_api::Result<()> {
///     let b = call.arg_data::<f32>(0)?;
///     let c = call.arg_data::<f32>(1)?;
///     if b.is_empty() {
///         return Err(call.error("B is empty"));
///     }
///     let out = call.result_data::<f32>(0)?;
///     for (i, o) in out.iter_mut().enumerate() {
///         *o = b[i % b.len()] + c[i];
///     }
///     Ok(())
/// }
/// register_custom_call!("do_typed", "Host", Typed(do_typed));
///
/// assert!(lookup("do_custom_call", "host").unwrap().is_some());
/// ```
#[macro_export]
macro_rules! register_custom_call {
    ($name:expr, $platform:expr, $($target:tt)+) => {
        $crate::inventory::submit! {
            $crate::custom_call::StaticRegistration {
                name: $name,
                platform: $platform,
                target: {
                    #[allow(unused_imports)]
                    use $crate::custom_call::Target::*;
                    $($target)+
                },
                location: concat!(file!(), ":", line!()),
            }
        }
    };
}

struct Entry {
    name: String,
    platform: String,
    target: Target,
    /// Where each registration of this key came from; more than one is a conflict.
    origins: Vec<String>,
}

#[derive(Default)]
struct Registry {
    /// Keyed by (target name, lower-case platform name).
    entries: BTreeMap<(String, String), Entry>,
}

fn key(name: &str, platform: &str) -> (String, String) {
    (name.to_string(), platform.to_ascii_lowercase())
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut reg = Registry::default();
        for r in inventory::iter::<StaticRegistration> {
            reg.entries
                .entry(key(r.name, r.platform))
                .and_modify(|e| e.origins.push(r.location.to_string()))
                .or_insert_with(|| Entry {
                    name: r.name.to_string(),
                    platform: r.platform.to_string(),
                    target: r.target.clone(),
                    origins: vec![r.location.to_string()],
                });
        }
        RwLock::new(reg)
    })
}

fn read() -> std::sync::RwLockReadGuard<'static, Registry> {
    registry().read().unwrap_or_else(|e| e.into_inner())
}

/// Registers `target` under `name` for `platform` at run time. An error
/// (`AlreadyExists`) if that (name, platform) is already registered, statically
/// or at run time.
pub fn register_target(name: &str, platform: &str, target: Target) -> Result<()> {
    if name.is_empty() || platform.is_empty() {
        return Err(Error::invalid_argument(format!(
            "custom-call registration needs a target name and a platform name (got {name:?} for {platform:?})"
        )));
    }
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    let k = key(name, platform);
    if let Some(existing) = reg.entries.get(&k) {
        return Err(Error::already_exists(format!(
            "custom-call target \"{name}\" is already registered for platform \"{}\" (at {})",
            existing.platform,
            existing.origins.join(", ")
        )));
    }
    reg.entries.insert(
        k,
        Entry {
            name: name.to_string(),
            platform: platform.to_string(),
            target,
            origins: vec!["run time".to_string()],
        },
    );
    Ok(())
}

/// The target registered (statically or at run time) under `name` for
/// `platform`, if any. An error if two static registrations claim that key.
pub fn lookup(name: &str, platform: &str) -> Result<Option<Target>> {
    let reg = read();
    match reg.entries.get(&key(name, platform)) {
        None => Ok(None),
        Some(e) if e.origins.len() > 1 => Err(Error::already_exists(format!(
            "custom-call target \"{}\" is registered {} times for platform \"{}\" (at {}); keep one",
            e.name,
            e.origins.len(),
            e.platform,
            e.origins.join(", ")
        ))),
        Some(e) => Ok(Some(e.target.clone())),
    }
}

/// Names of the targets registered for `platform`, sorted.
pub fn registered_targets(platform: &str) -> Vec<String> {
    let platform = platform.to_ascii_lowercase();
    read()
        .entries
        .iter()
        .filter(|((_, p), _)| *p == platform)
        .map(|((n, _), _)| n.clone())
        .collect()
}
