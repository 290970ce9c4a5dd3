//! Deliberately broken registrations, and what the registry says about them.
//!
//! This test binary is the only place these registrations are linked, so they
//! cannot disturb any other test. It registers one healthy platform and, beside
//! it, every mistake a backend author can make: two platforms sharing an alias,
//! a platform whose instance reports another id, a platform with neither a
//! compiler nor a transfer manager, and pieces (and a conformance gap) for a
//! platform that does not exist. Each test checks that the mistake is reported
//! with a message naming what is involved, and that the healthy platform is
//! unaffected by the others' mistakes.

use platform_api::registry::{
    self, Availability, CompilerRegistration, ConformanceGap, PlatformRegistration,
    TransferManagerRegistration,
};
use platform_api::{
    Code, CompileOptions, Compiler, Error, Executable, GenericTransferManager, HloModule, Platform,
    PlatformOptions, Result, StreamExecutor,
};
use std::sync::Arc;

/// A platform with no devices: the registry never needs one.
struct NoDevices(&'static str);

impl Platform for NoDevices {
    fn id(&self) -> &'static str {
        self.0
    }
    fn device_count(&self) -> usize {
        0
    }
    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        Err(Error::out_of_range(format!("no device {ordinal}")))
    }
}

/// A compiler that compiles nothing: only its registration matters here.
struct NoCompiler(&'static str);

impl Compiler for NoCompiler {
    fn platform_id(&self) -> &'static str {
        self.0
    }
    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<HloModule> {
        Ok(module)
    }
    fn run_backend(
        &self,
        _: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        Err(Error::unimplemented("test compiler"))
    }
}

macro_rules! platform {
    ($name:literal, $aliases:expr, $priority:literal, $id:literal) => {
        platform_api::inventory::submit! {
            PlatformRegistration {
                name: $name,
                aliases: $aliases,
                priority: $priority,
                probe: || Availability::Available { devices: 0 },
                create: |_: &PlatformOptions| Ok(Arc::new(NoDevices($id)) as Arc<dyn Platform>),
            }
        }
    };
}

macro_rules! pieces {
    ($key:literal) => {
        platform_api::inventory::submit! {
            CompilerRegistration { platform: $key, create: || Arc::new(NoCompiler($key)) }
        }
        platform_api::inventory::submit! {
            TransferManagerRegistration {
                platform: $key,
                create: || Arc::new(GenericTransferManager::new($key)),
            }
        }
    };
}

// Healthy, with its pieces keyed in other cases than its name.
platform!("Healthy", &["well"], 10, "Healthy");
platform_api::inventory::submit! {
    CompilerRegistration { platform: "healthy", create: || Arc::new(NoCompiler("Healthy")) }
}
platform_api::inventory::submit! {
    TransferManagerRegistration { platform: "WELL", create: || Arc::new(GenericTransferManager::new("Healthy")) }
}
platform_api::inventory::submit! {
    ConformanceGap { platform: "HEALTHY", case: "some_case", form: Some("optimised"), reason: "misspelt form" }
}

// Two platforms claiming the alias "clash" (in different cases), with higher
// priority than Healthy: they must not become the default either.
platform!("DupA", &["clash"], 500, "DupA");
pieces!("DupA");
platform!("DupB", &["CLASH"], 500, "DupB");
pieces!("DupB");

// A platform whose instance says it is Healthy.
platform!("Impostor", &[], 5, "Healthy");
pieces!("Impostor");

// A platform with no compiler and no transfer manager, highest priority.
platform!("Bare", &[], 1000, "Bare");

// Pieces and a gap for a platform nobody registered.
pieces!("Ghost");
platform_api::inventory::submit! {
    ConformanceGap { platform: "Ghost", case: "softmax", form: None, reason: "orphan" }
}

#[test]
fn lookups_ignore_case_everywhere() {
    for name in ["Healthy", "healthy", "WELL"] {
        assert_eq!(registry::find_platform(name).unwrap().name, "Healthy");
    }
    for id in ["Healthy", "HEALTHY", "well"] {
        let c = registry::components(id).unwrap();
        assert_eq!(c.compiler.platform_id(), "Healthy", "{id}");
        assert_eq!(c.transfer_manager.platform_id(), "Healthy", "{id}");
    }
    let gaps = registry::conformance_gaps("Healthy");
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].case, "some_case");
}

#[test]
fn not_found_lists_what_is_registered_and_how_to_link() {
    let err = registry::find_platform("tpu").err().unwrap();
    assert_eq!(err.code(), Code::NotFound);
    let msg = err.message();
    for want in [
        "\"tpu\"",
        "Healthy",
        "Impostor",
        "use my_backend as _;",
        "cargo feature",
    ] {
        assert!(msg.contains(want), "missing {want:?} in: {msg}");
    }
    let err = registry::compiler("Bare")
        .err()
        .expect("Bare has no compiler");
    let msg = err.message();
    for want in [
        "Bare",
        "no compiler",
        "healthy",
        "Ghost",
        "use my_backend as _;",
    ] {
        assert!(msg.contains(want), "missing {want:?} in: {msg}");
    }
}

#[test]
fn a_shared_alias_breaks_only_the_two_platforms_involved() {
    for name in ["DupA", "dupb", "clash"] {
        let err = registry::find_platform(name).err().unwrap();
        assert_eq!(err.code(), Code::AlreadyExists, "{name}: {err}");
        assert!(
            err.message().contains("DupA") && err.message().contains("DupB"),
            "{name}: {err}"
        );
        assert!(err.message().contains("\"clash\""), "{name}: {err}");
    }
    // Everyone else is untouched, listing included.
    assert!(registry::platform("Healthy").is_ok());
    let listing = registry::list_platforms().unwrap();
    let row = |n: &str| listing.iter().find(|p| p.name == n).unwrap();
    assert!(row("Healthy").problems.is_empty(), "{:?}", row("Healthy"));
    assert!(row("DupA").problems.iter().any(|p| p.contains("DupB")));
    assert!(row("DupB").problems.iter().any(|p| p.contains("DupA")));
    // Higher priority, but broken: not the default; nor is Bare.
    assert_eq!(registry::default_platform_name().unwrap(), "Healthy");
}

#[test]
fn an_instance_with_another_id_is_refused_naming_both() {
    let err = registry::create_platform("Impostor", &PlatformOptions::default())
        .err()
        .expect("Impostor's instance says it is Healthy");
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message().contains("\"Impostor\"") && err.message().contains("\"Healthy\""),
        "{err}"
    );
    assert!(registry::platform("impostor").is_err());
}

#[test]
fn every_missing_piece_is_reported_at_once() {
    let err = registry::components("Bare")
        .err()
        .expect("Bare is incomplete");
    let msg = err.message();
    assert!(msg.contains("no compiler"), "{msg}");
    assert!(msg.contains("no transfer manager"), "{msg}");
    assert!(msg.contains("use my_backend as _;"), "{msg}");
    let listing = registry::list_platforms().unwrap();
    let bare = listing.iter().find(|p| p.name == "Bare").unwrap();
    assert_eq!(bare.problems.len(), 2, "{:?}", bare.problems);
}

#[test]
fn problems_lists_orphans_conflicts_and_bad_gaps() {
    let problems = registry::problems();
    let has = |needles: &[&str]| {
        problems
            .iter()
            .any(|p| needles.iter().all(|n| p.contains(n)))
    };
    assert!(
        has(&["a compiler", "\"Ghost\"", "does not exist"]),
        "{problems:#?}"
    );
    assert!(has(&["a transfer manager", "\"Ghost\""]), "{problems:#?}");
    assert!(
        has(&["conformance gap (case softmax)", "\"Ghost\""]),
        "{problems:#?}"
    );
    assert!(has(&["\"clash\"", "DupA", "DupB"]), "{problems:#?}");
    assert!(has(&["Bare", "no compiler"]), "{problems:#?}");
    assert!(has(&["Bare", "no transfer manager"]), "{problems:#?}");
    assert!(has(&["\"optimised\"", "some_case"]), "{problems:#?}");
    // Healthy's pieces, keyed "healthy" and "WELL", are not orphans.
    assert!(!has(&["\"healthy\""]), "{problems:#?}");
    assert!(!has(&["\"WELL\""]), "{problems:#?}");
    // The shared alias is one problem, not one per platform.
    assert_eq!(
        problems.iter().filter(|p| p.contains("\"clash\"")).count(),
        1,
        "{problems:#?}"
    );
}
