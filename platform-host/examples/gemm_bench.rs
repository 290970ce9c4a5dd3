//! Micro-benchmark of the Host GEMM against the `matrixmultiply` crate.
//!
//! `cargo run --release -p platform-host --example gemm_bench [-- [--f64] [--single] [MxNxK ...]]`
//!
//! For each shape (row-major `C = A·B`, `A` m×k, `B` k×n) it prints the best
//! GFLOP/s over repeated runs (about a third of a second each) of the Host
//! GEMM at every instruction-set level this processor has, and of
//! `matrixmultiply` (threaded, as the Host used it before). `--single` keeps
//! both on one thread; `--f64` measures f64 instead of f32. Without shapes it
//! runs the shapes of the benchmark programs.

use platform_host::kernels::gemm::{self, Options, Strided, StridedMut};
use platform_host::vmath::Level;
use std::time::{Duration, Instant};

const DEFAULT_SHAPES: &[(usize, usize, usize)] = &[
    (1024, 1024, 1024),
    (256, 4096, 1024),
    (256, 1024, 4096),
    (32, 512, 512),
    (1024, 512, 512),
    (1024, 2048, 512),
    (512, 512, 784),
    (25088, 64, 576),
    (256, 256, 64),
];

trait Elem: gemm::Element {
    fn from_f64(v: f64) -> Self;
    /// matrixmultiply's entry point for this type.
    #[allow(clippy::too_many_arguments)]
    unsafe fn reference(m: usize, k: usize, n: usize, a: *const Self, b: *const Self, c: *mut Self);
}

impl Elem for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    unsafe fn reference(m: usize, k: usize, n: usize, a: *const f32, b: *const f32, c: *mut f32) {
        // SAFETY: row-major m×k, k×n, m×n buffers.
        unsafe {
            matrixmultiply::sgemm(
                m, k, n, 1.0, a, k as isize, 1, b, n as isize, 1, 0.0, c, n as isize, 1,
            )
        }
    }
}

impl Elem for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    unsafe fn reference(m: usize, k: usize, n: usize, a: *const f64, b: *const f64, c: *mut f64) {
        // SAFETY: as above.
        unsafe {
            matrixmultiply::dgemm(
                m, k, n, 1.0, a, k as isize, 1, b, n as isize, 1, 0.0, c, n as isize, 1,
            )
        }
    }
}

/// Best seconds per call of `f` over about a third of a second.
fn best_time(mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || start.elapsed() < Duration::from_millis(300) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn run<T: Elem>(shapes: &[(usize, usize, usize)], single: bool) {
    let levels: Vec<Level> = Level::ALL
        .into_iter()
        .filter(|l| l.is_supported())
        .collect();
    print!("{:>18}", "m x n x k");
    for l in &levels {
        print!("{:>12}", format!("host-{l}"));
    }
    println!("{:>16}", "matrixmultiply");
    for &(m, n, k) in shapes {
        let mut seed = 0x1234_5678u64;
        let mut rand = |len: usize| -> Vec<T> {
            (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    T::from_f64((seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
                })
                .collect()
        };
        let a = rand(m * k);
        let b = rand(k * n);
        let mut c = vec![T::ZERO; m * n];
        let flops = 2.0 * (m * n * k) as f64;
        print!("{:>18}", format!("{m}x{n}x{k}"));
        for &level in &levels {
            let options = Options {
                accumulate: false,
                parallel: !single,
                level: Some(level),
            };
            let secs = best_time(|| {
                // SAFETY: row-major buffers of the right sizes.
                unsafe {
                    gemm::gemm(
                        m,
                        n,
                        k,
                        Strided {
                            ptr: a.as_ptr(),
                            rs: k as isize,
                            cs: 1,
                        },
                        Strided {
                            ptr: b.as_ptr(),
                            rs: n as isize,
                            cs: 1,
                        },
                        StridedMut {
                            ptr: c.as_mut_ptr(),
                            rs: n as isize,
                            cs: 1,
                        },
                        options,
                    )
                }
            });
            print!("{:>12.1}", flops / secs / 1e9);
        }
        if single {
            std::env::set_var("MATMUL_NUM_THREADS", "1");
        }
        let secs = best_time(|| {
            // SAFETY: row-major buffers of the right sizes.
            unsafe { T::reference(m, k, n, a.as_ptr(), b.as_ptr(), c.as_mut_ptr()) }
        });
        println!("{:>16.1}", flops / secs / 1e9);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let f64_mode = args.iter().any(|a| a == "--f64");
    let single = args.iter().any(|a| a == "--single");
    let mut shapes: Vec<(usize, usize, usize)> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .filter_map(|a| {
            let v: Vec<usize> = a.split('x').filter_map(|d| d.parse().ok()).collect();
            (v.len() == 3).then(|| (v[0], v[1], v[2]))
        })
        .collect();
    if shapes.is_empty() {
        shapes = DEFAULT_SHAPES.to_vec();
    }
    println!(
        "GFLOP/s, best of repeated runs ({}, {})",
        if f64_mode { "f64" } else { "f32" },
        if single { "one thread" } else { "all threads" }
    );
    if f64_mode {
        run::<f64>(&shapes, single);
    } else {
        run::<f32>(&shapes, single);
    }
}
