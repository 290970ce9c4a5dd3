//! A mutation fuzzer for the whole pipeline: parse, verify, compile and run on
//! every available platform, compared with the Interpreter.
//!
//! Seeds are the conformance corpus (`module.hlo` and `optimized.hlo` of every
//! case, with the case's own arguments). Each round takes a seed and applies
//! one or a few mutations of one of two kinds:
//!
//! * **semantic** mutations on the parsed module that keep it well formed
//!   most of the time: an elementwise opcode replaced by another of its arity,
//!   a comparison direction changed, a constant's elements set to extreme
//!   values (NaN, infinities, -0, the integer limits), an operand replaced by
//!   an earlier instruction of the same shape. Such a mutant is printed,
//!   parsed back, and if it verifies it runs on every platform; the results
//!   must match the Interpreter's (NaN matches NaN; floats within a tolerance
//!   that any correct evaluation order meets). Loop bodies and conditions,
//!   reducers and comparators are left alone: a mutant could loop forever, or
//!   make the result depend on an order XLA leaves open.
//! * **textual** mutations of the program text: an integer token replaced by
//!   an extreme number, a token deleted or duplicated, a line dropped. Such a
//!   mutant only goes through parse, verify and compile (running one could
//!   allocate without bound or never end).
//!
//! The oracle: nothing panics or hangs, ever; a mutant the Interpreter runs
//! runs everywhere with the same numbers. Errors are fine as long as they are
//! errors. Numbers are only held to agreement where the program is well
//! conditioned: when a platform disagrees, the Interpreter runs again on the
//! arguments nudged by a few ulps, and if its own answer moves beyond the
//! tolerance the disagreement is excused (counted in the summary); failing
//! that, `hlorun compare`'s default rule (the f64 shadow with error scales,
//! non-finite values by class, undefined outputs not judged) has the last
//! word. Mutations include what made that rule cry wolf once (issue 40):
//! values past f32's range or at an integer edge in float constants, a unary
//! op on square matrices turned into a Cholesky factorization, and every
//! float type of one width made another (`all f64->f32`, textual).
//!
//! The default run is bounded (`PIPELINE_FUZZ_SECONDS`, 60 s) so it sits in
//! the normal test suite; for a long run:
//!
//! ```text
//! PIPELINE_FUZZ_SECONDS=1800 PIPELINE_FUZZ_SEED=7 cargo test --release -p tests \
//!     --test suite pipeline_fuzz:: -- --nocapture
//! ```
//!
//! A failing mutant is written to `<temp>/pipeline_fuzz/` with its arguments
//! and named in the failure message; once fixed it becomes a regression test
//! next to the code it exercised.

use platform_api::hlo::parser::parse_module;
use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::{BinaryOp, CompId, ComparisonDirection, ElementType, InstrId, Op, UnaryOp};
use platform_api::{HloModule, Literal};
use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tests::differential::{run_guarded, write_case, REFERENCE};
use tests::random_program::Rng;

use platform_host as _;
use platform_interpreter as _;

struct Seed {
    name: String,
    text: String,
    module: HloModule,
    args: Vec<Literal>,
}

fn seeds() -> Vec<Seed> {
    let corpus = tests::corpus_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("the corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("module.hlo").is_file())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let mut args = Vec::new();
        for i in 0.. {
            let path = dir.join(format!("arg{i}.npy"));
            if !path.is_file() {
                break;
            }
            args.push(Literal::read_npy(&path).expect("corpus arguments read"));
        }
        for form in ["module.hlo", "optimized.hlo"] {
            let Ok(text) = std::fs::read_to_string(dir.join(form)) else {
                continue;
            };
            let module = parse_module(&text).expect("corpus programs parse");
            out.push(Seed {
                name: format!("{}/{form}", dir.file_name().unwrap().to_string_lossy()),
                text,
                module,
                args: args.clone(),
            });
        }
    }
    out
}

/// Computations a mutation must not touch, with everything they call: the
/// condition and body of a `while` (a mutant could loop forever), and
/// reducers and comparators (reduce, scatter, sort, ...): XLA leaves their
/// order of application open, so a mutant that is not associative, or not a
/// strict weak order, may rightly give different numbers on each platform.
fn frozen_computations(module: &HloModule) -> BTreeSet<CompId> {
    let mut todo: Vec<CompId> = Vec::new();
    for comp in &module.computations {
        for instr in &comp.instructions {
            match &instr.op {
                Op::Map { .. } | Op::Call { .. } | Op::Fusion { .. } | Op::Conditional { .. } => {}
                op => todo.extend(op.called_computations()),
            }
        }
    }
    let mut seen = BTreeSet::new();
    while let Some(c) = todo.pop() {
        if seen.insert(c) {
            for instr in &module.computation(c).instructions {
                todo.extend(instr.op.called_computations());
            }
        }
    }
    seen
}

const EXTREME_F64: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -0.0,
    0.0,
    1e30,
    -1e-30,
    3.4e38,
    1.0e-45,
    // Finite values that overflow exp and friends in f32 but not in f64,
    // integers at the edge of a conversion, a value past f32's range in f64
    // (mutations that made `compare` cry wolf, issue 40).
    255.0,
    128.0,
    -2147483648.0,
    1e38,
    9.223_372_036_854_776e18,
];
const EXTREME_I64: &[i64] = &[
    0,
    -1,
    1,
    i64::MAX,
    i64::MIN,
    i32::MAX as i64,
    i32::MIN as i64,
];

/// One semantic mutation in place; `false` when the chosen spot offered none.
fn mutate_semantic(module: &mut HloModule, rng: &mut Rng) -> bool {
    let frozen = frozen_computations(module);
    let comps: Vec<usize> = (0..module.computations.len())
        .filter(|&c| !frozen.contains(&CompId(c as u32)))
        .collect();
    if comps.is_empty() {
        return false;
    }
    let c = rng.pick(&comps);
    let comp = &mut module.computations[c];
    if comp.instructions.is_empty() {
        return false;
    }
    let i = rng.below(comp.instructions.len());
    match rng.below(5) {
        // A unary op on a batch of square matrices becomes a Cholesky
        // factorization: mostly of a matrix that is not positive definite,
        // whose factor XLA leaves implementation-defined.
        4 => {
            let instr = &mut comp.instructions[i];
            let square = instr.shape.as_array().is_some_and(|a| {
                a.element_type.is_float()
                    && a.rank() >= 2
                    && a.dims[a.rank() - 1] == a.dims[a.rank() - 2]
            });
            if !matches!(instr.op, Op::Unary(_)) || !square {
                return false;
            }
            instr.op = Op::Cholesky {
                lower: rng.below(2) == 0,
            };
        }
        0 => match &mut comp.instructions[i].op {
            Op::Unary(u) => *u = rng.pick(UnaryOp::ALL),
            Op::Binary(b) => *b = rng.pick(BinaryOp::ALL),
            Op::Compare { direction, .. } => *direction = rng.pick(ComparisonDirection::ALL),
            _ => return false,
        },
        1 => {
            // A constant that starts a loop's state could make it run for
            // billions of iterations.
            let seeds_loop_state = comp.instructions.iter().any(|u| {
                matches!(u.op, Op::Tuple | Op::While { .. })
                    && u.operands.contains(&InstrId(i as u32))
            });
            if seeds_loop_state {
                return false;
            }
            let Op::Constant { literal } = &mut comp.instructions[i].op else {
                return false;
            };
            let Some(element_type) = literal.element_type() else {
                return false;
            };
            let count = literal.element_count();
            let Some(bytes) = extreme_bytes(element_type, rng) else {
                return false;
            };
            if count == 0 {
                return false;
            }
            let at = rng.below(count) * bytes.len();
            let Ok(data) = literal.bytes_mut() else {
                return false;
            };
            data[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        _ => {
            let instr = &comp.instructions[i];
            // Rewiring a loop's initial state could make it endless.
            if instr.operands.is_empty()
                || i == 0
                || matches!(instr.op, Op::Tuple | Op::While { .. })
            {
                return false;
            }
            let k = rng.below(instr.operands.len());
            let want = comp.instructions[instr.operands[k].index()].shape.clone();
            let candidates: Vec<usize> = (0..i)
                .filter(|&j| comp.instructions[j].shape == want)
                .collect();
            if candidates.is_empty() {
                return false;
            }
            let j = rng.pick(&candidates);
            comp.instructions[i].operands[k] = InstrId(j as u32);
        }
    }
    true
}

/// The little-endian bytes of an extreme value of `ty`; `None` for types
/// without one worth trying (pred, complex).
fn extreme_bytes(ty: ElementType, rng: &mut Rng) -> Option<Vec<u8>> {
    use ElementType::*;
    let f = rng.pick(EXTREME_F64);
    let i = rng.pick(EXTREME_I64);
    Some(match ty {
        F16 => half::f16::from_f64(f).to_le_bytes().to_vec(),
        BF16 => half::bf16::from_f64(f).to_le_bytes().to_vec(),
        F32 => (f as f32).to_le_bytes().to_vec(),
        F64 => f.to_le_bytes().to_vec(),
        S8 | U8 | S16 | U16 | S32 | U32 | S64 | U64 => i.to_le_bytes()[..ty.byte_size()].to_vec(),
        _ => return None,
    })
}

const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2147483647",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "100000000000",
];

/// One textual mutation.
fn mutate_text(text: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return text.to_string();
    }
    match rng.below(5) {
        4 => {
            // Every float type of one width made another (`all f64->f32`):
            // a program whose constants and ranges were meant for another
            // precision.
            let (from, to) = rng.pick(&[("f64[", "f32["), ("f32[", "f16["), ("f32[", "bf16[")]);
            text.replace(from, to)
        }
        0 => {
            // An integer token replaced by an extreme number.
            let bytes = text.as_bytes();
            let starts: Vec<usize> = (0..bytes.len())
                .filter(|&k| {
                    bytes[k].is_ascii_digit() && (k == 0 || !bytes[k - 1].is_ascii_alphanumeric())
                })
                .collect();
            if starts.is_empty() {
                return text.to_string();
            }
            let s = rng.pick(&starts);
            let mut e = s;
            while e < bytes.len() && bytes[e].is_ascii_digit() {
                e += 1;
            }
            format!("{}{}{}", &text[..s], rng.pick(EXTREME_NUMBERS), &text[e..])
        }
        1 => {
            // A line dropped.
            let drop = rng.below(lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != drop)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        2 => {
            // A line duplicated.
            let dup = rng.below(lines.len());
            let mut out: Vec<&str> = lines.clone();
            out.insert(dup, lines[dup]);
            out.join("\n")
        }
        _ => {
            // A word of one line swapped with a word of another.
            let words: Vec<&str> = text
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .filter(|w| !w.is_empty())
                .collect();
            if words.len() < 2 {
                return text.to_string();
            }
            let a = rng.pick(&words);
            let b = rng.pick(&words);
            text.replacen(a, b, 1)
        }
    }
}

/// Parse, verify and compile on every platform in `compile_on`; `Ok(None)`
/// when the text is refused (an error is a fine answer), `Err` names a panic.
fn front_end(text: &str, compile_on: &[&str]) -> std::result::Result<Option<HloModule>, String> {
    let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| parse_module(text)))
        .map_err(|_| "parse panicked".to_string())?;
    let Ok(module) = parsed else { return Ok(None) };
    let verified = std::panic::catch_unwind(AssertUnwindSafe(|| verify_module(&module)))
        .map_err(|_| "verify panicked".to_string())?;
    if verified.is_err() {
        return Ok(None);
    }
    for &platform in compile_on {
        let compiled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let p = platform_api::registry::platform(platform)?;
            let executor = p.executor(0)?;
            let compiler = platform_api::registry::compiler(p.id())?;
            compiler
                .compile(module.clone(), &executor, &Default::default())
                .map(|_| ())
        }));
        if compiled.is_err() {
            return Err(format!("compiling on {platform} panicked"));
        }
    }
    Ok(Some(module))
}

/// Writes the failing mutant and its arguments; returns the replay command.
fn replay_command(
    out_dir: &std::path::Path,
    round: u64,
    platform: &str,
    module: &HloModule,
    args: &[Literal],
) -> String {
    let dir = out_dir.join(format!("round{round}"));
    write_case(&dir, platform, module, args, 1e-5).unwrap_or_else(|e| format!("(not written: {e})"))
}

/// Whether a platform's leaves agree with the reference's: same count, and
/// each within a tolerance any correct evaluation order meets on a
/// well-conditioned program.
fn agree(got: &[Literal], want: &[Literal]) -> std::result::Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} leaves, the Interpreter has {}",
            got.len(),
            want.len()
        ));
    }
    for (g, w) in got.iter().zip(want) {
        tests::compare(g, w, 1e-3, 1e-5)?;
    }
    Ok(())
}

/// Whether the program's results are stable under a rounding-sized change of
/// its inputs: the reference is run again with every f32/f64 argument scaled
/// by (1 + 4 ulp). A mutant can be ill-conditioned (`remainder` of a large
/// number by a computed one, say); there a different but correct summation
/// order in a platform's dot changes the answer completely, and a mismatch
/// proves nothing.
fn well_conditioned(
    module: &HloModule,
    args: &[Literal],
    want: &[Literal],
    timeout: Duration,
) -> bool {
    let nudged: Vec<Literal> = args
        .iter()
        .map(|a| {
            let mut a = a.clone();
            match a.element_type() {
                Some(ElementType::F32) => {
                    if let Ok(v) = a.data_mut::<f32>() {
                        v.iter_mut().for_each(|x| *x *= 1.0 + 4.0 * f32::EPSILON);
                    }
                }
                Some(ElementType::F64) => {
                    if let Ok(v) = a.data_mut::<f64>() {
                        v.iter_mut().for_each(|x| *x *= 1.0 + 4.0 * f64::EPSILON);
                    }
                }
                _ => {}
            }
            a
        })
        .collect();
    match run_guarded(REFERENCE, module, &nudged, timeout) {
        Ok(again) => agree(&again, want).is_ok(),
        Err(_) => false,
    }
}

/// Whether `hlorun compare`'s default rule accepts `got` (a platform's result
/// leaves) for `module` on `args`: judged against the f64 shadow evaluation
/// with error scales, non-finite values by class, and outputs XLA leaves
/// undefined (a Cholesky factor of a matrix that is not positive definite)
/// not judged. This is the arbiter where the Interpreter's own f32 numbers
/// are one rounding among many (infinities and values at the edge of the
/// range written into constants).
fn scale_rule_accepts(module: &HloModule, args: &[Literal], got: &[Literal]) -> bool {
    let result = if module.entry_program_shape().result.is_tuple() {
        Literal::tuple(got.to_vec())
    } else {
        match got.first() {
            Some(g) => g.clone(),
            None => return false,
        }
    };
    let judged = std::panic::catch_unwind(AssertUnwindSafe(|| {
        service::compare::compare_by_scale(
            module,
            &platform_api::CompileOptions::default(),
            args,
            &result,
            None,
            service::ScaleRule::default(),
            "mutant",
            "platform",
        )
    }));
    matches!(judged, Ok(Ok(report)) if report.ok())
}

/// How `run_guarded` words a panic and a run past its timeout.
const PANIC: &str = "panicked";
const HANG: &str = "(hang?)";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
fn mutated_corpus_programs_never_crash_and_agree_with_the_interpreter() {
    let budget = Duration::from_secs(env_number("PIPELINE_FUZZ_SECONDS", 60));
    let mut rng = Rng::new(env_number("PIPELINE_FUZZ_SEED", 1));
    let platforms = tests::available_platforms();
    let others: Vec<&str> = platforms
        .iter()
        .copied()
        .filter(|&p| p != REFERENCE)
        .collect();
    let seeds = seeds();
    assert!(
        seeds.len() >= 80,
        "expected the whole corpus, found {} programs",
        seeds.len()
    );
    let timeout = Duration::from_secs(20);
    let out_dir = std::env::temp_dir().join("pipeline_fuzz");
    let start = Instant::now();
    let (mut rounds, mut ran, mut verified, mut ill_conditioned) = (0u64, 0u64, 0u64, 0u64);
    let mut judged_by_scale = 0u64;
    let mut failures: Vec<String> = Vec::new();
    while start.elapsed() < budget && failures.len() < 5 {
        rounds += 1;
        let seed = &seeds[rng.below(seeds.len())];
        let semantic = rng.below(3) != 0;
        let text = if semantic {
            let mut module = seed.module.clone();
            let mut changed = false;
            for _ in 0..1 + rng.below(3) {
                changed |= mutate_semantic(&mut module, &mut rng);
            }
            if !changed {
                continue;
            }
            module.to_text()
        } else {
            let mut text = seed.text.clone();
            for _ in 0..1 + rng.below(2) {
                text = mutate_text(&text, &mut rng);
            }
            text
        };
        // A semantic mutant is compiled by its runs below; only a textual one
        // stops after compiling.
        let compile_on: &[&str] = if semantic { &[] } else { &platforms };
        let module = match front_end(&text, compile_on) {
            Err(panic) => {
                let dir = out_dir.join(format!("round{rounds}"));
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(dir.join("module.hlo"), &text);
                failures.push(format!(
                    "{} round {rounds}: {panic} ({})",
                    seed.name,
                    dir.display()
                ));
                continue;
            }
            Ok(None) => continue,
            Ok(Some(module)) => module,
        };
        verified += 1;
        if !semantic {
            continue;
        }
        let want = run_guarded(REFERENCE, &module, &seed.args, timeout);
        match &want {
            // A mutant the reference cannot finish in time may simply be
            // long (a rewired loop bound): skipped, not blamed.
            Err(e) if e.contains(HANG) => continue,
            Err(e) if e.contains(PANIC) => {
                let replay = replay_command(&out_dir, rounds, REFERENCE, &module, &seed.args);
                failures.push(format!(
                    "{} round {rounds}: Interpreter: {e}; {replay}",
                    seed.name
                ));
                continue;
            }
            Err(_) => {}
            Ok(_) => ran += 1,
        }
        for &platform in &others {
            let problem = match (&want, run_guarded(platform, &module, &seed.args, timeout)) {
                (_, Err(e)) if e.contains(PANIC) || e.contains(HANG) => Some(e),
                // An error is a fine answer where the reference gave one too.
                (Err(_), _) => None,
                (Ok(_), Err(e)) if tests::declined(platform, &e) => None,
                (Ok(_), Err(e)) => Some(format!("error where the Interpreter ran: {e}")),
                (Ok(want), Ok(got)) => match agree(&got, want) {
                    Ok(()) => None,
                    // Any correct evaluation order may give these numbers.
                    Err(_) if !well_conditioned(&module, &seed.args, want, timeout) => {
                        ill_conditioned += 1;
                        None
                    }
                    Err(_) if scale_rule_accepts(&module, &seed.args, &got) => {
                        judged_by_scale += 1;
                        None
                    }
                    Err(e) => Some(e),
                },
            };
            if let Some(e) = problem {
                let replay = replay_command(&out_dir, rounds, platform, &module, &seed.args);
                failures.push(format!(
                    "{} round {rounds} on {platform}: {e}; {replay}",
                    seed.name
                ));
            }
        }
    }
    println!(
        "pipeline fuzz: {rounds} rounds in {:.0?}: {verified} mutants verified, {ran} ran and were \
         compared ({ill_conditioned} disagreements excused as ill-conditioned, \
         {judged_by_scale} accepted by compare's scale rule)",
        start.elapsed()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
