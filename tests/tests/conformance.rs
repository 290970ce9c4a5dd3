//! The conformance corpus on every available platform.
//!
//! For every registered platform whose probe says *available*, every case in
//! `tests/conformance/`, and both programs of the case (`module.hlo` and
//! `optimized.hlo`), run the program and compare all outputs with the corpus'
//! expected values. Each (platform, case, program) must either pass or be listed
//! in [`KNOWN_GAPS`] with a reason; a listed gap that passes is also a failure,
//! so the list always says exactly what does not work yet. A summary table is
//! printed either way (`cargo test -p tests --test conformance -- --nocapture`).

use platform_api::registry;
use std::collections::BTreeMap;
use tests::{case_names, check_case, load_case, Variant};

// Linking a backend registers it.
use platform_host as _;
use platform_interpreter as _;

/// Which programs of a case a gap covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Both,
    Only(Variant),
}

/// (platform, case, programs, reason).
///
/// Calibrated for main with every in-flight branch merged (semantics, npy,
/// verifier, customcall, interp-kernels with all of its kernels). Merged in a
/// different state, cases of a missing piece fail here and must be listed with
/// that reason; when a listed gap starts passing this test fails until its row
/// is removed. Both are intended: the table always says exactly what is missing.
// Empty: every case passes on every linked platform. (The interpreter's one
// former gap, `fori_loop`, was XLA CPU contracting `x*0.9 + i*sin(x)` into an
// FMA; the interpreter now models that contraction: see
// `platform_api::semantics::contraction`.)
const KNOWN_GAPS: &[(&str, &str, Which, &str)] = &[];

fn gap_for(platform: &str, case: &str, variant: Variant) -> Option<&'static str> {
    KNOWN_GAPS
        .iter()
        .find(|(p, c, which, _)| {
            *p == platform
                && *c == case
                && (*which == Which::Both || *which == Which::Only(variant))
        })
        .map(|g| g.3)
}

#[derive(Clone, Debug)]
enum Outcome {
    Pass,
    Fail(String),
}

#[test]
fn conformance_corpus_on_every_available_platform() {
    let platforms: Vec<&'static str> = registry::list_platforms()
        .expect("the registry lists platforms")
        .into_iter()
        .filter(|p| p.availability.is_available())
        .map(|p| p.name)
        .collect();
    assert!(
        platforms.contains(&"Interpreter"),
        "the interpreter is linked, so it must be available"
    );
    let names = case_names().expect("the corpus folder is readable");
    assert!(
        names.len() >= 40,
        "the corpus has {} cases; expected the full set",
        names.len()
    );

    let mut results: BTreeMap<(String, String), [Option<Outcome>; 2]> = BTreeMap::new();
    let mut problems = Vec::new();
    let (mut passed, mut known, mut total) = (0usize, 0usize, 0usize);
    for &platform in &platforms {
        for name in &names {
            let case = match load_case(name) {
                Ok(c) => c,
                Err(e) => {
                    problems.push(format!("{name}: cannot load the case: {e}"));
                    continue;
                }
            };
            let mut row: [Option<Outcome>; 2] = [None, None];
            for (slot, variant) in Variant::ALL.into_iter().enumerate() {
                total += 1;
                let outcome = match check_case(platform, &case, variant) {
                    Ok(()) => Outcome::Pass,
                    Err(e) => Outcome::Fail(e),
                };
                match (&outcome, gap_for(platform, name, variant)) {
                    (Outcome::Pass, None) => passed += 1,
                    (Outcome::Fail(_), Some(_)) => known += 1,
                    (Outcome::Pass, Some(reason)) => problems.push(format!(
                        "{platform} {name} {variant}: listed as a known gap ({reason}) but passes; remove it from KNOWN_GAPS"
                    )),
                    (Outcome::Fail(e), None) => problems.push(format!("{platform} {name} {variant}: {e}")),
                }
                row[slot] = Some(outcome);
            }
            results.insert((platform.to_string(), name.clone()), row);
        }
    }

    println!(
        "\n{:<12} {:<30} {:<10} {:<10} note",
        "platform", "case", "module", "optimized"
    );
    for ((platform, name), row) in &results {
        let cell = |o: &Option<Outcome>, v: Variant| match (o, gap_for(platform, name, v)) {
            (Some(Outcome::Pass), None) => "pass",
            (Some(Outcome::Pass), Some(_)) => "PASS?",
            (Some(Outcome::Fail(_)), Some(_)) => "gap",
            (Some(Outcome::Fail(_)), None) => "FAIL",
            (None, _) => "-",
        };
        let note = Variant::ALL
            .iter()
            .find_map(|&v| gap_for(platform, name, v))
            .unwrap_or("");
        println!(
            "{:<12} {:<30} {:<10} {:<10} {}",
            platform,
            name,
            cell(&row[0], Variant::Module),
            cell(&row[1], Variant::Optimized),
            note
        );
    }
    println!(
        "\n{passed} passed, {known} known gaps, {} unexpected, of {total} runs\n",
        problems.len()
    );
    assert!(
        problems.is_empty(),
        "conformance problems:\n{}",
        problems.join("\n")
    );
}
