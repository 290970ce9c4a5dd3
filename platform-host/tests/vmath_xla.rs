//! Replays XLA CPU's outputs (`tests/data/vmath/{f32,f64}.txt`, written by
//! `scripts/gen_vmath_cases.py`) against the `vmath` kernels at every level.
//!
//! Rules:
//! * where XLA gives NaN or an infinity, the kernel must give the same;
//! * XLA CPU flushes subnormals (FTZ/DAZ); the kernels keep them, as the shared
//!   semantics do. A subnormal argument is skipped, and a kernel result that is
//!   subnormal where XLA has ±0 is accepted;
//! * otherwise the result must be within `TOLERANCE` ULPs of XLA's, or (where
//!   XLA's own approximation is the one off, e.g. `tanh` saturating to 1 from
//!   7.9 on) within 2 ULPs of the C library's `f64` result (`f32` `tanh`:
//!   within its documented 5, see `own_bound`).
//!
//! `--nocapture` prints the largest distance to XLA per op.

use platform_host::vmath::{self, FloatBinary, FloatUnary, Level, Operand};
use std::collections::BTreeMap;

const TOLERANCE: i64 = 4;

fn levels() -> Vec<Level> {
    Level::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect()
}

struct Case {
    op: String,
    args: Vec<u64>,
    out: u64,
}

fn load(name: &str) -> Vec<Case> {
    let path = format!("{}/tests/data/vmath/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut words = l.split_whitespace();
            let op = words.next().unwrap().to_string();
            let mut nums: Vec<u64> = words.map(|w| u64::from_str_radix(w, 16).unwrap()).collect();
            let out = nums.pop().unwrap();
            Case {
                op,
                args: nums,
                out,
            }
        })
        .collect()
}

/// Distance in representable values (0 between +0 and -0).
fn ulp_distance(a: i64, b: i64) -> i64 {
    (a - b).abs()
}

fn ordered32(x: f32) -> i64 {
    let i = x.to_bits() as i32 as i64;
    if i < 0 {
        i64::from(i32::MIN) - i
    } else {
        i
    }
}

fn ordered64(x: f64) -> i64 {
    let i = x.to_bits() as i64;
    if i < 0 {
        i64::MIN - i
    } else {
        i
    }
}

fn reference(op: &str, args: &[f64]) -> Option<f64> {
    let x = args[0];
    Some(match op {
        "exponential" => x.exp(),
        "exponential-minus-one" => x.exp_m1(),
        "log" => x.ln(),
        "log-plus-one" => x.ln_1p(),
        "tanh" => x.tanh(),
        "sine" => x.sin(),
        "cosine" => x.cos(),
        "tan" => x.tan(),
        "cbrt" => x.cbrt(),
        "sqrt" => x.sqrt(),
        "power" => x.powf(args[1]),
        "atan2" => x.atan2(args[1]),
        _ => return None,
    })
}

/// How far from the C library's result a kernel may be where it is more than
/// `TOLERANCE` from XLA's: 2 ULP, and for `f32` `tanh`, a rational function
/// like XLA's own but fitted separately, its documented bound (both are up to
/// about 5 ULP off near 1, not always in the same direction).
fn own_bound(ty: &str, op: &str) -> i64 {
    match (ty, op) {
        ("f32", "tanh") => 5,
        _ => 2,
    }
}

macro_rules! replay {
    ($T:ident, $file:expr, $ordered:ident, $bits:ty) => {{
        let cases = load($file);
        assert!(
            cases.len() > 1000,
            "{} has only {} cases",
            $file,
            cases.len()
        );
        let mut worst: BTreeMap<String, i64> = BTreeMap::new();
        for level in levels() {
            for case in &cases {
                let args: Vec<$T> = case
                    .args
                    .iter()
                    .map(|&b| $T::from_bits(b as $bits))
                    .collect();
                if args.iter().any(|a| a.is_subnormal()) {
                    continue;
                }
                let want = $T::from_bits(case.out as $bits);
                let mut out = [0 as $T];
                if let Some(u) = FloatUnary::ALL.into_iter().find(|u| u.name() == case.op) {
                    vmath::$T::unary_at(level, u, &args[..1], &mut out).unwrap();
                } else if let Some(b) = FloatBinary::ALL.into_iter().find(|b| b.name() == case.op) {
                    vmath::$T::binary_at(
                        level,
                        b,
                        Operand::Slice(&args[..1]),
                        Operand::Slice(&args[1..2]),
                        &mut out,
                    )
                    .unwrap();
                } else {
                    panic!("unknown op {} in {}", case.op, $file);
                }
                let got = out[0];
                let what = format!(
                    "{level} {} {}({:?}) = {got:e}, XLA {want:e}",
                    stringify!($T),
                    case.op,
                    args
                );
                if want.is_nan() {
                    assert!(got.is_nan(), "{what}");
                    continue;
                }
                if want.is_infinite() {
                    assert_eq!(got, want, "{what}");
                    continue;
                }
                if want == 0.0 && (got == 0.0 || got.is_subnormal()) {
                    continue; // XLA flushes subnormal results
                }
                assert!(got.is_finite(), "{what}");
                let d = ulp_distance($ordered(got), $ordered(want));
                *worst.entry(case.op.clone()).or_default() =
                    worst.get(&case.op).copied().unwrap_or(0).max(d);
                if d <= TOLERANCE {
                    continue;
                }
                let wide: Vec<f64> = args.iter().map(|&a| a as f64).collect();
                let r = reference(&case.op, &wide)
                    .unwrap_or_else(|| panic!("{what}: {d} ULP from XLA"));
                let r = r as $T;
                let bound = own_bound(stringify!($T), &case.op);
                assert!(
                    ulp_distance($ordered(got), $ordered(r)) <= bound,
                    "{what}: {d} ULP from XLA and not within {bound} ULP of the C library ({r:e})"
                );
            }
        }
        for (op, d) in worst {
            println!(
                "{} {op:<24} max distance to XLA CPU: {d} ULP",
                stringify!($T)
            );
        }
    }};
}

#[test]
fn f32_kernels_agree_with_xla_cpu() {
    replay!(f32, "f32.txt", ordered32, u32);
}

#[test]
fn f64_kernels_agree_with_xla_cpu() {
    replay!(f64, "f64.txt", ordered64, u64);
}
