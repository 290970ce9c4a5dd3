//! Differential test: random programs on every available platform against the
//! Interpreter.
//!
//! For each seed, [`tests::random_program::generate`] makes a random program
//! with seeded arguments and a sound tolerance per output (exact where every
//! correct backend must agree bit for bit, see that module's docs). Each
//! available platform other than the Interpreter runs it, and its outputs are
//! compared with the Interpreter's. On a failure the test prints the seed, the
//! HLO text, the first differing elements, writes the module and its arguments
//! (`.npy`) where `hlorun compare` can replay them, and prints a minimized
//! reproducer.
//!
//! Failures that are genuine platform bugs not fixed yet are listed in
//! [`KNOWN_FAILURES`] with a description; they are reported but tolerated. The
//! list is exact: a listed seed that passes fails the test, so the list always
//! says precisely what is broken. Listed seeds run even when they fall outside
//! the seed range.
//!
//! Environment:
//! * `DIFFTEST_SEEDS=N` — number of seeds (default 1000); `DIFFTEST_FIRST_SEED=S`
//!   — first seed (default 0).
//! * `DIFFTEST_MINIMIZE=all` — also minimize known failures (to refresh the
//!   reproducers in the list); `DIFFTEST_MINIMIZE_SECS=T` — time per failure
//!   (default 20); `DIFFTEST_MINIMIZE_SECS=0` skips minimizing (fast sweeps).
//! * `DIFFTEST_DIR` — where reproducers go (default `<temp>/difftest`).
//! * `DIFFTEST_TRACE=1` — write each case to `DIFFTEST_DIR` and print its
//!   replay command to stderr before running it, to find the program that
//!   crashed the process (a segfault cannot be caught).
//!
//! `cargo test -p tests --test suite differential:: -- --nocapture` prints the summary
//! (programs, exact and inexact outputs, how tight the tolerances were, which
//! operation families ran). `cargo run -p tests --example difftest_program --
//! SEED [DIR]` prints (and writes) the program of one seed.
//!
//! A generator change renumbers the programs: re-run a sweep
//! (`DIFFTEST_SEEDS=30000 DIFFTEST_MINIMIZE_SECS=0`) and list its failures anew.

use platform_api::registry;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tests::differential::{
    check, minimize, output_dir, run_guarded, write_case, Failure, Reproducer, REFERENCE,
};
use tests::random_program::{generate, OutputCheck};

// Linking a backend registers it.
use platform_host as _;
use platform_interpreter as _;

/// (platform, seed, what goes wrong). See the module docs.
///
/// Empty: seeds 0..30000 all match. (The one bug this list held, an empty
/// slice of a slice composed out of range by the simplifier, is fixed and kept
/// as a regression test in `hlo/passes/tests/passes_simplify.rs`.)
const KNOWN_FAILURES: &[(&str, u64, &str)] = &[];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn known(platform: &str, seed: u64) -> Option<&'static str> {
    KNOWN_FAILURES
        .iter()
        .find(|(p, s, _)| *p == platform && *s == seed)
        .map(|k| k.2)
}

#[test]
fn random_programs_match_the_interpreter() {
    let count = env_number("DIFFTEST_SEEDS", 1000);
    let first = env_number("DIFFTEST_FIRST_SEED", 0);
    let minimize_known = std::env::var("DIFFTEST_MINIMIZE").is_ok_and(|v| v == "all");
    let minimize_budget = Duration::from_secs(env_number("DIFFTEST_MINIMIZE_SECS", 20));
    // Minimizing stops after this long in total, so a systematic failure
    // (every seed failing) still ends in reasonable time.
    let mut minimize_left = minimize_budget * 6;
    let timeout = Duration::from_secs(60);
    // A crash (a segfault in a backend) takes the whole process down; with
    // tracing on, the last line printed names the program that did it.
    let trace = std::env::var_os("DIFFTEST_TRACE").is_some();

    let platforms: Vec<&'static str> = registry::list_platforms()
        .expect("the registry lists platforms")
        .into_iter()
        .filter(|p| p.availability.is_available() && p.name != REFERENCE)
        .map(|p| p.name)
        .collect();
    assert!(
        platforms.contains(&"Host"),
        "platform-host is linked, so Host must be available"
    );
    registry::platform(REFERENCE).expect("the reference platform is linked and available");

    let mut seeds: Vec<u64> = (first..first.saturating_add(count)).collect();
    seeds.extend(KNOWN_FAILURES.iter().map(|k| k.1));
    seeds.sort();
    seeds.dedup();

    let start = Instant::now();
    let mut problems: Vec<String> = Vec::new();
    let mut tolerated = 0usize;
    let mut runs = 0usize;
    // Runs a partial platform answered `Unimplemented` (an op outside its set).
    let mut declined = 0usize;
    let mut exact_leaves = 0usize;
    let mut leaves = 0usize;
    let mut features: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut tightness = Tightness::default();
    for &seed in &seeds {
        let program = match generate(seed) {
            Ok(p) => p,
            Err(e) => {
                problems.push(format!("seed {seed}: the generator failed: {e}"));
                continue;
            }
        };
        for f in &program.features {
            *features.entry(f).or_default() += 1;
        }
        leaves += program.outputs.len();
        exact_leaves += program.outputs.iter().filter(|c| c.atol == 0.0).count();
        let want = match run_guarded(REFERENCE, &program.module, &program.args, timeout) {
            Ok(w) => w,
            Err(e) => {
                problems.push(format!(
                    "seed {seed}: the reference failed (a generator or Interpreter bug): {e}\n{}",
                    program.module
                ));
                continue;
            }
        };
        for &platform in &platforms {
            runs += 1;
            if trace {
                // The case goes to disk first: a crash leaves its reproducer.
                let dir = output_dir().join(format!("{}-seed{seed}", platform.to_lowercase()));
                let written = write_case(&dir, platform, &program.module, &program.args, 0.0);
                eprintln!(
                    "difftest: {platform} seed {seed} ({})",
                    written.unwrap_or_else(|e| e.to_string())
                );
            }
            let outcome = match run_guarded(platform, &program.module, &program.args, timeout) {
                Err(e) if tests::declined(platform, &e) => {
                    declined += 1;
                    continue;
                }
                ran => ran.map_err(Failure::Error),
            }
            .and_then(|got| {
                check(&got, &want, &program.outputs)?;
                Ok(got)
            });
            let failure = match outcome {
                Ok(got) => {
                    if let Some(what) = known(platform, seed) {
                        problems.push(format!(
                            "{platform} seed {seed}: listed in KNOWN_FAILURES ({what}) but passes; remove it"
                        ));
                    }
                    tightness.record(&got, &want, &program.outputs);
                    continue;
                }
                Err(f) => f,
            };
            let listed = known(platform, seed);
            match listed {
                None => println!("FAILED {platform} seed {seed}: {failure}"),
                Some(_) => println!("KNOWN {platform} seed {seed}: {failure}"),
            }
            if listed.is_some() {
                tolerated += 1;
                if !minimize_known {
                    continue;
                }
            }
            let budget = minimize_budget.min(minimize_left);
            let started = Instant::now();
            problems.push(report(platform, seed, &program, failure, budget, listed));
            minimize_left = minimize_left.saturating_sub(started.elapsed());
        }
    }
    // Reports of known failures (minimized on request) are printed, not counted.
    let (known_reports, unexpected): (Vec<String>, Vec<String>) =
        problems.into_iter().partition(|p| p.starts_with("[known]"));
    for r in &known_reports {
        println!("{r}\n");
    }

    println!(
        "\ndifferential: {} programs, {runs} platform runs ({}; {declined} declined by a partial platform), {} unexpected, {tolerated} known failures, in {:.1?}",
        seeds.len(),
        platforms.join(", "),
        unexpected.len(),
        start.elapsed()
    );
    println!("  output leaves: {leaves}, of which exact: {exact_leaves}");
    tightness.print();
    println!(
        "  features: {}",
        features
            .iter()
            .map(|(f, n)| format!("{f} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Full reports of the first few failures (a systematic failure would
    // repeat for every seed; each was announced on one line as it happened).

    const SHOWN: usize = 20;
    assert!(
        unexpected.is_empty(),
        "{} differential failures{}:\n\n{}",
        unexpected.len(),
        if unexpected.len() > SHOWN {
            format!(" (the first {SHOWN})")
        } else {
            String::new()
        },
        unexpected[..unexpected.len().min(SHOWN)].join("\n\n")
    );
}

/// Describes a failure: seed, HLO, first mismatch, files for `hlorun compare`,
/// and a minimized reproducer.
fn report(
    platform: &str,
    seed: u64,
    program: &tests::random_program::Program,
    failure: Failure,
    budget: Duration,
    listed: Option<&str>,
) -> String {
    let mut out = String::new();
    if let Some(what) = listed {
        out.push_str(&format!(
            "[known] {platform} seed {seed} ({what}): {failure}\n"
        ));
    } else {
        out.push_str(&format!("{platform} seed {seed}: {failure}\n"));
    }
    let atol = match &failure {
        Failure::Mismatch { leaf, .. } => program.outputs.get(*leaf).map_or(0.0, |c| c.atol),
        Failure::Error(_) => 0.0,
    };
    let dir = output_dir().join(format!("{}-seed{seed}", platform.to_lowercase()));
    match write_case(&dir, platform, &program.module, &program.args, atol) {
        Ok(cmd) => out.push_str(&format!("replay: {cmd}\n")),
        Err(e) => out.push_str(&format!("(could not write the reproducer: {e})\n")),
    }
    out.push_str(&format!("program:\n{}\n", program.module));
    if budget.is_zero() {
        out.push_str("(not minimized: the minimizing time is spent)\n");
        return out;
    }
    let original = Reproducer {
        module: program.module.clone(),
        args: program.args.clone(),
        checks: program.outputs.clone(),
        failure,
    };
    let size = original.size();
    let small = minimize(platform, original, budget);
    let atol = small.checks.first().map_or(0.0, |c| c.atol);
    out.push_str(&format!(
        "minimized ({} → {} instructions): {}\n{}",
        size,
        small.size(),
        small.failure,
        small.module
    ));
    match write_case(
        &dir.join("minimized"),
        platform,
        &small.module,
        &small.args,
        atol,
    ) {
        Ok(cmd) => out.push_str(&format!("replay minimized: {cmd}\n")),
        Err(e) => out.push_str(&format!(
            "(could not write the minimized reproducer: {e})\n"
        )),
    }
    for (i, a) in small.args.iter().enumerate() {
        if a.element_count() <= 16 {
            out.push_str(&format!("  arg{i} = {a}\n"));
        }
    }
    out
}

/// How tight the tolerances of inexact outputs are, over passing runs: the
/// tolerance relative to the output's magnitude, and how much of it the
/// observed differences used. (A check whose tolerance dwarfs the values would
/// catch nothing; one that is nearly used up would flake.)
#[derive(Default)]
struct Tightness {
    /// atol / max|want| per inexact leaf with a nonzero magnitude.
    relative_atol: Vec<f64>,
    /// max|got - want| / atol per inexact leaf.
    used: Vec<f64>,
}

impl Tightness {
    fn record(
        &mut self,
        got: &[platform_api::Literal],
        want: &[platform_api::Literal],
        checks: &[OutputCheck],
    ) {
        for ((g, w), c) in got.iter().zip(want).zip(checks) {
            if c.atol == 0.0 {
                continue;
            }
            let (mut magnitude, mut diff) = (0f64, 0f64);
            for i in 0..w.element_count() {
                let (Ok(a), Ok(b)) = (g.get(i), w.get(i)) else {
                    continue;
                };
                let (a, b) = (a.to_f64_lossy(), b.to_f64_lossy());
                if a.is_finite() && b.is_finite() {
                    magnitude = magnitude.max(b.abs());
                    diff = diff.max((a - b).abs());
                }
            }
            if magnitude > 0.0 {
                self.relative_atol.push(c.atol / magnitude);
            }
            self.used.push(diff / c.atol);
        }
    }

    fn print(&mut self) {
        let quantiles = |v: &mut Vec<f64>| -> String {
            if v.is_empty() {
                return "-".into();
            }
            v.sort_by(|a, b| a.total_cmp(b));
            let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize];
            format!(
                "median {:.1e}, 90% {:.1e}, max {:.1e}",
                q(0.5),
                q(0.9),
                q(1.0)
            )
        };
        println!(
            "  inexact leaves: atol / max|value|: {}; observed |diff| / atol: {}",
            quantiles(&mut self.relative_atol),
            quantiles(&mut self.used)
        );
    }
}
