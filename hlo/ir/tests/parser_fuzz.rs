//! A deterministic mutation fuzzer for the HLO parser that runs on stable Rust.
//!
//! Seeds are the conformance programs, the hand-written round-trip modules and the
//! regression cases. Each round picks a seed and applies a few mutations (byte
//! changes, deletions and duplications of token-sized or line-sized ranges,
//! insertions of HLO keywords and extreme numbers, words moved between seeds,
//! splices of two seeds), then
//! checks the oracle of `parser_support/oracle.rs`: parsing never panics, and
//! what parses prints to a fixed point that reads back to an equal module.
//!
//! The default run is short (a fixed number of rounds, a few seconds) so it can
//! sit in the normal test suite. For a long run:
//!
//! ```text
//! PARSER_FUZZ_SECONDS=600 PARSER_FUZZ_SEED=7 cargo test --release -p hlo-ir \
//!     --test parser_fuzz -- --nocapture
//! ```
//!
//! Failing inputs are written to `target/parser_fuzz_failures/` and named in the
//! failure message; once fixed, they belong in `tests/data/parser_regressions/`.
//! The coverage-guided counterpart is the cargo-fuzz target in `fuzz/`.

#[path = "parser_support/oracle.rs"]
mod oracle;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// SplitMix64: small, fast and reproducible from a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Fragments worth inserting: HLO punctuation, keywords, and numbers at the edges
/// of every integer and float type.
const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    ":",
    "->",
    "<=",
    "*",
    "%",
    "\"",
    "\\",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "{...}",
    "/*index=5*/",
    "ROOT ",
    "ENTRY ",
    "HloModule m\n",
    "f32[] ",
    "f32[2]{0} ",
    "(f32[], s32[]) ",
    "token[] ",
    "pred[] ",
    "c64[] ",
    "bf16[] ",
    "f32[<=4]",
    "{1,0:T(8,128)S(1)}",
    "{}",
    "constant(",
    "parameter(0)",
    "tuple(",
    "get-tuple-element(",
    ", index=1",
    ", dimensions={0}",
    ", to_apply=%x",
    "calls=",
    "sharding={replicated}",
    "backend_config={\"a\":1}",
    "backend_config=\"x\"",
    "metadata={op_name=\"a\"}",
    "frontend_attributes={a=\"b\"}",
    "replica_groups=[2,2]<=[4]",
    "replica_groups={{0,1}}",
    "window={size=2x2 stride=1x1 pad=0_1x1_0}",
    "dim_labels=b01f_01io->b01f",
    "control-predecessors={}",
    "0",
    "-0",
    "1",
    "-1",
    "127",
    "128",
    "255",
    "256",
    "-129",
    "32767",
    "65536",
    "2147483647",
    "-2147483649",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "nan(0x1)",
    "1e38",
    "3.5e38",
    "1e-45",
    "1e-400",
    "1e400",
    "65504",
    "65520",
    "0x10",
    "true",
    "false",
    "(1, 2)",
    "FileNames\n1 \"a\"\n",
    "StackFrames\n1 {file_location_id=1}\n",
];

fn seed_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut add_dir = |dir: &Path, recurse: bool| {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if recurse && path.is_dir() {
                for name in ["module.hlo", "optimized.hlo"] {
                    if path.join(name).exists() {
                        files.push(path.join(name));
                    }
                }
            } else if path.extension().is_some_and(|e| e == "hlo") {
                files.push(path);
            }
        }
    };
    add_dir(&root.join("../../tests/conformance"), true);
    add_dir(&root.join("tests/data/parser_roundtrip"), false);
    add_dir(&root.join("tests/data/parser_regressions"), false);
    files.sort();
    files
}

/// A random range of `text` that ends on whitespace or punctuation: roughly a token,
/// a line, or (rarely) a larger block.
fn random_range(rng: &mut Rng, text: &[u8]) -> (usize, usize) {
    let start = rng.below(text.len());
    let max_len = match rng.below(8) {
        0..=4 => 12,
        5 | 6 => 100,
        _ => 2000,
    };
    let mut end = (start + 1 + rng.below(max_len)).min(text.len());
    // Extend to a boundary so most cuts keep tokens whole.
    while end < text.len() && (text[end] as char).is_ascii_alphanumeric() {
        end += 1;
    }
    (start, end)
}

/// Byte ranges of the word tokens of `text` (letters, digits and `_.-+%$#`).
fn word_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b"_.-+%$#".contains(&b);
    let mut spans = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if is_word(text[i]) {
            let start = i;
            while i < text.len() && is_word(text[i]) {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

/// A seed's bytes with its word spans, computed once.
struct Seed {
    bytes: Vec<u8>,
    words: Vec<(usize, usize)>,
}

fn mutate(rng: &mut Rng, seeds: &[Seed], input: &mut Vec<u8>) {
    // Mostly one mutation, so a fair share of inputs still parse and the
    // round-trip half of the oracle gets exercised.
    let rounds = if rng.below(4) == 0 {
        2 + rng.below(3)
    } else {
        1
    };
    for _ in 0..rounds {
        if input.is_empty() {
            input.extend_from_slice(&rng.pick(seeds).bytes);
            continue;
        }
        match rng.below(11) {
            0 => {
                // Change one byte to a random ASCII character.
                let at = rng.below(input.len());
                input[at] = 0x20 + rng.below(0x5f) as u8;
            }
            1 | 2 => {
                let (a, b) = random_range(rng, input);
                input.drain(a..b);
            }
            3 => {
                let (a, b) = random_range(rng, input);
                let copy = input[a..b].to_vec();
                let at = rng.below(input.len() + 1);
                input.splice(at..at, copy);
            }
            4 | 5 => {
                let at = rng.below(input.len() + 1);
                input.splice(at..at, rng.pick(FRAGMENTS).bytes());
            }
            6 => {
                // Replace a number (a run of digits) by an extreme one.
                let at = rng.below(input.len());
                if let Some(off) = input[at..].iter().position(|b| b.is_ascii_digit()) {
                    let s = at + off;
                    let mut e = s;
                    while e < input.len() && input[e].is_ascii_digit() {
                        e += 1;
                    }
                    let numbers =
                        &FRAGMENTS[FRAGMENTS.iter().position(|f| *f == "0").unwrap_or(0)..];
                    input.splice(s..e, rng.pick(numbers).bytes());
                }
            }
            7 => {
                // Splice: this input's head with another seed's tail.
                let other = &rng.pick(seeds).bytes;
                if !other.is_empty() {
                    let cut = rng.below(input.len());
                    let from = rng.below(other.len());
                    input.truncate(cut);
                    input.extend_from_slice(&other[from..]);
                }
            }
            9 | 10 => {
                // Replace a word by a word from some seed: values move between
                // contexts (a `nan` into an `epsilon=`, an opcode into a shape...).
                let words = word_spans(input);
                let other = rng.pick(seeds);
                if !words.is_empty() && !other.words.is_empty() {
                    let (a, b) = *rng.pick(&words);
                    let (c, d) = *rng.pick(&other.words);
                    let replacement = other.bytes[c..d].to_vec();
                    input.splice(a..b, replacement);
                }
            }
            _ => {
                // Swap two lines (instructions move before their operands, etc.).
                let lines: Vec<usize> = input
                    .iter()
                    .enumerate()
                    .filter(|(_, &b)| b == b'\n')
                    .map(|(i, _)| i)
                    .collect();
                if lines.len() >= 3 {
                    let i = rng.below(lines.len() - 1);
                    let (a, b) = (lines[i] + 1, lines[i + 1] + 1);
                    let line = input[a..b].to_vec();
                    input.drain(a..b);
                    let j = *rng.pick(&lines);
                    let at = (j + 1).min(input.len());
                    input.splice(at..at, line);
                }
            }
        }
    }
    // Keep inputs a manageable size.
    input.truncate(200_000);
}

fn save_failure(input: &str, n: usize) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/parser_fuzz_failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("failure_{n}.hlo"));
    let _ = std::fs::write(&path, input);
    path
}

/// Runs one input; `Err` describes a panic or a broken round trip.
fn run_one(text: &str) -> Result<bool, String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| oracle::check_text(text))) {
        Ok(result) => result,
        Err(panic) => Err(format!(
            "panic: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

#[test]
fn mutation_fuzz() {
    let seeds: Vec<Seed> = seed_files()
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).unwrap();
            let words = word_spans(&bytes);
            Seed { bytes, words }
        })
        .collect();
    assert!(seeds.len() >= 80, "only {} seed files found", seeds.len());
    let seed: u64 = std::env::var("PARSER_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // Default: a fixed number of rounds (reproducible), capped in time as a guard
    // against a slow machine. Long mode: run for the given number of seconds.
    let (rounds, budget) = match std::env::var("PARSER_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(secs) => (usize::MAX, Duration::from_secs(secs)),
        None => (1500, Duration::from_secs(8)),
    };
    // Panics are caught and reported below; silence the default hook's output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed);
    let start = Instant::now();
    let (mut executed, mut parsed) = (0usize, 0usize);
    let mut failures = Vec::new();
    while executed < rounds && start.elapsed() < budget {
        let mut input = rng.pick(&seeds).bytes.clone();
        mutate(&mut rng, &seeds, &mut input);
        let text = String::from_utf8_lossy(&input).into_owned();
        executed += 1;
        match run_one(&text) {
            Ok(true) => parsed += 1,
            Ok(false) => {}
            Err(why) => {
                let path = save_failure(&text, failures.len());
                failures.push(format!("{}: {}", path.display(), why));
                if failures.len() >= 10 {
                    break;
                }
            }
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "parser_fuzz: seed {seed}, {executed} inputs in {:.1}s, {parsed} parsed, {} failures",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The mutations must leave a fair share parseable, or the round-trip half of
    // the oracle is not being exercised.
    assert!(
        parsed * 20 >= executed,
        "only {parsed} of {executed} inputs parsed"
    );
}
