//! `vmath` kernels against `platform_api::semantics`, bit for bit, at every
//! level this CPU supports, for every op whose result XLA pins down exactly:
//! float arithmetic, min/max, remainder, rounding, sign, sqrt/rsqrt,
//! comparisons (IEEE and TOTALORDER), select, clamp, is-finite, every integer op
//! on every integer type, and conversions. Inputs mix special values (±0, ±inf,
//! NaNs with payloads, subnormals, integer boundaries, halves) with random
//! bit patterns, and each binary op is run in every operand form (slice,
//! scalar, in place).

use platform_api::hlo::ComparisonDirection as Dir;
use platform_api::semantics::{convert as sconv, float as sf, int as si};
use platform_host::vmath::{
    self, int::IntBinary, int::IntUnary, FloatBinary, FloatUnary, Level, Operand,
};

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
}

fn specials32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.5,
        0.49999997,
        -0.49999997,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc1_2345),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        8_388_608.0,
        8_388_607.5,
        -8_388_609.0,
        16_777_217.0,
        2_147_483_520.0,
        2_147_483_648.0,
        -2_147_483_648.0,
        -2_147_483_904.0,
        4_294_967_040.0,
        4_294_967_296.0,
        255.5,
        256.0,
        -128.5,
        -129.0,
        65_504.0,
        65_520.0,
        1e-5,
        5.9604645e-8,
        2.9802322e-8,
        3.0,
        7.0,
        -7.0,
        1e30,
        -1e-30,
    ];
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        v.push(f32::from_bits(r.next() as u32));
    }
    for _ in 0..200 {
        // Moderate magnitudes, where most data lives.
        v.push((r.next() as i32 as f32) * 1e-7);
    }
    v
}

fn specials64() -> Vec<f64> {
    let mut v: Vec<f64> = specials32().into_iter().map(f64::from).collect();
    v.extend([
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::MAX,
        4_503_599_627_370_496.5,
        4_503_599_627_370_495.5,
        9_223_372_036_854_775_808.0,
        -9_223_372_036_854_777_856.0,
        f64::from_bits(0x7ff0_0000_0000_0001),
    ]);
    let mut r = Rng(0x1234_5678_9abc_def1);
    for _ in 0..400 {
        v.push(f64::from_bits(r.next()));
    }
    v
}

fn same_bits32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

fn same_bits64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits()
}

/// For results XLA does not pin to one NaN payload (arithmetic on NaN), any
/// NaN matches any NaN.
fn same_or_nan32(a: f32, b: f32) -> bool {
    same_bits32(a, b) || (a.is_nan() && b.is_nan())
}

fn same_or_nan64(a: f64, b: f64) -> bool {
    same_bits64(a, b) || (a.is_nan() && b.is_nan())
}

/// Runs a binary float kernel in every operand form and checks each result
/// with `want(a, b)`.
macro_rules! check_binary_forms {
    ($T:ty, $module:ident, $level:expr, $op:expr, $xs:expr, $ys:expr, $want:expr, $same:expr) => {{
        let (level, op, xs, ys): (Level, FloatBinary, &[$T], &[$T]) = ($level, $op, $xs, $ys);
        let n = xs.len();
        let check = |got: &[$T], a: &dyn Fn(usize) -> $T, b: &dyn Fn(usize) -> $T, form: &str| {
            for i in 0..n {
                let w = $want(a(i), b(i));
                assert!(
                    $same(got[i], w),
                    "{level} {op:?} {form}: {:e} op {:e} gave {:e} ({:#x}), want {:e} ({:#x})",
                    a(i),
                    b(i),
                    got[i],
                    got[i].to_bits(),
                    w,
                    w.to_bits()
                );
            }
        };
        let mut dst = vec![0 as $T; n];
        vmath::$module::binary_at(level, op, Operand::Slice(xs), Operand::Slice(ys), &mut dst)
            .unwrap();
        check(&dst, &|i| xs[i], &|i| ys[i], "slice,slice");
        for &s in &[ys[0], ys[n / 3], 2.0 as $T, -0.0 as $T] {
            vmath::$module::binary_at(level, op, Operand::Slice(xs), Operand::Scalar(s), &mut dst)
                .unwrap();
            check(&dst, &|i| xs[i], &|_| s, "slice,scalar");
            vmath::$module::binary_at(level, op, Operand::Scalar(s), Operand::Slice(xs), &mut dst)
                .unwrap();
            check(&dst, &|_| s, &|i| xs[i], "scalar,slice");
            dst.copy_from_slice(xs);
            vmath::$module::binary_at(level, op, Operand::Dst, Operand::Scalar(s), &mut dst)
                .unwrap();
            check(&dst, &|i| xs[i], &|_| s, "dst,scalar");
        }
        dst.copy_from_slice(xs);
        vmath::$module::binary_at(level, op, Operand::Dst, Operand::Slice(ys), &mut dst).unwrap();
        check(&dst, &|i| xs[i], &|i| ys[i], "dst,slice");
        dst.copy_from_slice(ys);
        vmath::$module::binary_at(level, op, Operand::Slice(xs), Operand::Dst, &mut dst).unwrap();
        check(&dst, &|i| xs[i], &|i| ys[i], "slice,dst");
        dst.copy_from_slice(xs);
        vmath::$module::binary_at(level, op, Operand::Dst, Operand::Dst, &mut dst).unwrap();
        check(&dst, &|i| xs[i], &|i| xs[i], "dst,dst");
        vmath::$module::binary_at(
            level,
            op,
            Operand::Scalar(xs[1]),
            Operand::Scalar(ys[2]),
            &mut dst,
        )
        .unwrap();
        check(&dst, &|_| xs[1], &|_| ys[2], "scalar,scalar");
    }};
}

fn pairs32() -> (Vec<f32>, Vec<f32>) {
    let s = specials32();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let head = &s[..48];
    // Every pair of named specials, then random pairs.
    for &a in head {
        for &b in head {
            xs.push(a);
            ys.push(b);
        }
    }
    let mut r = Rng(77);
    for _ in 0..2000 {
        xs.push(s[(r.next() % s.len() as u64) as usize]);
        ys.push(s[(r.next() % s.len() as u64) as usize]);
    }
    (xs, ys)
}

fn pairs64() -> (Vec<f64>, Vec<f64>) {
    let s = specials64();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut r = Rng(78);
    for &a in &s[..56] {
        for &b in &s[..56] {
            xs.push(a);
            ys.push(b);
        }
    }
    for _ in 0..2000 {
        xs.push(s[(r.next() % s.len() as u64) as usize]);
        ys.push(s[(r.next() % s.len() as u64) as usize]);
    }
    (xs, ys)
}

#[test]
fn f32_exact_binary_ops_match_the_semantics_in_every_form() {
    let (xs, ys) = pairs32();
    for level in levels() {
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Add,
            &xs,
            &ys,
            sf::add::<f32>,
            same_or_nan32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Sub,
            &xs,
            &ys,
            sf::subtract::<f32>,
            same_or_nan32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Mul,
            &xs,
            &ys,
            sf::multiply::<f32>,
            same_or_nan32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Div,
            &xs,
            &ys,
            sf::divide::<f32>,
            same_or_nan32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Max,
            &xs,
            &ys,
            sf::maximum::<f32>,
            same_bits32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Min,
            &xs,
            &ys,
            sf::minimum::<f32>,
            same_bits32
        );
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Rem,
            &xs,
            &ys,
            sf::remainder::<f32>,
            same_or_nan32
        );
    }
}

#[test]
fn f64_exact_binary_ops_match_the_semantics_in_every_form() {
    let (xs, ys) = pairs64();
    for level in levels() {
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Add,
            &xs,
            &ys,
            sf::add::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Sub,
            &xs,
            &ys,
            sf::subtract::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Mul,
            &xs,
            &ys,
            sf::multiply::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Div,
            &xs,
            &ys,
            sf::divide::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Max,
            &xs,
            &ys,
            sf::maximum::<f64>,
            same_bits64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Min,
            &xs,
            &ys,
            sf::minimum::<f64>,
            same_bits64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Rem,
            &xs,
            &ys,
            sf::remainder::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Pow,
            &xs,
            &ys,
            sf::power::<f64>,
            same_or_nan64
        );
        check_binary_forms!(
            f64,
            f64,
            level,
            FloatBinary::Atan2,
            &xs,
            &ys,
            sf::atan2::<f64>,
            same_or_nan64
        );
    }
}

#[test]
fn fused_multiply_add_rounds_once_like_the_contraction_semantics() {
    use platform_api::semantics::contraction::Contraction;
    let (xs, ys) = pairs32();
    let zs: Vec<f32> = xs.iter().rev().copied().collect();
    let (xd, yd) = pairs64();
    let zd: Vec<f64> = xd.iter().rev().copied().collect();
    for level in levels() {
        for how in [
            Contraction::Add,
            Contraction::SubtractFromProduct,
            Contraction::SubtractProduct,
        ] {
            let want32 = |a: f32, b: f32, c: f32| match how {
                Contraction::Add => a.mul_add(b, c),
                Contraction::SubtractFromProduct => a.mul_add(b, -c),
                Contraction::SubtractProduct => (-a).mul_add(b, c),
            };
            let mut out = vec![0f32; xs.len()];
            vmath::f32::fused_multiply_add_at(
                level,
                how,
                Operand::Slice(&xs),
                Operand::Slice(&ys),
                Operand::Slice(&zs),
                &mut out,
            )
            .unwrap();
            for i in 0..xs.len() {
                assert!(
                    same_or_nan32(out[i], want32(xs[i], ys[i], zs[i])),
                    "{level} {how:?} {:e} {:e} {:e}",
                    xs[i],
                    ys[i],
                    zs[i]
                );
            }
            // In place into the addend, with a scalar factor.
            out.copy_from_slice(&zs);
            vmath::f32::fused_multiply_add_at(
                level,
                how,
                Operand::Slice(&xs),
                Operand::Scalar(0.1),
                Operand::Dst,
                &mut out,
            )
            .unwrap();
            for i in 0..xs.len() {
                assert!(same_or_nan32(out[i], want32(xs[i], 0.1, zs[i])));
            }
            let mut out = vec![0f64; xd.len()];
            vmath::f64::fused_multiply_add_at(
                level,
                how,
                Operand::Slice(&xd),
                Operand::Slice(&yd),
                Operand::Slice(&zd),
                &mut out,
            )
            .unwrap();
            for i in 0..xd.len() {
                let want = match how {
                    Contraction::Add => xd[i].mul_add(yd[i], zd[i]),
                    Contraction::SubtractFromProduct => xd[i].mul_add(yd[i], -zd[i]),
                    Contraction::SubtractProduct => (-xd[i]).mul_add(yd[i], zd[i]),
                };
                assert!(same_or_nan64(out[i], want), "{level} f64 {how:?}");
            }
        }
    }
}

#[test]
fn remainder_with_huge_quotients_takes_the_exact_path() {
    let xs: Vec<f32> = vec![1e30, -3e38, 16_777_217.0, 1e10, -7.5e20, 5.0];
    let ys: Vec<f32> = vec![3.0, 7.0e-3, 1.0, 3.3, -0.1, f32::from_bits(1)];
    for level in levels() {
        check_binary_forms!(
            f32,
            f32,
            level,
            FloatBinary::Rem,
            &xs,
            &ys,
            sf::remainder::<f32>,
            same_or_nan32
        );
    }
}

type Elem32 = fn(f32) -> f32;
type Elem64 = fn(f64) -> f64;

#[test]
fn exact_unary_ops_match_the_semantics() {
    let ops32: [(FloatUnary, Elem32, bool); 10] = [
        (FloatUnary::Neg, sf::negate::<f32>, true),
        (FloatUnary::Abs, sf::abs::<f32>, true),
        (FloatUnary::Sign, sf::sign::<f32>, true),
        (FloatUnary::Sqrt, sf::sqrt::<f32>, false),
        (FloatUnary::Rsqrt, sf::rsqrt::<f32>, false),
        (FloatUnary::Floor, sf::floor::<f32>, false),
        (FloatUnary::Ceil, sf::ceil::<f32>, false),
        (
            FloatUnary::RoundNearestEven,
            sf::round_nearest_even::<f32>,
            false,
        ),
        (
            FloatUnary::RoundNearestAfz,
            sf::round_nearest_afz::<f32>,
            false,
        ),
        (FloatUnary::Cbrt, sf::cbrt::<f32>, false),
    ];
    let xs = specials32();
    for level in levels() {
        for (op, want, bit_exact) in ops32 {
            let mut dst = vec![0f32; xs.len()];
            vmath::f32::unary_at(level, op, &xs, &mut dst).unwrap();
            let mut inplace = xs.clone();
            vmath::f32::unary_inplace_at(level, op, &mut inplace);
            for (i, &x) in xs.iter().enumerate() {
                let w = want(x);
                let ok = |g: f32| {
                    if bit_exact {
                        same_bits32(g, w)
                    } else {
                        same_or_nan32(g, w)
                    }
                };
                // cbrt is a transcendental: correctly rounded here, but allow
                // the C library's own last-bit error.
                let ok = |g: f32| {
                    ok(g)
                        || (op == FloatUnary::Cbrt
                            && (g.to_bits() as i64 - w.to_bits() as i64).abs() <= 1)
                };
                assert!(
                    ok(dst[i]),
                    "{level} {op:?}({x:e}) = {:e}, want {w:e}",
                    dst[i]
                );
                assert!(
                    ok(inplace[i]),
                    "{level} {op:?} in place ({x:e}) = {:e}, want {w:e}",
                    inplace[i]
                );
            }
        }
    }
    let ops64: [(FloatUnary, Elem64, bool); 9] = [
        (FloatUnary::Neg, sf::negate::<f64>, true),
        (FloatUnary::Abs, sf::abs::<f64>, true),
        (FloatUnary::Sign, sf::sign::<f64>, true),
        (FloatUnary::Sqrt, sf::sqrt::<f64>, false),
        (FloatUnary::Rsqrt, sf::rsqrt::<f64>, false),
        (FloatUnary::Floor, sf::floor::<f64>, false),
        (FloatUnary::Ceil, sf::ceil::<f64>, false),
        (
            FloatUnary::RoundNearestEven,
            sf::round_nearest_even::<f64>,
            false,
        ),
        (
            FloatUnary::RoundNearestAfz,
            sf::round_nearest_afz::<f64>,
            false,
        ),
    ];
    let xs = specials64();
    for level in levels() {
        for (op, want, bit_exact) in ops64 {
            let mut dst = vec![0f64; xs.len()];
            vmath::f64::unary_at(level, op, &xs, &mut dst).unwrap();
            for (i, &x) in xs.iter().enumerate() {
                let w = want(x);
                let ok = if bit_exact {
                    same_bits64(dst[i], w)
                } else {
                    same_or_nan64(dst[i], w)
                };
                assert!(ok, "{level} {op:?}({x:e}) = {:e}, want {w:e}", dst[i]);
            }
        }
    }
}

const DIRS: [Dir; 6] = [Dir::Eq, Dir::Ne, Dir::Lt, Dir::Le, Dir::Gt, Dir::Ge];

fn float_cmp<T: sf::FloatSemantics>(dir: Dir, total: bool, a: T, b: T) -> bool {
    if total {
        let (x, y) = (sf::total_order_key(a), sf::total_order_key(b));
        match dir {
            Dir::Eq => x == y,
            Dir::Ne => x != y,
            Dir::Lt => x < y,
            Dir::Le => x <= y,
            Dir::Gt => x > y,
            Dir::Ge => x >= y,
        }
    } else {
        match dir {
            Dir::Eq => sf::eq(a, b),
            Dir::Ne => sf::ne(a, b),
            Dir::Lt => sf::lt(a, b),
            Dir::Le => sf::le(a, b),
            Dir::Gt => sf::gt(a, b),
            Dir::Ge => sf::ge(a, b),
        }
    }
}

#[test]
fn comparisons_is_finite_select_and_clamp_match_the_semantics() {
    let (xs, ys) = pairs32();
    let (xd, yd) = pairs64();
    for level in levels() {
        for dir in DIRS {
            for total in [false, true] {
                let mut out = vec![9u8; xs.len()];
                vmath::f32::compare_at(
                    level,
                    dir,
                    total,
                    Operand::Slice(&xs),
                    Operand::Slice(&ys),
                    &mut out,
                )
                .unwrap();
                for i in 0..xs.len() {
                    assert_eq!(
                        out[i] != 0,
                        float_cmp(dir, total, xs[i], ys[i]),
                        "{level} {dir:?} total={total} {:e} {:e}",
                        xs[i],
                        ys[i]
                    );
                    assert!(out[i] <= 1);
                }
                vmath::f32::compare_at(
                    level,
                    dir,
                    total,
                    Operand::Scalar(1.5),
                    Operand::Slice(&ys),
                    &mut out,
                )
                .unwrap();
                for i in 0..xs.len() {
                    assert_eq!(out[i] != 0, float_cmp(dir, total, 1.5, ys[i]));
                }
                let mut out = vec![9u8; xd.len()];
                vmath::f64::compare_at(
                    level,
                    dir,
                    total,
                    Operand::Slice(&xd),
                    Operand::Slice(&yd),
                    &mut out,
                )
                .unwrap();
                for i in 0..xd.len() {
                    assert_eq!(
                        out[i] != 0,
                        float_cmp(dir, total, xd[i], yd[i]),
                        "{level} f64 {dir:?} total={total}"
                    );
                }
            }
        }
        let mut fin = vec![9u8; xs.len()];
        vmath::f32::is_finite_at(level, &xs, &mut fin).unwrap();
        for (i, &x) in xs.iter().enumerate() {
            assert_eq!(fin[i] != 0, sf::is_finite(x), "{level} is_finite({x:e})");
        }
        let mut fin = vec![9u8; xd.len()];
        vmath::f64::is_finite_at(level, &xd, &mut fin).unwrap();
        for (i, &x) in xd.iter().enumerate() {
            assert_eq!(fin[i] != 0, sf::is_finite(x));
        }
        // select: any byte but 0 is true.
        let pred: Vec<u8> = (0..xs.len()).map(|i| [0u8, 1, 0, 1, 1][i % 5]).collect();
        let mut out = vec![0f32; xs.len()];
        vmath::select_at(
            level,
            Operand::Slice(&pred),
            Operand::Slice(&xs),
            Operand::Slice(&ys),
            &mut out,
        )
        .unwrap();
        for i in 0..xs.len() {
            assert!(same_bits32(
                out[i],
                if pred[i] != 0 { xs[i] } else { ys[i] }
            ));
        }
        out.copy_from_slice(&ys);
        vmath::select_at(
            level,
            Operand::Slice(&pred),
            Operand::Scalar(7.0f32),
            Operand::Dst,
            &mut out,
        )
        .unwrap();
        for i in 0..xs.len() {
            assert!(same_bits32(out[i], if pred[i] != 0 { 7.0 } else { ys[i] }));
        }
        vmath::select_at(
            level,
            Operand::Scalar(0),
            Operand::Slice(&xs),
            Operand::Scalar(2.0f32),
            &mut out,
        )
        .unwrap();
        assert!(out.iter().all(|&v| v == 2.0));
        let bytes: Vec<u8> = (0..xs.len()).map(|i| i as u8).collect();
        let mut out8 = vec![0u8; xs.len()];
        vmath::select_at(
            level,
            Operand::Slice(&pred),
            Operand::Slice(&bytes),
            Operand::Scalar(255u8),
            &mut out8,
        )
        .unwrap();
        for i in 0..xs.len() {
            assert_eq!(out8[i], if pred[i] != 0 { bytes[i] } else { 255 });
        }
        // clamp with scalar and slice bounds (NaN bounds included).
        let mut out = vec![0f32; xs.len()];
        vmath::f32::clamp_at(
            level,
            Operand::Scalar(-1.0),
            Operand::Slice(&xs),
            Operand::Scalar(1.0),
            &mut out,
        )
        .unwrap();
        for i in 0..xs.len() {
            assert!(
                same_bits32(out[i], sf::clamp(-1.0, xs[i], 1.0)),
                "{level} clamp {:e}",
                xs[i]
            );
        }
        vmath::f32::clamp_at(
            level,
            Operand::Slice(&ys),
            Operand::Slice(&xs),
            Operand::Scalar(0.0),
            &mut out,
        )
        .unwrap();
        for i in 0..xs.len() {
            assert!(same_bits32(out[i], sf::clamp(ys[i], xs[i], 0.0)));
        }
    }
}

fn ints<T: Copy>(cast: impl Fn(u64) -> T, edges: &[u64]) -> Vec<T> {
    let mut v: Vec<T> = edges.iter().map(|&e| cast(e)).collect();
    let mut r = Rng(5);
    for _ in 0..300 {
        v.push(cast(r.next()));
    }
    for k in 0..70u64 {
        v.push(cast(k));
        v.push(cast(k.wrapping_neg()));
    }
    v
}

macro_rules! check_int_type {
    ($T:ty) => {{
        let edges = [
            0u64,
            1,
            2,
            3,
            7,
            8,
            31,
            32,
            33,
            63,
            64,
            65,
            127,
            128,
            255,
            256,
            u64::MAX,
            u64::MAX - 1,
            <$T>::MAX as u64,
            <$T>::MIN as u64,
            (<$T>::MAX as u64).wrapping_add(1),
        ];
        let xs: Vec<$T> = ints(|v| v as $T, &edges);
        let mut ys: Vec<$T> = xs.iter().rev().copied().collect();
        ys.rotate_left(7);
        for level in levels() {
            for op in IntBinary::ALL {
                let want: fn($T, $T) -> $T = match op {
                    IntBinary::Add => si::add,
                    IntBinary::Sub => si::subtract,
                    IntBinary::Mul => si::multiply,
                    IntBinary::Div => si::divide,
                    IntBinary::Rem => si::remainder,
                    IntBinary::Max => si::maximum,
                    IntBinary::Min => si::minimum,
                    IntBinary::And => si::and,
                    IntBinary::Or => si::or,
                    IntBinary::Xor => si::xor,
                    IntBinary::ShiftLeft => si::shift_left,
                    IntBinary::ShiftRightLogical => si::shift_right_logical,
                    IntBinary::ShiftRightArithmetic => si::shift_right_arithmetic,
                    IntBinary::Pow => si::power,
                };
                let mut out = vec![0 as $T; xs.len()];
                vmath::int::binary_at(
                    level,
                    op,
                    Operand::Slice(&xs),
                    Operand::Slice(&ys),
                    &mut out,
                )
                .unwrap();
                for i in 0..xs.len() {
                    assert_eq!(
                        out[i],
                        want(xs[i], ys[i]),
                        "{level} {} {op:?} {} {}",
                        stringify!($T),
                        xs[i],
                        ys[i]
                    );
                }
                for s in [0 as $T, 1 as $T, 5 as $T, <$T>::MAX, <$T>::MIN] {
                    vmath::int::binary_at(
                        level,
                        op,
                        Operand::Slice(&xs),
                        Operand::Scalar(s),
                        &mut out,
                    )
                    .unwrap();
                    for i in 0..xs.len() {
                        assert_eq!(
                            out[i],
                            want(xs[i], s),
                            "{level} {} {op:?} {} {s}",
                            stringify!($T),
                            xs[i]
                        );
                    }
                    out.copy_from_slice(&xs);
                    vmath::int::binary_at(level, op, Operand::Scalar(s), Operand::Dst, &mut out)
                        .unwrap();
                    for i in 0..xs.len() {
                        assert_eq!(
                            out[i],
                            want(s, xs[i]),
                            "{level} {} {op:?} {s} {}",
                            stringify!($T),
                            xs[i]
                        );
                    }
                }
            }
            for op in IntUnary::ALL {
                let want: Option<fn($T) -> $T> = match op {
                    IntUnary::Neg => Some(si::negate),
                    IntUnary::Abs => Some(si::abs),
                    IntUnary::Not => Some(si::not),
                    IntUnary::PopCount => Some(si::popcnt),
                    IntUnary::Clz => Some(si::count_leading_zeros),
                    IntUnary::Sign => {
                        <$T as si::IntSemantics>::SIGNED.then_some(si::sign as fn($T) -> $T)
                    }
                };
                let mut out = vec![0 as $T; xs.len()];
                let got = vmath::int::unary_at(level, op, &xs, &mut out);
                match want {
                    Some(want) => {
                        got.unwrap();
                        for i in 0..xs.len() {
                            assert_eq!(out[i], want(xs[i]), "{level} {op:?} {}", xs[i]);
                        }
                    }
                    None => assert!(got.is_err(), "sign of an unsigned type must be rejected"),
                }
            }
            for dir in DIRS {
                let mut out = vec![9u8; xs.len()];
                vmath::int::compare_at(
                    level,
                    dir,
                    Operand::Slice(&xs),
                    Operand::Slice(&ys),
                    &mut out,
                )
                .unwrap();
                for i in 0..xs.len() {
                    let (a, b) = (xs[i], ys[i]);
                    let want = match dir {
                        Dir::Eq => a == b,
                        Dir::Ne => a != b,
                        Dir::Lt => a < b,
                        Dir::Le => a <= b,
                        Dir::Gt => a > b,
                        Dir::Ge => a >= b,
                    };
                    assert_eq!(out[i], want as u8);
                }
            }
            let mut out = vec![0 as $T; xs.len()];
            vmath::int::clamp_at(
                level,
                Operand::Scalar(3 as $T),
                Operand::Slice(&xs),
                Operand::Slice(&ys),
                &mut out,
            )
            .unwrap();
            for i in 0..xs.len() {
                assert_eq!(out[i], si::minimum(ys[i], si::maximum(3 as $T, xs[i])));
            }
        }
    }};
}

#[test]
fn integer_ops_match_the_semantics_for_every_type() {
    check_int_type!(i8);
    check_int_type!(i16);
    check_int_type!(i32);
    check_int_type!(i64);
    check_int_type!(u8);
    check_int_type!(u16);
    check_int_type!(u32);
    check_int_type!(u64);
}

macro_rules! check_convert {
    ($level:expr, $xs:expr, $S:ty => $($D:ty),*) => {{
        let xs: &[$S] = $xs;
        $(
            let mut out = vec![<$D as Default>::default(); xs.len()];
            vmath::convert::convert_at($level, xs, &mut out).unwrap();
            for i in 0..xs.len() {
                let want: $D = sconv::convert(xs[i]);
                assert!(
                    format!("{:?}", out[i]) == format!("{:?}", want),
                    "{} convert {} → {}: {:?} gave {:?}, want {:?}",
                    $level, stringify!($S), stringify!($D), xs[i], out[i], want
                );
            }
        )*
    }};
}

#[test]
fn conversions_match_the_semantics() {
    let f = specials32();
    let d = specials64();
    let i32s = ints(
        |v| v as i32,
        &[0, 1, 16_777_217, u64::MAX, 0x8000_0000, 0x7fff_ffff],
    );
    let i64s = ints(
        |v| v as i64,
        &[
            0,
            1,
            9_007_199_254_740_993,
            u64::MAX,
            1 << 63,
            (1 << 63) - 1,
        ],
    );
    let u8s: Vec<u8> = (0..=255).collect();
    let u32s = ints(|v| v as u32, &[0, 1, u32::MAX as u64]);
    let preds: Vec<sconv::Pred> = (0..10).map(|i| sconv::Pred((i % 2) as u8)).collect();
    for level in levels() {
        check_convert!(level, &f, f32 => i8, i16, i32, i64, u8, u16, u32, u64, f64, sconv::Pred);
        check_convert!(level, &d, f64 => i8, i16, i32, i64, u8, u16, u32, u64, f32, sconv::Pred);
        check_convert!(level, &i32s, i32 => i8, i64, u8, u32, u64, f32, f64, sconv::Pred);
        check_convert!(level, &i64s, i64 => i32, u64, f32, f64, sconv::Pred);
        check_convert!(level, &u8s, u8 => i32, f32, f64, sconv::Pred);
        check_convert!(level, &u32s, u32 => i32, i64, f32, f64);
        check_convert!(level, &preds, sconv::Pred => i32, f32, f64, u8);
    }
}

#[test]
fn half_conversions_match_the_semantics() {
    let f = specials32();
    // Every f16 / bf16 bit pattern.
    let halves: Vec<u16> = (0..=u16::MAX).collect();
    let as_literal = |ty: platform_api::ElementType, bits: &[u16]| {
        let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        let shape = platform_api::Shape::Array(platform_api::ArrayShape::new(ty, vec![bits.len()]));
        platform_api::Literal::from_bytes(shape, &bytes).unwrap()
    };
    let want_f16 = platform_api::semantics::convert(
        &as_literal(platform_api::ElementType::F16, &halves),
        platform_api::ElementType::F32,
    )
    .unwrap();
    let want_bf16 = platform_api::semantics::convert(
        &as_literal(platform_api::ElementType::BF16, &halves),
        platform_api::ElementType::F32,
    )
    .unwrap();
    for level in levels() {
        let mut out = vec![0f32; halves.len()];
        vmath::convert::f16_to_f32_at(level, &halves, &mut out).unwrap();
        for (i, (&g, &w)) in out.iter().zip(want_f16.data::<f32>().unwrap()).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{level} f16 {i:#06x} → f32");
        }
        vmath::convert::bf16_to_f32_at(level, &halves, &mut out).unwrap();
        for (i, (&g, &w)) in out.iter().zip(want_bf16.data::<f32>().unwrap()).enumerate() {
            assert_eq!(g.to_bits(), w.to_bits(), "{level} bf16 {i:#06x} → f32");
        }
        let mut h = vec![0u16; f.len()];
        vmath::convert::f32_to_f16_at(level, &f, &mut h).unwrap();
        for (i, &x) in f.iter().enumerate() {
            assert_eq!(
                h[i],
                sconv::f16_from_f32(x).to_bits(),
                "{level} f32 {x:e} → f16"
            );
        }
        vmath::convert::f32_to_bf16_at(level, &f, &mut h).unwrap();
        for (i, &x) in f.iter().enumerate() {
            assert_eq!(
                h[i],
                sconv::bf16_from_f32(x).to_bits(),
                "{level} f32 {x:e} → bf16"
            );
        }
    }
}

#[test]
fn mismatched_lengths_and_bad_operands_are_errors_not_panics() {
    let a = [1.0f32; 8];
    let mut d = [0f32; 7];
    let e = vmath::f32::exp(&a, &mut d).unwrap_err();
    assert!(
        e.to_string().contains("8") && e.to_string().contains("7"),
        "{e}"
    );
    assert!(vmath::f32::add(Operand::Slice(&a), Operand::Scalar(1.0), &mut d).is_err());
    let mut p = [0u8; 8];
    assert!(vmath::f32::compare(Dir::Lt, false, Operand::Dst, Operand::Slice(&a), &mut p).is_err());
    assert!(vmath::select(
        Operand::Dst,
        Operand::Slice(&p),
        Operand::Slice(&p),
        &mut [0u8; 8]
    )
    .is_err());
    let mut i = [0i32; 3];
    assert!(vmath::convert::convert(&a, &mut i).is_err());
    assert!(vmath::convert::f32_to_f16(&a, &mut [0u16; 2]).is_err());
    assert!(vmath::int::binary(
        IntBinary::Add,
        Operand::Slice(&[1i32; 2]),
        Operand::Scalar(1),
        &mut i
    )
    .is_err());
}

#[test]
fn levels_are_ordered_and_settable() {
    let best = vmath::detected_level();
    assert!(vmath::level() <= best);
    assert!(Level::Baseline.is_supported());
    for l in Level::ALL {
        assert_eq!(Level::from_name(l.name()), Some(l));
        if l > best {
            assert!(vmath::set_level(l).is_err());
        }
    }
    assert_eq!(Level::from_name("AVX2"), Some(Level::Avx2));
    assert_eq!(Level::from_name("sse9"), None);
}

/// `f32` `log1p` runs vectorised because it is the C library's algorithm bit
/// for bit (XLA CPU calls `log1pf`): checked against `f32::ln_1p` (the C
/// library's `log1pf`) on every 251st bit pattern, the special values, and a
/// dense sweep around each range boundary of the algorithm. (All 2^32 inputs
/// agreed when the port was written; that run takes minutes.)
#[test]
fn f32_log1p_is_the_c_librarys_bit_for_bit() {
    let mut xs: Vec<f32> = (0..=u32::MAX / 251)
        .map(|i| f32::from_bits(i * 251))
        .collect();
    xs.extend(specials32());
    // Where the C code switches path: |x| = 2^-54 and 2^-29, -0.2929 and
    // 0.41422 (the unsplit range), -1, 2^53, and the mantissa split of 1 + x.
    for edge in [
        0x2480_0000u32,
        0x3100_0000,
        0x3ed4_13d7,
        0xbe95_f61f,
        0xbf80_0000,
        0x5a00_0000,
        0x3fb5_04f7,
        0x3f35_04f7,
        0x7f80_0000,
    ] {
        for d in 0..2048u32 {
            xs.push(f32::from_bits(edge.wrapping_add(d).wrapping_sub(1024)));
            xs.push(-f32::from_bits(edge.wrapping_add(d).wrapping_sub(1024)));
        }
    }
    for level in levels() {
        let mut got = vec![0f32; xs.len()];
        vmath::f32::unary_at(level, FloatUnary::Log1p, &xs, &mut got).unwrap();
        let bad: Vec<(f32, f32, f32)> = xs
            .iter()
            .zip(&got)
            .map(|(&x, &g)| (x, g, x.ln_1p()))
            .filter(|&(_, g, w)| !same_or_nan32(g, w))
            .take(5)
            .collect();
        assert!(bad.is_empty(), "{level:?}: (x, vmath, libm) {bad:?}");
    }
}

/// `select` of every element width, with each branch a slice, a broadcast
/// scalar or the destination itself, over lengths that leave every possible
/// tail after the vector loop, and around the generic loop's chunks of 64;
/// any nonzero predicate byte is true.
#[test]
fn select_reads_every_branch_form_at_every_width_and_length() {
    fn check<T: vmath::SelectElem + PartialEq + std::fmt::Debug>(
        level: Level,
        make: impl Fn(u64) -> T,
    ) {
        for n in (0..=37usize).chain([63, 64, 65, 127, 128, 130, 200]) {
            let pred: Vec<u8> = (0..n)
                .map(|i| [0u8, 1, 2, 0, 0x80, 255, 0][i % 7])
                .collect();
            let a: Vec<T> = (0..n as u64).map(|i| make(1000 + i)).collect();
            let b: Vec<T> = (0..n as u64).map(|i| make(2000 + i)).collect();
            let before: Vec<T> = (0..n as u64).map(|i| make(3000 + i)).collect();
            fn forms<T: Copy>(s: &[T], v: T) -> [(Operand<'_, T>, Option<Vec<T>>); 3] {
                [
                    (Operand::Slice(s), Some(s.to_vec())),
                    (Operand::Scalar(v), Some(vec![v; s.len()])),
                    (Operand::Dst, None),
                ]
            }
            for (t, t_vals) in forms(&a, make(7)) {
                for (f, f_vals) in forms(&b, make(9)) {
                    let mut out = before.clone();
                    vmath::select_at(level, Operand::Slice(&pred), t, f, &mut out).unwrap();
                    let t_vals = t_vals.clone().unwrap_or_else(|| before.clone());
                    let f_vals = f_vals.unwrap_or_else(|| before.clone());
                    for i in 0..n {
                        let want = if pred[i] != 0 { t_vals[i] } else { f_vals[i] };
                        assert_eq!(out[i], want, "{level} n={n} i={i} {t:?} / {f:?}");
                    }
                }
            }
        }
    }
    for level in levels() {
        check::<u8>(level, |v| v as u8);
        check::<u16>(level, |v| v as u16);
        check::<u32>(level, |v| v as u32 | 0x8000_0000);
        check::<f32>(level, |v| f32::from_bits(0x3f80_0000 | v as u32));
        check::<u64>(level, |v| v | 0xdead_0000_0000_0000);
        check::<f64>(level, |v| -(v as f64));
    }
}
