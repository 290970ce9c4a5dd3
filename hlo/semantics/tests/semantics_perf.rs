//! Throughput of the array layer on 4M-element operands.
//!
//! Ignored by default (timings mean nothing in a debug build or on a loaded CI
//! machine). Run with
//! `cargo test --release -p hlo-semantics --test semantics_perf -- --ignored --nocapture`.
//! Each line prints the time of one op over 4M elements; the assertion is a loose
//! ceiling (half a second per op) that only a per-element dispatch or allocation
//! would break.

use half::f16;
use hlo_ir::{BinaryOp, ComparisonDirection, UnaryOp};
use hlo_ir::{ElementType, Literal};
use hlo_semantics as semantics;
use std::time::{Duration, Instant};

const N: usize = 4 << 20;

fn time(what: &str, f: impl Fn() -> Literal) -> Duration {
    f(); // warm up (page faults on the output buffer)
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    assert_eq!(out.element_count(), N);
    println!("{what:40} {:8.2} ms", elapsed.as_secs_f64() * 1e3);
    elapsed
}

#[test]
#[ignore]
fn four_million_element_ops_take_milliseconds() {
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.01 - 5.0).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 777) as f32 * 0.02 + 0.5).collect();
    let a = Literal::vector(&a);
    let b = Literal::vector(&b);
    let s = a.shape().clone();
    let ai = semantics::convert(&a, ElementType::S32).unwrap();
    let bi = semantics::convert(&b, ElementType::S32).unwrap();
    let ah: Vec<f16> = (0..N)
        .map(|i| f16::from_f32((i % 100) as f32 * 0.1))
        .collect();
    let ah = Literal::vector(&ah);
    let pred = semantics::compare(ComparisonDirection::Lt, None, &a, &b).unwrap();

    let mut worst = Duration::ZERO;
    for d in [
        time("add f32", || {
            semantics::binary(BinaryOp::Add, &a, &b, &s).unwrap()
        }),
        time("maximum f32", || {
            semantics::binary(BinaryOp::Maximum, &a, &b, &s).unwrap()
        }),
        time("exponential f32", || {
            semantics::unary(UnaryOp::Exp, &a, &s).unwrap()
        }),
        time("tanh f32", || {
            semantics::unary(UnaryOp::Tanh, &a, &s).unwrap()
        }),
        time("divide s32", || {
            semantics::binary(BinaryOp::Divide, &ai, &bi, ai.shape()).unwrap()
        }),
        time("add f16", || {
            semantics::binary(BinaryOp::Add, &ah, &ah, ah.shape()).unwrap()
        }),
        time("compare LT f32", || {
            semantics::compare(ComparisonDirection::Lt, None, &a, &b).unwrap()
        }),
        time("select f32", || semantics::select(&pred, &a, &b).unwrap()),
        time("convert f32->s32", || {
            semantics::convert(&a, ElementType::S32).unwrap()
        }),
        time("convert f32->bf16", || {
            semantics::convert(&a, ElementType::BF16).unwrap()
        }),
    ] {
        worst = worst.max(d);
    }
    assert!(
        worst < Duration::from_millis(500),
        "slowest op took {worst:?}"
    );
}
