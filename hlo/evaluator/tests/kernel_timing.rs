//! Timings of the heavy kernels on the shapes of `../shared/bench` (the ops
//! those programs spend their time in, with the same attributes). Ignored by
//! default; run in release:
//!
//! `cargo test -p hlo-evaluator --release --test kernel_timing -- --ignored --nocapture`

mod kernel_support;

use hlo_ir::{HloModule, Literal};
use std::time::Instant;

/// Deterministic uniform values in `[lo, hi)`.
fn uniform_f32(n: usize, lo: f32, hi: f32, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * unit
        })
        .collect()
}

fn time(name: &str, hlo: &str, args: &[Literal]) {
    let module = HloModule::parse(hlo).expect("parse");
    let start = Instant::now();
    let (out, calls) = kernel_support::run_root(&module, args).expect("run");
    let elapsed = start.elapsed();
    println!(
        "{name:<28} {:>9.3} s   ({} result elements, {calls} fallback calls)",
        elapsed.as_secs_f64(),
        out.clone()
            .flatten_leaves()
            .iter()
            .map(|l| l.element_count())
            .sum::<usize>()
    );
    assert_eq!(
        calls, 0,
        "{name} fell back to per-element computation calls"
    );
}

fn f32_array(dims: &[usize], seed: u64) -> Literal {
    let n = dims.iter().product();
    Literal::from_slice(dims, &uniform_f32(n, -1.0, 1.0, seed)).expect("literal")
}

#[test]
#[ignore]
fn bench_shaped_kernels() {
    time(
        "reduce 4096x4096 (sum, max)",
        "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  s = f32[4096] reduce(x, z), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  m = f32[4096] reduce(x, ninf), dimensions={0}, to_apply=mx
  ROOT t = (f32[4096], f32[4096]) tuple(s, m)
}",
        &[f32_array(&[4096, 4096], 1)],
    );
    time(
        "sort 1M (jax total order)",
        "HloModule m
cmp {
  a = f32[] parameter(0)
  ne = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq = pred[] compare(a, zero), direction=EQ
  sa = f32[] select(eq, zero, a)
  sb = f32[] select(ne, qnan, sa)
  b = f32[] parameter(1)
  ne2 = pred[] compare(b, b), direction=NE
  eq2 = pred[] compare(b, zero), direction=EQ
  ta = f32[] select(eq2, zero, b)
  tb = f32[] select(ne2, qnan, ta)
  ROOT lt = pred[] compare(sb, tb), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[1048576] parameter(0)
  ROOT s = f32[1048576] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
}",
        &[f32_array(&[1 << 20], 2)],
    );
    time(
        "cumsum 1024x4096",
        "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024,4096] reduce-window(x, z), window={size=1x4096 pad=0_0x4095_0}, to_apply=add
}",
        &[f32_array(&[1024, 4096], 3)],
    );
    time(
        "matmul 1024 f32",
        "HloModule m
ENTRY e {
  a = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1)
  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}",
        &[f32_array(&[1024, 1024], 4), f32_array(&[1024, 1024], 5)],
    );
    time(
        "conv3x3 8x56x56x64",
        "HloModule m
ENTRY e {
  x = f32[8,56,56,64] parameter(0)
  k = f32[3,3,64,64] parameter(1)
  ROOT c = f32[8,56,56,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}",
        &[f32_array(&[8, 56, 56, 64], 6), f32_array(&[3, 3, 64, 64], 7)],
    );
    time(
        "pool 8x112x112x64 (max, avg)",
        "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[8,112,112,64] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[8,56,56,64] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=mx
  z = f32[] constant(0)
  s = f32[8,56,56,64] reduce-window(x, z), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add
  ROOT t = (f32[8,56,56,64], f32[8,56,56,64]) tuple(m, s)
}",
        &[f32_array(&[8, 112, 112, 64], 8)],
    );
    let indices: Vec<i32> = uniform_f32(1 << 20, 0.0, 65536.0, 9)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    time(
        "scatter-add 1M into 64k",
        "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  o = f32[65536] parameter(0)
  i = s32[1048576,1] parameter(1)
  u = f32[1048576] parameter(2)
  ROOT s = f32[65536] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}",
        &[
            Literal::from_slice(&[65536], &vec![0f32; 65536]).expect("literal"),
            Literal::from_slice(&[1 << 20, 1], &indices).expect("literal"),
            f32_array(&[1 << 20], 10),
        ],
    );
    let rows: Vec<i32> = uniform_f32(8192, 0.0, 50000.0, 11)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    time(
        "gather 8192 rows of 50000x256",
        "HloModule m
ENTRY e {
  t = f32[50000,256] parameter(0)
  i = s32[8192,1] parameter(1)
  ROOT g = f32[8192,256] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,256}
}",
        &[
            f32_array(&[50000, 256], 12),
            Literal::from_slice(&[8192, 1], &rows).expect("literal"),
        ],
    );
}
