//! Kernels against naive reference implementations written here, bit for bit:
//! the fast paths (typed loops, the prefix scan, sort keys, tiled matmul,
//! vectorised convolution) must compute exactly what the plain per-element
//! definition computes in XLA's evaluation order. Also edge cases and errors.

mod kernel_support;

use half::f16;
use hlo_evaluator::kernels::{kernel_for, CallComputation};
use hlo_ir::{Code, Literal, Scalar};
use hlo_ir::{CompId, HloComputation, HloModule};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn f32(&mut self) -> f32 {
        (self.next() % 2_000_001) as f32 / 1_000_000.0 - 1.0
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}

fn lit(dims: &[usize], values: &[f32]) -> Literal {
    Literal::from_slice(dims, values).unwrap()
}

fn run(hlo: &str, args: &[Literal]) -> Literal {
    let module = HloModule::parse(hlo).unwrap_or_else(|e| panic!("{e}\n{hlo}"));
    kernel_support::run_root(&module, args)
        .unwrap_or_else(|e| panic!("{e}\n{hlo}"))
        .0
}

fn run_err(hlo: &str, args: &[Literal]) -> hlo_ir::Error {
    let module = HloModule::parse(hlo).unwrap_or_else(|e| panic!("{e}\n{hlo}"));
    match kernel_support::run_root(&module, args) {
        Ok(_) => panic!("expected an error from\n{hlo}"),
        Err(e) => e,
    }
}

fn bits(l: &Literal) -> Vec<u32> {
    l.data::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

const ADD: &str = "add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
";

/// The same reducer, written so it is not recognised as a plain binary op: the
/// kernels run it through the scalar program instead of a typed loop.
const ADD_VIA_PROGRAM: &str = "add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] copy(a)
  ROOT r = f32[] add(c, b)
}
";

// ---------------------------------------------------------------- reduce-window

/// Per-window left-to-right accumulation, the definition.
fn naive_reduce_window_1d(
    x: &[f32],
    init: f32,
    size: usize,
    stride: usize,
    lo: i64,
    out: usize,
) -> Vec<f32> {
    (0..out)
        .map(|o| {
            let mut acc = init;
            for k in 0..size {
                let pos = (o * stride) as i64 + k as i64 - lo;
                if pos >= 0 && (pos as usize) < x.len() {
                    acc += x[pos as usize];
                }
            }
            acc
        })
        .collect()
}

#[test]
fn prefix_scan_is_bit_identical_to_per_window_sums() {
    let mut rng = Rng(1);
    let n = 300;
    let rows = 3;
    let x = rng.f32s(rows * n);
    // (size, pad_low, pad_high): cumulative sums (scan), partial prefixes
    // (scan), suffixes and sliding windows (direct).
    for (size, lo, hi) in [
        (n, n - 1, 0),
        (n + 5, n + 4, 0),
        (7, 40, 0),
        (n, 0, n - 1),
        (5, 2, 2),
    ] {
        let out = n + lo + hi + 1 - size;
        for reducer in [ADD, ADD_VIA_PROGRAM] {
            let hlo = format!(
                "HloModule m\n{reducer}ENTRY e {{\n  x = f32[{rows},{n}] parameter(0)\n  z = f32[] constant(0.25)\n  ROOT r = f32[{rows},{out}] reduce-window(x, z), window={{size=1x{size} pad=0_0x{lo}_{hi}}}, to_apply=add\n}}"
            );
            let got = run(&hlo, &[lit(&[rows, n], &x)]);
            let mut want = Vec::new();
            for r in 0..rows {
                want.extend(naive_reduce_window_1d(
                    &x[r * n..(r + 1) * n],
                    0.25,
                    size,
                    1,
                    lo as i64,
                    out,
                ));
            }
            let want_bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits(&got), want_bits, "size={size} pad={lo}_{hi}");
        }
    }
}

#[test]
fn scan_along_the_leading_dimension() {
    let mut rng = Rng(2);
    let x = rng.f32s(50 * 4);
    let hlo = format!(
        "HloModule m\n{ADD}ENTRY e {{\n  x = f32[50,4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[50,4] reduce-window(x, z), window={{size=50x1 pad=49_0x0_0}}, to_apply=add\n}}"
    );
    let got = run(&hlo, &[lit(&[50, 4], &x)]);
    let mut want = vec![0f32; 200];
    for c in 0..4 {
        let mut acc = 0f32;
        for r in 0..50 {
            acc += x[r * 4 + c];
            want[r * 4 + c] = acc;
        }
    }
    assert_eq!(got.data::<f32>().unwrap(), &want[..]);
}

#[test]
fn general_windows_match_the_definition() {
    let mut rng = Rng(3);
    let x = rng.f32s(23);
    for (size, stride, lo, hi) in [(3, 2, 1, 1), (4, 3, -1, 2), (1, 1, 0, 0), (30, 1, 5, 5)] {
        let out = ((23 + lo + hi - size) / stride + 1) as usize;
        for reducer in [ADD, ADD_VIA_PROGRAM] {
            let hlo = format!(
                "HloModule m\n{reducer}ENTRY e {{\n  x = f32[23] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[{out}] reduce-window(x, z), window={{size={size} stride={stride} pad={lo}_{hi}}}, to_apply=add\n}}"
            );
            let got = run(&hlo, &[lit(&[23], &x)]);
            let want = naive_reduce_window_1d(&x, 0.0, size as usize, stride as usize, lo, out);
            assert_eq!(
                got.data::<f32>().unwrap(),
                &want[..],
                "size={size} stride={stride} pad={lo}_{hi}"
            );
        }
    }
}

#[test]
fn reduce_window_empty_output_and_degenerate_windows() {
    let hlo = format!(
        "HloModule m\n{ADD}ENTRY e {{\n  x = f32[0,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[0,2] reduce-window(x, z), window={{size=1x2}}, to_apply=add\n}}"
    );
    assert_eq!(run(&hlo, &[lit(&[0, 3], &[])]).element_count(), 0);
    // Windows that lie entirely in padding give the init.
    let hlo = format!(
        "HloModule m\n{ADD}ENTRY e {{\n  x = f32[2] parameter(0)\n  z = f32[] constant(7)\n  ROOT r = f32[5] reduce-window(x, z), window={{size=1 stride=2 pad=1_6}}, to_apply=add\n}}"
    );
    assert_eq!(
        run(&hlo, &[lit(&[2], &[1.0, 2.0])]).data::<f32>().unwrap(),
        &[7.0, 9.0, 7.0, 7.0, 7.0]
    );
}

// ---------------------------------------------------------------- reduce

#[test]
fn reduce_paths_agree_and_fold_left_to_right() {
    let mut rng = Rng(4);
    let x = rng.f32s(6 * 7 * 5);
    for dims in ["{1}", "{0,2}", "{2,1,0}", "{}"] {
        let mut results = Vec::new();
        for reducer in [ADD, ADD_VIA_PROGRAM] {
            let out_dims: Vec<usize> = [6usize, 7, 5]
                .iter()
                .enumerate()
                .filter(|(d, _)| !dims.contains(&d.to_string()))
                .map(|(_, &s)| s)
                .collect();
            let out = out_dims
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let hlo = format!(
                "HloModule m\n{reducer}ENTRY e {{\n  x = f32[6,7,5] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[{out}] reduce(x, z), dimensions={dims}, to_apply=add\n}}"
            );
            results.push(bits(&run(&hlo, &[lit(&[6, 7, 5], &x)])));
        }
        assert_eq!(results[0], results[1], "dims {dims}");
    }
    // Reducing dimension 1 of [6,7,5]: each output folds its 7 inputs in order.
    let hlo = format!(
        "HloModule m\n{ADD}ENTRY e {{\n  x = f32[6,7,5] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[6,5] reduce(x, z), dimensions={{1}}, to_apply=add\n}}"
    );
    let got = run(&hlo, &[lit(&[6, 7, 5], &x)]);
    let mut want = [0f32; 30];
    for a in 0..6 {
        for c in 0..5 {
            let mut acc = 0f32;
            for b in 0..7 {
                acc += x[(a * 7 + b) * 5 + c];
            }
            want[a * 5 + c] = acc;
        }
    }
    assert_eq!(got.data::<f32>().unwrap(), &want[..]);
}

/// A subcomputation evaluator for a reducer the scalar program cannot compile
/// (it slices a two-element value): it knows the reducer adds, and counts calls.
struct CountingAdder<'m> {
    module: &'m HloModule,
    calls: usize,
}

impl CallComputation for CountingAdder<'_> {
    fn computation(&self, id: CompId) -> &HloComputation {
        self.module.computation(id)
    }
    fn call(&mut self, _id: CompId, args: &[Literal]) -> hlo_ir::Result<Literal> {
        self.calls += 1;
        let a = args[0].data::<f32>()?[0];
        let b = args[1].data::<f32>()?[0];
        Ok(Literal::scalar(a + b))
    }
}

#[test]
fn uncompilable_reducers_fall_back_to_calls() {
    let hlo = "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  v = f32[2] broadcast(a), dimensions={}
  s = f32[1] slice(v), slice={[0:1]}
  w = f32[] reshape(s)
  ROOT r = f32[] add(w, b)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
}";
    let module = HloModule::parse(hlo).unwrap();
    let entry = module.entry();
    let root = entry.root_instr();
    let x = lit(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let z = Literal::scalar(1f32);
    let mut calls = CountingAdder {
        module: &module,
        calls: 0,
    };
    let kernel = kernel_for(root.opcode()).unwrap();
    let out = kernel(root, &[&x, &z], &mut calls).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[7.0, 16.0]);
    assert_eq!(calls.calls, 6);
}

// ---------------------------------------------------------------- dot

#[test]
fn dot_is_the_in_order_sum_for_any_dimension_numbers() {
    let mut rng = Rng(5);
    // lhs [2,3,4,5] (batch 0, contracting 3 then 2), rhs [5,2,4,6] (batch 1, contracting 0 then 2).
    let l = rng.f32s(2 * 3 * 4 * 5);
    let r = rng.f32s(5 * 2 * 4 * 6);
    let hlo = "HloModule m
ENTRY e {
  a = f32[2,3,4,5] parameter(0)
  b = f32[5,2,4,6] parameter(1)
  ROOT d = f32[2,3,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={3,2}, rhs_contracting_dims={0,2}
}";
    let got = run(hlo, &[lit(&[2, 3, 4, 5], &l), lit(&[5, 2, 4, 6], &r)]);
    let mut want = Vec::new();
    for b in 0..2 {
        for i in 0..3 {
            for j in 0..6 {
                let mut acc = 0f32;
                // Contracting positions in row-major order of (dim 3, dim 2) as listed.
                for k3 in 0..5 {
                    for k2 in 0..4 {
                        acc +=
                            l[((b * 3 + i) * 4 + k2) * 5 + k3] * r[((k3 * 2 + b) * 4 + k2) * 6 + j];
                    }
                }
                want.push(acc);
            }
        }
    }
    assert_eq!(got.data::<f32>().unwrap(), &want[..]);
}

#[test]
fn tiled_matmul_matches_the_plain_loop() {
    let mut rng = Rng(6);
    // Sizes that exercise the 4-row blocks, their remainder and several column tiles.
    let (m, k, n) = (7, 19, 300);
    let a = rng.f32s(m * k);
    let b = rng.f32s(k * n);
    let hlo = format!(
        "HloModule m\nENTRY e {{\n  a = f32[{m},{k}] parameter(0)\n  b = f32[{k},{n}] parameter(1)\n  ROOT d = f32[{m},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}"
    );
    let got = run(&hlo, &[lit(&[m, k], &a), lit(&[k, n], &b)]);
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * n + j];
            }
            want[i * n + j] = acc;
        }
    }
    assert_eq!(got.data::<f32>().unwrap(), &want[..]);
}

#[test]
fn f16_dot_rounds_once_from_f32() {
    let mut rng = Rng(7);
    let a: Vec<f16> = rng.f32s(64).into_iter().map(f16::from_f32).collect();
    let b: Vec<f16> = rng.f32s(64).into_iter().map(f16::from_f32).collect();
    let hlo = "HloModule m
ENTRY e {
  a = f16[64] parameter(0)
  b = f16[64] parameter(1)
  ROOT d = f16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}";
    let got = run(
        hlo,
        &[
            Literal::from_slice(&[64], &a).unwrap(),
            Literal::from_slice(&[64], &b).unwrap(),
        ],
    );
    let acc: f32 = a
        .iter()
        .zip(&b)
        .fold(0.0, |acc, (x, y)| acc + x.to_f32() * y.to_f32());
    assert_eq!(got.data::<f16>().unwrap(), &[f16::from_f32(acc)]);
}

#[test]
fn pred_dot_is_or_of_ands() {
    let hlo = "HloModule m
ENTRY e {
  a = pred[2,3] parameter(0)
  b = pred[3] parameter(1)
  ROOT d = pred[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}";
    let a = Literal::from_bools(&[2, 3], &[true, false, true, false, true, false]).unwrap();
    let b = Literal::from_bools(&[3], &[false, false, true]).unwrap();
    assert_eq!(run(hlo, &[a, b]).to_bools().unwrap(), vec![true, false]);
}

#[test]
fn dot_rejects_mismatched_contracting_sizes() {
    let hlo = "HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}";
    let e = run_err(hlo, &[lit(&[2, 3], &[0.0; 6]), lit(&[4, 2], &[0.0; 8])]);
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("%d"), "{e}");
}

// ---------------------------------------------------------------- convolution

/// XLA's evaluator loop, transcribed: for each output, kernel positions in
/// row-major order, then input features of the group.
#[allow(clippy::too_many_arguments)]
fn naive_conv_1d(
    x: &[f32],
    (n, w, c): (usize, usize, usize),
    k: &[f32],
    (kw, ki, ko): (usize, usize, usize),
    stride: usize,
    lo: i64,
    lhs_dil: usize,
    rhs_dil: usize,
    reverse: bool,
    groups: usize,
    batch_groups: usize,
    out_w: usize,
) -> Vec<f32> {
    let out_n = n / batch_groups;
    let mut out = vec![0f32; out_n * out_w * ko];
    for b in 0..out_n {
        for ow in 0..out_w {
            for o in 0..ko {
                let g = o / (ko / groups);
                let bg = o / (ko / batch_groups);
                let mut acc = 0f32;
                for t in 0..kw {
                    let pos = (ow * stride) as i64 - lo + (t * rhs_dil) as i64;
                    if pos < 0 || pos % lhs_dil as i64 != 0 {
                        continue;
                    }
                    let iw = (pos / lhs_dil as i64) as usize;
                    if iw >= w {
                        continue;
                    }
                    let kt = if reverse { kw - 1 - t } else { t };
                    for iz in 0..ki {
                        let xb = b + bg * out_n;
                        acc += x[(xb * w + iw) * c + g * ki + iz] * k[(kt * ki + iz) * ko + o];
                    }
                }
                out[(b * out_w + ow) * ko + o] = acc;
            }
        }
    }
    out
}

#[test]
fn convolution_matches_the_evaluator_loop() {
    let mut rng = Rng(8);
    // (n, w, c, kw, groups, batch_groups, ko, stride, lo, hi, lhs_dil, rhs_dil, reverse)
    let configs = [
        (2, 9, 4, 3, 1, 1, 5, 1, 1, 1, 1, 1, false),
        (2, 9, 4, 3, 2, 1, 6, 2, -1, 2, 1, 1, true),
        (1, 6, 3, 2, 3, 1, 3, 1, 1, 0, 2, 2, false),
        (4, 7, 2, 2, 1, 2, 4, 1, 0, 0, 1, 3, true),
        (1, 5, 2, 1, 1, 1, 3, 1, 0, 0, 1, 1, false),
    ];
    for (n, w, c, kw, g, bg, ko, stride, lo, hi, ld, rd, rev) in configs {
        let ki = c / g;
        let x = rng.f32s(n * w * c);
        let k = rng.f32s(kw * ki * ko);
        let dilated_in = (w as i64 - 1) * ld as i64 + 1 + lo + hi;
        let dilated_k = ((kw - 1) * rd + 1) as i64;
        let out_w = ((dilated_in - dilated_k) / stride as i64 + 1) as usize;
        let hlo = format!(
            "HloModule m\nENTRY e {{\n  x = f32[{n},{w},{c}] parameter(0)\n  k = f32[{kw},{ki},{ko}] parameter(1)\n  ROOT r = f32[{},{out_w},{ko}] convolution(x, k), window={{size={kw} stride={stride} pad={lo}_{hi} lhs_dilate={ld} rhs_dilate={rd} rhs_reversal={}}}, dim_labels=b0f_0io->b0f, feature_group_count={g}, batch_group_count={bg}\n}}",
            n / bg,
            rev as u8
        );
        let got = run(&hlo, &[lit(&[n, w, c], &x), lit(&[kw, ki, ko], &k)]);
        let want = naive_conv_1d(
            &x,
            (n, w, c),
            &k,
            (kw, ki, ko),
            stride,
            lo,
            ld,
            rd,
            rev,
            g,
            bg,
            out_w,
        );
        assert_eq!(got.data::<f32>().unwrap(), &want[..], "{hlo}");
    }
}

#[test]
fn convolution_rejects_a_wrong_result_shape() {
    let hlo = "HloModule m
ENTRY e {
  x = f32[1,5,2] parameter(0)
  k = f32[3,2,4] parameter(1)
  ROOT r = f32[1,5,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
}";
    let e = run_err(
        hlo,
        &[lit(&[1, 5, 2], &[0.0; 10]), lit(&[3, 2, 4], &[0.0; 24])],
    );
    assert_eq!(e.code(), Code::InvalidArgument);
}

// ---------------------------------------------------------------- sort / topk

const JAX_TOTAL_ORDER_LT: &str = "cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ne = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq = pred[] compare(a, zero), direction=EQ
  sa = f32[] select(eq, zero, a)
  sb = f32[] select(ne, qnan, sa)
  ne2 = pred[] compare(b, b), direction=NE
  eq2 = pred[] compare(b, zero), direction=EQ
  ta = f32[] select(eq2, zero, b)
  tb = f32[] select(ne2, qnan, ta)
  ROOT lt = pred[] compare(sb, tb), direction=LT, type=TOTALORDER
}
";

fn specials(rng: &mut Rng, n: usize) -> Vec<f32> {
    let pool = [
        f32::NAN,
        -f32::NAN,
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.5,
        2.0,
    ];
    (0..n)
        .map(|_| pool[(rng.next() % pool.len() as u64) as usize])
        .collect()
}

/// The canonicalised total-order key JAX's comparator sorts by.
fn jax_key(v: f32) -> i64 {
    let v = if v.is_nan() {
        f32::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    let b = v.to_bits() as i32 as i64;
    if b < 0 {
        b ^ 0x7fff_ffff
    } else {
        b
    }
}

#[test]
fn sort_key_path_matches_the_comparator_path() {
    let mut rng = Rng(9);
    let n = 200;
    let x = specials(&mut rng, n);
    let idx: Vec<i32> = (0..n as i32).collect();
    let args = [lit(&[n], &x), Literal::from_slice(&[n], &idx).unwrap()];
    let fast = format!(
        "HloModule m\n{JAX_TOTAL_ORDER_LT}ENTRY e {{\n  x = f32[{n}] parameter(0)\n  i = s32[{n}] parameter(1)\n  ROOT s = (f32[{n}], s32[{n}]) sort(x, i), dimensions={{0}}, is_stable=true, to_apply=cmp\n}}"
    );
    // Same order, but the root is no longer a compare of mirrored keys.
    let slow = fast.replace(
        "  ROOT lt = pred[] compare(sb, tb), direction=LT, type=TOTALORDER",
        "  lt = pred[] compare(sb, tb), direction=LT, type=TOTALORDER\n  t = pred[] constant(true)\n  ROOT r = pred[] and(lt, t)",
    );
    let a = run(&fast, &args).flatten_leaves();
    let b = run(&slow, &args).flatten_leaves();
    assert_eq!(a[1].data::<i32>().unwrap(), b[1].data::<i32>().unwrap());
    // And both are the stable sort by JAX's key.
    let mut want: Vec<usize> = (0..n).collect();
    want.sort_by_key(|&i| jax_key(x[i]));
    let want: Vec<i32> = want.into_iter().map(|i| i as i32).collect();
    assert_eq!(a[1].data::<i32>().unwrap(), &want[..]);
}

#[test]
fn float_compare_sort_with_signed_zeros_is_stable() {
    // LT on floats without TOTALORDER: -0 and +0 are equal, so they keep their order.
    let hlo = "HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[6] parameter(0)
  ROOT s = f32[6] sort(x), dimensions={0}, to_apply=cmp
}";
    let got = run(hlo, &[lit(&[6], &[0.0, 1.0, -0.0, -1.0, 0.0, -0.0])]);
    let signs: Vec<bool> = got
        .data::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.is_sign_negative())
        .collect();
    assert_eq!(got.data::<f32>().unwrap(), &[-1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    assert_eq!(signs, vec![true, false, true, false, true, false]);
}

#[test]
fn sort_survives_an_inconsistent_comparator() {
    // LT with NaNs is not a strict weak order; the sort must still return a permutation.
    let mut rng = Rng(10);
    let x = specials(&mut rng, 100);
    let hlo = "HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LE
}
ENTRY e {
  x = f32[100] parameter(0)
  ROOT s = f32[100] sort(x), dimensions={0}, to_apply=cmp
}";
    let got = run(hlo, &[lit(&[100], &x)]);
    let mut a: Vec<u32> = bits(&got);
    let mut b: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
}

#[test]
fn sort_empty_and_comparator_type_errors() {
    let hlo = "HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[0,3] parameter(0)
  ROOT s = f32[0,3] sort(x), dimensions={1}, to_apply=cmp
}";
    assert_eq!(run(hlo, &[lit(&[0, 3], &[])]).element_count(), 0);
    let bad = "HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT s = f32[3] sort(x), dimensions={0}, to_apply=cmp
}";
    let e = run_err(bad, &[lit(&[3], &[1.0, 2.0, 3.0])]);
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[test]
fn topk_k_zero_and_k_too_large() {
    let hlo = "HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT r = (f32[2,0], s32[2,0]) topk(x), k=0, largest=true
}";
    let out = run(hlo, &[lit(&[2, 3], &[1.0; 6])]).flatten_leaves();
    assert_eq!(out[0].element_count() + out[1].element_count(), 0);
    let bad = hlo.replace("k=0", "k=4").replace("[2,0]", "[2,4]");
    assert_eq!(
        run_err(&bad, &[lit(&[2, 3], &[1.0; 6])]).code(),
        Code::InvalidArgument
    );
}

// ---------------------------------------------------------------- scatter / gather

#[test]
fn scatter_typed_and_program_paths_agree() {
    let mut rng = Rng(11);
    let updates = rng.f32s(40);
    let indices: Vec<i32> = (0..40).map(|_| (rng.next() % 14) as i32 - 2).collect();
    let operand = rng.f32s(10);
    let mut results = Vec::new();
    for reducer in [ADD, ADD_VIA_PROGRAM] {
        let hlo = format!(
            "HloModule m\n{reducer}ENTRY e {{\n  o = f32[10] parameter(0)\n  i = s32[40] parameter(1)\n  u = f32[40] parameter(2)\n  ROOT s = f32[10] scatter(o, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}"
        );
        results.push(bits(&run(
            &hlo,
            &[
                lit(&[10], &operand),
                Literal::from_slice(&[40], &indices).unwrap(),
                lit(&[40], &updates),
            ],
        )));
    }
    assert_eq!(results[0], results[1]);
    // In order, skipping out-of-bounds indices.
    let mut want = operand.clone();
    for (&i, &u) in indices.iter().zip(&updates) {
        if (0..10).contains(&i) {
            want[i as usize] += u;
        }
    }
    let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
    assert_eq!(results[0], want);
}

#[test]
fn gather_rejects_slices_larger_than_the_operand() {
    let hlo = "HloModule m
ENTRY e {
  t = f32[3,2] parameter(0)
  i = s32[1] parameter(1)
  ROOT g = f32[1,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}";
    let e = run_err(
        hlo,
        &[
            lit(&[3, 2], &[0.0; 6]),
            Literal::from_slice(&[1], &[0i32]).unwrap(),
        ],
    );
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[test]
fn scatter_with_no_updates_returns_the_operand() {
    let hlo = format!(
        "HloModule m\n{ADD}ENTRY e {{\n  o = f32[3] parameter(0)\n  i = s32[0,1] parameter(1)\n  u = f32[0] parameter(2)\n  ROOT s = f32[3] scatter(o, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}"
    );
    let got = run(
        &hlo,
        &[
            lit(&[3], &[1.0, 2.0, 3.0]),
            Literal::from_slice(&[0, 1], &[0i32; 0]).unwrap(),
            lit(&[0], &[]),
        ],
    );
    assert_eq!(got.data::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
}

// ---------------------------------------------------------------- fft / linalg

#[test]
fn fft_of_size_one_and_empty_batches() {
    let hlo = "HloModule m
ENTRY e {
  x = c64[0,5] parameter(0)
  ROOT f = c64[0,5] fft(x), fft_type=FFT, fft_length={5}
}";
    let x = Literal::from_slice(&[0, 5], &Vec::<num_complex::Complex32>::new()).unwrap();
    assert_eq!(run(hlo, &[x]).element_count(), 0);
    let hlo = "HloModule m
ENTRY e {
  x = f32[3,1] parameter(0)
  ROOT f = c64[3,1] fft(x), fft_type=RFFT, fft_length={1}
}";
    let out = run(hlo, &[lit(&[3, 1], &[1.0, -2.0, 3.5])]);
    let re: Vec<f32> = out
        .data::<num_complex::Complex32>()
        .unwrap()
        .iter()
        .map(|c| c.re)
        .collect();
    assert_eq!(re, vec![1.0, -2.0, 3.5]);
    let bad = "HloModule m
ENTRY e {
  x = c64[4] parameter(0)
  ROOT f = c64[4] fft(x), fft_type=FFT, fft_length={8}
}";
    let x = Literal::from_slice(&[4], &[num_complex::Complex32::new(0.0, 0.0); 4]).unwrap();
    assert_eq!(run_err(bad, &[x]).code(), Code::InvalidArgument);
}

#[test]
fn triangular_solve_solves_batched_systems() {
    // op(a) x = b for a random lower-triangular batch: check a x reproduces b.
    let mut rng = Rng(12);
    let (batch, m, n) = (3, 5, 2);
    let mut a = rng.f32s(batch * m * m);
    for bi in 0..batch {
        for i in 0..m {
            a[bi * m * m + i * m + i] += 4.0;
        }
    }
    let b = rng.f32s(batch * m * n);
    let hlo = format!(
        "HloModule m\nENTRY e {{\n  a = f32[{batch},{m},{m}] parameter(0)\n  b = f32[{batch},{m},{n}] parameter(1)\n  ROOT x = f32[{batch},{m},{n}] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n}}"
    );
    let x = run(&hlo, &[lit(&[batch, m, m], &a), lit(&[batch, m, n], &b)]);
    let x = x.data::<f32>().unwrap();
    for bi in 0..batch {
        for i in 0..m {
            for c in 0..n {
                let mut s = 0f64;
                for j in 0..=i {
                    s += a[bi * m * m + i * m + j] as f64 * x[bi * m * n + j * n + c] as f64;
                }
                let want = b[bi * m * n + i * n + c] as f64;
                assert!((s - want).abs() < 1e-5, "batch {bi} row {i}: {s} vs {want}");
            }
        }
    }
}

#[test]
fn cholesky_reconstructs_and_rejects_non_square() {
    let a = [4.0f32, 0.0, 0.0, 2.0, 5.0, 0.0, -2.0, 1.0, 9.0]; // lower triangle of an SPD matrix
    let hlo = "HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT l = f32[3,3] cholesky(a), lower=true
}";
    let l = run(hlo, &[lit(&[3, 3], &a)]);
    let l = l.data::<f32>().unwrap();
    for i in 0..3 {
        for j in 0..=i {
            let s: f32 = (0..3).map(|k| l[i * 3 + k] * l[j * 3 + k]).sum();
            assert!((s - a[i * 3 + j]).abs() < 1e-5, "({i},{j}): {s}");
        }
        for j in i + 1..3 {
            assert_eq!(l[i * 3 + j], 0.0);
        }
    }
    let bad = "HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  ROOT l = f32[3,2] cholesky(a), lower=true
}";
    assert_eq!(
        run_err(bad, &[lit(&[3, 2], &[1.0; 6])]).code(),
        Code::InvalidArgument
    );
}

// ---------------------------------------------------------------- scalar programs

#[test]
fn scalar_program_runs_tuples_calls_and_bitcasts() {
    let hlo = "HloModule m
inner {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
comp {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] call(a), to_apply=inner
  bits = s32[] bitcast-convert(c)
  t = (s32[], f32[]) tuple(bits, c)
  g = s32[] get-tuple-element(t), index=0
  s = s32[] add(g, b)
  ROOT r = (s32[], f32[]) tuple(s, c)
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT z = f32[] negate(p)
}";
    let module = HloModule::parse(hlo).unwrap();
    let calls = kernel_support::TestCalls::new(&module);
    let id = module.find_computation("comp").unwrap();
    let program = hlo_evaluator::kernels::scalar::ScalarProgram::compile(&calls, id).unwrap();
    let mut frame = program.frame();
    let mut out = [Scalar::Pred(false); 2];
    program
        .run(&mut frame, &[Scalar::F32(1.5), Scalar::S32(1)], &mut out)
        .unwrap();
    assert_eq!(out[0], Scalar::S32((-1.5f32).to_bits() as i32 + 1));
    assert_eq!(out[1], Scalar::F32(-1.5));
}
