//! Throughput of the `vmath` slice kernels: ns per element on a 1024-element
//! block that stays in L1, for every level this CPU supports, next to the
//! scalar `std` function in a plain loop.
//!
//! Run: `cargo bench -p platform-host --bench vmath` (optionally followed by
//! `-- FILTER` to run only the rows whose name contains FILTER). Prints a
//! Markdown table. Each cell is the best of several timed batches of calls, so
//! it measures the kernel, not the machine's noise.

use platform_host::vmath::{self, FloatBinary, FloatUnary, Level, Operand};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1024;

/// Best ns/element over a few batches of `f`, each batch about 2 ms.
fn time(mut f: impl FnMut()) -> f64 {
    // Calibrate the batch size.
    let mut reps = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        if t.elapsed().as_secs_f64() > 2e-3 || reps > 1 << 20 {
            break;
        }
        reps *= 2;
    }
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / (reps * N) as f64);
    }
    best
}

/// Inputs in the domain where each function does real work.
fn input32(op: &str, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let (lo, hi) = match op {
        "log" | "sqrt" | "rsqrt" | "cbrt" => (1e-3, 1e3),
        "log-plus-one" => (-0.9, 100.0),
        "exponential" | "exponential-minus-one" => (-80.0, 80.0),
        "sine" | "cosine" | "tan" => (-100.0, 100.0),
        "power" => (0.1, 10.0),
        _ => (-10.0, 10.0),
    };
    (0..N)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            lo + (hi - lo) * (s as f32 / u32::MAX as f32)
        })
        .collect()
}

fn std32(op: FloatUnary) -> Option<fn(f32) -> f32> {
    Some(match op {
        FloatUnary::Exp => f32::exp,
        FloatUnary::Expm1 => f32::exp_m1,
        FloatUnary::Log => f32::ln,
        FloatUnary::Log1p => f32::ln_1p,
        FloatUnary::Tanh => f32::tanh,
        FloatUnary::Logistic => |x| 1.0 / (1.0 + (-x).exp()),
        FloatUnary::Sin => f32::sin,
        FloatUnary::Cos => f32::cos,
        FloatUnary::Tan => f32::tan,
        FloatUnary::Sqrt => f32::sqrt,
        FloatUnary::Cbrt => f32::cbrt,
        FloatUnary::Floor => f32::floor,
        FloatUnary::RoundNearestAfz => f32::round,
        _ => return None,
    })
}

fn std64(op: FloatUnary) -> Option<fn(f64) -> f64> {
    Some(match op {
        FloatUnary::Exp => f64::exp,
        FloatUnary::Expm1 => f64::exp_m1,
        FloatUnary::Log => f64::ln,
        FloatUnary::Log1p => f64::ln_1p,
        FloatUnary::Tanh => f64::tanh,
        FloatUnary::Logistic => |x| 1.0 / (1.0 + (-x).exp()),
        FloatUnary::Sin => f64::sin,
        FloatUnary::Cos => f64::cos,
        FloatUnary::Tan => f64::tan,
        FloatUnary::Sqrt => f64::sqrt,
        FloatUnary::Cbrt => f64::cbrt,
        _ => return None,
    })
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect();
    let wanted = |name: &str| filter.as_ref().is_none_or(|f| name.contains(f.as_str()));
    print!("| kernel (ns/element, {N}-element block) |");
    for l in &levels {
        print!(" {l} |");
    }
    println!(" std scalar loop |");
    print!("| --- |");
    for _ in &levels {
        print!(" --- |");
    }
    println!(" --- |");
    let cell = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "—".into());

    for op in FloatUnary::ALL {
        let name = format!("f32 {}", op.name());
        if !wanted(&name) {
            continue;
        }
        let src = input32(op.name(), 1);
        let mut dst = vec![0f32; N];
        print!("| {name} |");
        for &l in &levels {
            let t =
                time(|| vmath::f32::unary_at(l, op, black_box(&src), black_box(&mut dst)).unwrap());
            print!(" {} |", cell(Some(t)));
        }
        let s = std32(op).map(|f| {
            time(|| {
                for (d, &x) in dst.iter_mut().zip(black_box(&src)) {
                    *d = f(x);
                }
                black_box(&mut dst);
            })
        });
        println!(" {} |", cell(s));
    }
    for op in FloatBinary::ALL {
        let name = format!("f32 {}", op.name());
        if !wanted(&name) {
            continue;
        }
        let a = input32(op.name(), 2);
        let b = input32(op.name(), 3);
        let mut dst = vec![0f32; N];
        print!("| {name} |");
        for &l in &levels {
            let t = time(|| {
                vmath::f32::binary_at(
                    l,
                    op,
                    Operand::Slice(black_box(&a)),
                    Operand::Slice(black_box(&b)),
                    black_box(&mut dst),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        let f: Option<fn(f32, f32) -> f32> = match op {
            FloatBinary::Add => Some(|x, y| x + y),
            FloatBinary::Mul => Some(|x, y| x * y),
            FloatBinary::Pow => Some(f32::powf),
            FloatBinary::Atan2 => Some(f32::atan2),
            FloatBinary::Rem => Some(|x, y| x % y),
            _ => None,
        };
        let s = f.map(|f| {
            time(|| {
                for ((d, &x), &y) in dst.iter_mut().zip(black_box(&a)).zip(black_box(&b)) {
                    *d = f(x, y);
                }
                black_box(&mut dst);
            })
        });
        println!(" {} |", cell(s));
    }
    // In-place forms of the common cases.
    if wanted("f32 add in place") {
        let b = input32("add", 4);
        let mut acc = input32("add", 5);
        print!("| f32 add in place (dst += b) |");
        for &l in &levels {
            let t = time(|| {
                vmath::f32::binary_at(
                    l,
                    FloatBinary::Add,
                    Operand::Dst,
                    Operand::Slice(black_box(&b)),
                    black_box(&mut acc),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        println!(" — |");
    }
    if wanted("f32 fma") {
        let a = input32("mul", 4);
        let b = input32("mul", 5);
        let c = input32("mul", 6);
        let mut dst = vec![0f32; N];
        print!("| f32 fused multiply-add (a*b+c, one rounding) |");
        for &l in &levels {
            let t = time(|| {
                vmath::f32::fused_multiply_add_at(
                    l,
                    vmath::Contraction::Add,
                    Operand::Slice(black_box(&a)),
                    Operand::Slice(black_box(&b)),
                    Operand::Slice(black_box(&c)),
                    black_box(&mut dst),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        println!(" — |");
    }
    if wanted("f32 mul scalar") {
        let a = input32("mul", 4);
        let mut dst = vec![0f32; N];
        print!("| f32 mul by scalar |");
        for &l in &levels {
            let t = time(|| {
                vmath::f32::binary_at(
                    l,
                    FloatBinary::Mul,
                    Operand::Slice(black_box(&a)),
                    Operand::Scalar(1.5),
                    black_box(&mut dst),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        println!(" — |");
    }
    for op in FloatUnary::ALL {
        let name = format!("f64 {}", op.name());
        if !wanted(&name) {
            continue;
        }
        let src: Vec<f64> = input32(op.name(), 6).into_iter().map(f64::from).collect();
        let mut dst = vec![0f64; N];
        print!("| {name} |");
        for &l in &levels {
            let t =
                time(|| vmath::f64::unary_at(l, op, black_box(&src), black_box(&mut dst)).unwrap());
            print!(" {} |", cell(Some(t)));
        }
        let s = std64(op).map(|f| {
            time(|| {
                for (d, &x) in dst.iter_mut().zip(black_box(&src)) {
                    *d = f(x);
                }
                black_box(&mut dst);
            })
        });
        println!(" {} |", cell(s));
    }
    if wanted("f32 compare") {
        let a = input32("lt", 7);
        let b = input32("lt", 8);
        let mut dst = vec![0u8; N];
        print!("| f32 compare LT → pred |");
        for &l in &levels {
            let t = time(|| {
                vmath::f32::compare_at(
                    l,
                    vmath::ComparisonDirection::Lt,
                    false,
                    Operand::Slice(black_box(&a)),
                    Operand::Slice(black_box(&b)),
                    black_box(&mut dst),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        println!(" — |");
    }
    if wanted("select") {
        let a = input32("x", 7);
        let b = input32("x", 8);
        let p: Vec<u8> = a.iter().map(|&x| (x > 0.0) as u8).collect();
        let mut dst = vec![0f32; N];
        print!("| f32 select |");
        for &l in &levels {
            let t = time(|| {
                vmath::select_at(
                    l,
                    Operand::Slice(black_box(&p)),
                    Operand::Slice(black_box(&a)),
                    Operand::Slice(black_box(&b)),
                    black_box(&mut dst),
                )
                .unwrap()
            });
            print!(" {} |", cell(Some(t)));
        }
        println!(" — |");
    }
    if wanted("convert") {
        let a: Vec<f32> = input32("x", 9).into_iter().map(|x| x * 1e3).collect();
        let a64: Vec<f64> = a.iter().map(|&x| x as f64).collect();
        let ints: Vec<i32> = a.iter().map(|&x| x as i32).collect();
        let longs: Vec<i64> = a.iter().map(|&x| x as i64).collect();
        let bytes: Vec<u8> = a.iter().map(|&x| x as u8).collect();
        let mut i32s = vec![0i32; N];
        let mut i64s = vec![0i64; N];
        let mut u8s = vec![0u8; N];
        let mut halves = vec![0u16; N];
        let mut bhalves = vec![0u16; N];
        let mut f32s = vec![0f32; N];
        let mut f64s = vec![0f64; N];
        let mut preds = vec![0u8; N];
        let pred_in: Vec<vmath::convert::Pred> =
            bytes.iter().map(|&b| vmath::convert::Pred(b & 1)).collect();
        let mut pred_out = vec![vmath::convert::Pred(0); N];
        let _ = &mut preds;
        macro_rules! row {
            ($name:expr, $l:ident => $e:expr) => {{
                print!("| {} |", $name);
                for &$l in &levels {
                    let t = time(|| $e);
                    print!(" {} |", cell(Some(t)));
                }
                println!(" — |");
            }};
        }
        row!("convert f32 → s32", l => vmath::convert::convert_at(l, black_box(&a), black_box(&mut i32s[..])).unwrap());
        row!("convert f32 → s64", l => vmath::convert::convert_at(l, black_box(&a), black_box(&mut i64s[..])).unwrap());
        row!("convert f32 → u8", l => vmath::convert::convert_at(l, black_box(&a), black_box(&mut u8s[..])).unwrap());
        row!("convert f32 → f64", l => vmath::convert::convert_at(l, black_box(&a), black_box(&mut f64s[..])).unwrap());
        row!("convert f64 → f32", l => vmath::convert::convert_at(l, black_box(&a64), black_box(&mut f32s[..])).unwrap());
        row!("convert s32 → f32", l => vmath::convert::convert_at(l, black_box(&ints), black_box(&mut f32s[..])).unwrap());
        row!("convert s64 → f32", l => vmath::convert::convert_at(l, black_box(&longs), black_box(&mut f32s[..])).unwrap());
        row!("convert u8 → f32", l => vmath::convert::convert_at(l, black_box(&bytes), black_box(&mut f32s[..])).unwrap());
        row!("convert pred → f32", l => vmath::convert::convert_at(l, black_box(&pred_in), black_box(&mut f32s[..])).unwrap());
        row!("convert f32 → pred", l => vmath::convert::convert_at(l, black_box(&a), black_box(&mut pred_out[..])).unwrap());
        row!("convert f32 → f16", l => vmath::convert::f32_to_f16_at(l, black_box(&a), black_box(&mut halves[..])).unwrap());
        row!("convert f32 → bf16", l => vmath::convert::f32_to_bf16_at(l, black_box(&a), black_box(&mut bhalves[..])).unwrap());
    }
    if wanted("s32") {
        let a: Vec<i32> = (0..N as i32).map(|i| i.wrapping_mul(7919)).collect();
        let b: Vec<i32> = (0..N as i32).map(|i| (i % 31) + 1).collect();
        let mut dst = vec![0i32; N];
        for op in [
            vmath::int::IntBinary::Add,
            vmath::int::IntBinary::Mul,
            vmath::int::IntBinary::Max,
            vmath::int::IntBinary::ShiftLeft,
            vmath::int::IntBinary::Div,
        ] {
            print!("| s32 {} |", op.hlo().name());
            for &l in &levels {
                let t = time(|| {
                    vmath::int::binary_at(
                        l,
                        op,
                        Operand::Slice(black_box(&a)),
                        Operand::Slice(black_box(&b)),
                        black_box(&mut dst),
                    )
                    .unwrap()
                });
                print!(" {} |", cell(Some(t)));
            }
            println!(" — |");
        }
    }
}
