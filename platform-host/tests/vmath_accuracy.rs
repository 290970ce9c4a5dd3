//! Accuracy of the `vmath` transcendental kernels, at every supported level.
//!
//! * `f32`: error in ULPs of the `f32` result against the C library's `f64`
//!   function of the same (widened) argument, i.e. against the correctly rounded
//!   result up to a hair. Arguments: log-spaced over every binade the function
//!   is sensitive to, plus uniform samples where results cancel, plus specials.
//! * `f64`: ULP distance to the C library's `f64` result (itself within about
//!   one ULP of correct).
//! * Special values: NaN, ±inf, ±0 and the saturation and overflow thresholds
//!   must be exactly what the shared semantics give.
//!
//! Run with `--nocapture` to print the measured maxima (the table in
//! `platform-host/src/vmath/mod.rs`).

use platform_api::semantics::float as sf;
use platform_host::vmath::{self, FloatBinary, FloatUnary, Level, Operand};

type Elem32 = fn(f32) -> f32;
type Elem64 = fn(f64) -> f64;

fn levels() -> Vec<Level> {
    Level::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The size of one `f32` ULP at the magnitude of `r` (subnormal spacing below
/// the normal range).
fn ulp32(r: f64) -> f64 {
    let a = r.abs();
    if a < f32::MIN_POSITIVE as f64 {
        return 2f64.powi(-149);
    }
    let e = a.log2().floor() as i32;
    2f64.powi(e.min(127) - 23)
}

fn ulp64(r: f64) -> f64 {
    let a = r.abs();
    if a < f64::MIN_POSITIVE {
        return 2f64.powi(-1074);
    }
    let e = a.log2().floor() as i32;
    2f64.powi(e - 52)
}

/// Samples: `n` log-spaced magnitudes in `[lo, hi]` of both signs (or
/// positive only), and `n` uniform values in `[ulo, uhi]`.
fn samples(n: usize, lo: f64, hi: f64, signed: bool, ulo: f64, uhi: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed | 1);
    let mut v = Vec::with_capacity(2 * n);
    let (l0, l1) = (lo.ln(), hi.ln());
    for _ in 0..n {
        let m = (l0 + (l1 - l0) * r.unit()).exp();
        v.push(if signed && r.next() & 1 == 1 { -m } else { m });
    }
    for _ in 0..n {
        v.push(ulo + (uhi - ulo) * r.unit());
    }
    v
}

struct Case {
    op: FloatUnary,
    reference: fn(f64) -> f64,
    /// Magnitude range (log-spaced) and sign.
    lo: f64,
    hi: f64,
    signed: bool,
    /// Uniform range.
    ulo: f64,
    uhi: f64,
    /// Documented bound in ULPs (f32, f64).
    bound32: f64,
    bound64: f64,
}

fn logistic64(x: f64) -> f64 {
    // 1 / (1 + e^-x) without the rounding of the expansion (the reference).
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// What `logistic(f32)` is defined as: the expansion `1 / (1 + exp(-x))`, so 0
/// once `exp(-x)` overflows `f32` (as in XLA and the shared semantics).
fn logistic32_reference(x: f64) -> f64 {
    if (-x).exp() > f32::MAX as f64 {
        0.0
    } else {
        logistic64(x)
    }
}

fn erf64(x: f64) -> f64 {
    sf::erf(x)
}

fn cases() -> Vec<Case> {
    let c = |op, reference, lo, hi, signed, ulo, uhi, bound32, bound64| Case {
        op,
        reference,
        lo,
        hi,
        signed,
        ulo,
        uhi,
        bound32,
        bound64,
    };
    vec![
        c(
            FloatUnary::Exp,
            f64::exp as fn(f64) -> f64,
            1e-10,
            88.7,
            true,
            -103.0,
            88.7,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Expm1,
            f64::exp_m1,
            1e-30,
            88.7,
            true,
            -2.0,
            2.0,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Log,
            f64::ln,
            1e-44,
            3e38,
            false,
            0.5,
            2.0,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Log1p,
            f64::ln_1p,
            1e-30,
            3e38,
            true,
            -0.999,
            3.0,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Tanh,
            f64::tanh,
            1e-30,
            20.0,
            true,
            -3.0,
            3.0,
            5.2,
            3.0,
        ),
        c(
            FloatUnary::Logistic,
            logistic64,
            1e-30,
            100.0,
            true,
            -20.0,
            20.0,
            4.0,
            4.0,
        ),
        c(
            FloatUnary::Erf,
            erf64,
            1e-30,
            6.0,
            true,
            -4.0,
            4.0,
            3.0,
            1.0,
        ),
        c(
            FloatUnary::Sin,
            f64::sin,
            1e-30,
            1.3e5,
            true,
            -10.0,
            10.0,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Cos,
            f64::cos,
            1e-30,
            1.3e5,
            true,
            -10.0,
            10.0,
            2.0,
            2.0,
        ),
        c(
            FloatUnary::Tan,
            f64::tan,
            1e-30,
            1.3e5,
            true,
            -10.0,
            10.0,
            4.0,
            3.0,
        ),
        c(
            FloatUnary::Cbrt,
            f64::cbrt,
            1e-44,
            3e38,
            true,
            -10.0,
            10.0,
            1.0,
            1.0,
        ),
    ]
}

#[test]
fn f32_transcendentals_are_within_their_bounds() {
    let n = 40_000;
    for case in cases() {
        let xs: Vec<f32> = samples(
            n,
            case.lo,
            case.hi,
            case.signed,
            case.ulo,
            case.uhi,
            case.op as u64,
        )
        .into_iter()
        .map(|x| x as f32)
        .collect();
        for level in levels() {
            let mut out = vec![0f32; xs.len()];
            vmath::f32::unary_at(level, case.op, &xs, &mut out).unwrap();
            let (mut worst, mut at) = (0f64, 0f32);
            let reference = if case.op == FloatUnary::Logistic {
                logistic32_reference
            } else {
                case.reference
            };
            for (&x, &y) in xs.iter().zip(&out) {
                let r = reference(x as f64);
                if !r.is_finite() || r.abs() > f32::MAX as f64 {
                    continue;
                }
                let e = (y as f64 - r).abs() / ulp32(r);
                if e > worst || e.is_nan() {
                    worst = e;
                    at = x;
                }
            }
            println!(
                "f32 {:<24} {level:<8} max {worst:.3} ULP at {at:e}",
                case.op.name()
            );
            assert!(
                worst <= case.bound32,
                "f32 {} at {level}: {worst} ULP at {at:e} (bound {})",
                case.op.name(),
                case.bound32
            );
        }
    }
}

#[test]
fn f64_transcendentals_are_within_their_bounds() {
    let n = 20_000;
    for case in cases() {
        let xs = samples(
            n,
            case.lo,
            case.hi.min(700.0),
            case.signed,
            case.ulo,
            case.uhi,
            case.op as u64 + 99,
        );
        for level in levels() {
            let mut out = vec![0f64; xs.len()];
            vmath::f64::unary_at(level, case.op, &xs, &mut out).unwrap();
            let (mut worst, mut at) = (0f64, 0f64);
            for (&x, &y) in xs.iter().zip(&out) {
                let r = (case.reference)(x);
                if !r.is_finite() {
                    continue;
                }
                let e = (y - r).abs() / ulp64(r);
                if e > worst || e.is_nan() {
                    worst = e;
                    at = x;
                }
            }
            println!(
                "f64 {:<24} {level:<8} max {worst:.3} ULP at {at:e}",
                case.op.name()
            );
            assert!(
                worst <= case.bound64,
                "f64 {} at {level}: {worst} ULP at {at:e} (bound {})",
                case.op.name(),
                case.bound64
            );
        }
    }
}

#[test]
fn f32_binary_transcendentals_are_within_their_bounds() {
    let mut r = Rng(4242);
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for _ in 0..40_000 {
        let x = (r.unit() * 60.0 - 30.0).exp() as f32;
        let x = if r.next().is_multiple_of(4) { -x } else { x };
        let y = (r.unit() * 60.0 - 30.0) as f32;
        // Integer exponents exercise the sign rules.
        let y = if r.next().is_multiple_of(3) {
            y.round()
        } else {
            y
        };
        xs.push(x);
        ys.push(y);
    }
    for level in levels() {
        for (op, reference, bound) in [
            (FloatBinary::Pow, f64::powf as fn(f64, f64) -> f64, 1.0),
            (FloatBinary::Atan2, f64::atan2, 2.0),
        ] {
            let mut out = vec![0f32; xs.len()];
            vmath::f32::binary_at(
                level,
                op,
                Operand::Slice(&xs),
                Operand::Slice(&ys),
                &mut out,
            )
            .unwrap();
            let (mut worst, mut at) = (0f64, (0f32, 0f32));
            for i in 0..xs.len() {
                let want = reference(xs[i] as f64, ys[i] as f64);
                if want.is_nan() {
                    assert!(
                        out[i].is_nan(),
                        "{level} {op:?}({:e}, {:e}) = {:e}, want NaN",
                        xs[i],
                        ys[i],
                        out[i]
                    );
                    continue;
                }
                if want.abs() > f32::MAX as f64 {
                    assert!(
                        out[i].is_infinite(),
                        "{level} {op:?}({:e}, {:e}) should overflow",
                        xs[i],
                        ys[i]
                    );
                    continue;
                }
                let e = (out[i] as f64 - want).abs() / ulp32(want);
                if e > worst || e.is_nan() {
                    worst = e;
                    at = (xs[i], ys[i]);
                }
            }
            println!(
                "f32 {:<24} {level:<8} max {worst:.3} ULP at {at:?}",
                op.name()
            );
            assert!(worst <= bound, "{level} {op:?}: {worst} ULP at {at:?}");
        }
    }
}

/// Inputs whose results are special: they must be exactly the semantics'.
#[test]
fn special_values_are_exactly_the_semantics() {
    let xs32: Vec<f32> = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -1.0,
        -1e-30,
        1e-30,
        -2.0,
        88.72283,
        88.72284,
        89.0,
        -87.33654,
        -103.97208,
        -103.98,
        -104.0,
        -150.0,
        1e-45,
        -1e-45,
        9.02,
        9.1,
        10.0,
        -10.0,
        20.0,
        44.0,
        100.0,
        -100.0,
        3.92,
        3.93,
        5.0,
        -5.0,
        1e5,
        -88.8,
        -89.0,
        f32::MAX,
        f32::MIN,
        f32::from_bits(1),
    ];
    let ops: [(FloatUnary, Elem32); 11] = [
        (FloatUnary::Exp, sf::exp::<f32>),
        (FloatUnary::Expm1, sf::exponential_minus_one::<f32>),
        (FloatUnary::Log, sf::log::<f32>),
        (FloatUnary::Log1p, sf::log_plus_one::<f32>),
        (FloatUnary::Tanh, sf::tanh::<f32>),
        (FloatUnary::Logistic, sf::logistic::<f32>),
        (FloatUnary::Erf, sf::erf::<f32>),
        (FloatUnary::Sin, sf::sin::<f32>),
        (FloatUnary::Cos, sf::cos::<f32>),
        (FloatUnary::Tan, sf::tan::<f32>),
        (FloatUnary::Cbrt, sf::cbrt::<f32>),
    ];
    for level in levels() {
        for (op, want) in ops {
            let mut out = vec![0f32; xs32.len()];
            vmath::f32::unary_at(level, op, &xs32, &mut out).unwrap();
            for (&x, &g) in xs32.iter().zip(&out) {
                let w = want(x);
                let special = w.is_nan()
                    || w.is_infinite()
                    || w == 0.0
                    || w.abs() == 1.0
                    || !x.is_finite()
                    || x == 0.0;
                if !special {
                    continue;
                }
                let ok = (w.is_nan() && g.is_nan()) || g.to_bits() == w.to_bits();
                assert!(
                    ok,
                    "{level} {}({x:e}) = {g:e}, semantics give {w:e}",
                    op.name()
                );
            }
        }
        // Pow and atan2's C99 special cases.
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            2.0,
            -2.0,
            0.5,
            -0.5,
            3.0,
            -3.0,
            2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e30,
        ];
        let mut a = Vec::new();
        let mut b = Vec::new();
        for &x in &specials {
            for &y in &specials {
                a.push(x);
                b.push(y);
            }
        }
        for (op, want) in [
            (FloatBinary::Pow, sf::power::<f32> as fn(f32, f32) -> f32),
            (FloatBinary::Atan2, sf::atan2::<f32>),
        ] {
            let mut out = vec![0f32; a.len()];
            vmath::f32::binary_at(level, op, Operand::Slice(&a), Operand::Slice(&b), &mut out)
                .unwrap();
            for i in 0..a.len() {
                let w = want(a[i], b[i]);
                let g = out[i];
                let exact_expected = w.is_nan()
                    || w.is_infinite()
                    || w == 0.0
                    || w.abs() == 1.0
                    || !a[i].is_finite()
                    || !b[i].is_finite()
                    || a[i] == 0.0
                    || b[i] == 0.0;
                if exact_expected {
                    assert!(
                        (w.is_nan() && g.is_nan()) || g.to_bits() == w.to_bits(),
                        "{level} {op:?}({:e}, {:e}) = {g:e}, semantics {w:e}",
                        a[i],
                        b[i]
                    );
                } else {
                    assert!(
                        (g as f64 - w as f64).abs() <= 2.0 * ulp32(w as f64),
                        "{level} {op:?}({:e}, {:e}) = {g:e}, semantics {w:e}",
                        a[i],
                        b[i]
                    );
                }
            }
        }
        // f64 specials for the vectorised f64 functions.
        let xs64: Vec<f64> = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -1.0,
            709.78,
            709.79,
            -745.2,
            -745.1,
            -800.0,
            20.0,
            19.1,
            -40.0,
            1e-320,
            1e300,
            2e6,
        ];
        let ops64: [(FloatUnary, Elem64); 9] = [
            (FloatUnary::Exp, sf::exp::<f64>),
            (FloatUnary::Expm1, sf::exponential_minus_one::<f64>),
            (FloatUnary::Log, sf::log::<f64>),
            (FloatUnary::Log1p, sf::log_plus_one::<f64>),
            (FloatUnary::Tanh, sf::tanh::<f64>),
            (FloatUnary::Logistic, sf::logistic::<f64>),
            (FloatUnary::Sin, sf::sin::<f64>),
            (FloatUnary::Cos, sf::cos::<f64>),
            (FloatUnary::Tan, sf::tan::<f64>),
        ];
        for (op, want) in ops64 {
            let mut out = vec![0f64; xs64.len()];
            vmath::f64::unary_at(level, op, &xs64, &mut out).unwrap();
            for (&x, &g) in xs64.iter().zip(&out) {
                let w = want(x);
                let special = w.is_nan()
                    || w.is_infinite()
                    || w == 0.0
                    || w.abs() == 1.0
                    || !x.is_finite()
                    || x == 0.0;
                if special {
                    assert!(
                        (w.is_nan() && g.is_nan()) || g.to_bits() == w.to_bits(),
                        "{level} f64 {}({x:e}) = {g:e}, semantics {w:e}",
                        op.name()
                    );
                } else {
                    assert!(
                        (g - w).abs() <= 4.0 * ulp64(w),
                        "{level} f64 {}({x:e}) = {g:e}, semantics {w:e}",
                        op.name()
                    );
                }
            }
        }
    }
}

/// The trig kernels' scalar fallback for huge arguments, in place and not.
#[test]
fn huge_trig_arguments_use_the_exact_fallback() {
    let xs: Vec<f32> = vec![1e6, -3e7, 1e20, f32::MAX, 123_456.79, 131_073.0, 2.0];
    for level in levels() {
        for (op, want) in [
            (FloatUnary::Sin, sf::sin::<f32> as fn(f32) -> f32),
            (FloatUnary::Cos, sf::cos::<f32>),
            (FloatUnary::Tan, sf::tan::<f32>),
        ] {
            let mut out = vec![0f32; xs.len()];
            vmath::f32::unary_at(level, op, &xs, &mut out).unwrap();
            let mut inplace = xs.clone();
            vmath::f32::unary_inplace_at(level, op, &mut inplace);
            for i in 0..xs.len() {
                let w = want(xs[i]) as f64;
                for g in [out[i], inplace[i]] {
                    assert!(
                        (g as f64 - w).abs() <= 2.0 * ulp32(w),
                        "{level} {}({:e}) = {g:e}, want {w:e}",
                        op.name(),
                        xs[i]
                    );
                }
            }
        }
    }
}
