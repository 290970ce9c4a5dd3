//! Every form the Host runs a convolution in gives the convolution: the
//! shifted-window GEMMs over a padded input (with the row-dot kernel for a
//! few output channels) and im2col (`host_conv=im2col`), each checked
//! against a plain loop in f64 over a sweep of geometries.
//!
//! The sweep covers what decides the shifted form's segments and bounds:
//! 1-D, 2-D and 3-D windows; padding on both sides, uneven, negative (a
//! crop) and none (the input read without a copy); kernel dilation (one
//! segment per tap) and reversal; input features that leave a tail after
//! the last full vector; output channels from 1 to 17 (the row-dot kernel
//! takes 2 to 8); batches split into several chunks; and strided or
//! input-dilated windows, which stay on im2col.

use platform_api::{CompileOptions, Literal};
use platform_host::runner::HostRunner;

use crate::rng::Rng;

/// One convolution, input `[batch, spatial..., c_in]`, kernel
/// `[spatial..., c_in, c_out]`, output `[batch, spatial..., c_out]`.
#[derive(Clone, Debug)]
struct Conv {
    batch: usize,
    input: Vec<usize>,
    c_in: usize,
    kernel: Vec<usize>,
    c_out: usize,
    pad: Vec<(i64, i64)>,
    stride: Vec<usize>,
    lhs_dilate: Vec<usize>,
    rhs_dilate: Vec<usize>,
    reversal: Vec<bool>,
    /// `feature_group_count`: the kernel has `c_in / groups` input features.
    groups: usize,
}

impl Conv {
    /// A unit-stride convolution with the given padding and nothing else.
    fn new(
        batch: usize,
        input: &[usize],
        c_in: usize,
        kernel: &[usize],
        c_out: usize,
        pad: &[(i64, i64)],
    ) -> Conv {
        let nd = input.len();
        Conv {
            batch,
            input: input.to_vec(),
            c_in,
            kernel: kernel.to_vec(),
            c_out,
            pad: pad.to_vec(),
            stride: vec![1; nd],
            lhs_dilate: vec![1; nd],
            rhs_dilate: vec![1; nd],
            reversal: vec![false; nd],
            groups: 1,
        }
    }

    fn kernel_shape(&self) -> Vec<usize> {
        let mut shape = self.kernel.clone();
        shape.extend([self.c_in / self.groups, self.c_out]);
        shape
    }

    fn output(&self) -> Vec<usize> {
        (0..self.input.len())
            .map(|d| {
                let dilated = (self.input[d] as i64 - 1) * self.lhs_dilate[d] as i64 + 1;
                let padded = dilated + self.pad[d].0 + self.pad[d].1;
                let span = (self.kernel[d] as i64 - 1) * self.rhs_dilate[d] as i64 + 1;
                ((padded - span) / self.stride[d] as i64 + 1).max(0) as usize
            })
            .collect()
    }

    fn text(&self) -> String {
        self.typed_text("f32", "f32")
    }

    /// The module with operands of `operand` and a result of `result`.
    fn typed_text(&self, operand: &str, result: &str) -> String {
        let nd = self.input.len();
        let dims = |v: &[usize]| {
            v.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let x = |v: &[usize]| {
            v.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        let spatial: String = (0..nd).map(|d| d.to_string()).collect();
        let mut shape_in = vec![self.batch];
        shape_in.extend(&self.input);
        shape_in.push(self.c_in);
        let shape_k = self.kernel_shape();
        let mut shape_out = vec![self.batch];
        shape_out.extend(self.output());
        shape_out.push(self.c_out);
        let pad = self
            .pad
            .iter()
            .map(|(l, h)| format!("{l}_{h}"))
            .collect::<Vec<_>>()
            .join("x");
        let rev = self
            .reversal
            .iter()
            .map(|&r| if r { "1" } else { "0" })
            .collect::<Vec<_>>()
            .join("x");
        format!(
            "HloModule c\nENTRY e {{\n  x = {operand}[{}] parameter(0)\n  k = {operand}[{}] parameter(1)\n  \
             ROOT c = {result}[{}] convolution(x, k), window={{size={} stride={} pad={pad} \
             lhs_dilate={} rhs_dilate={} rhs_reversal={rev}}}, dim_labels=b{spatial}f_{spatial}io->b{spatial}f, \
             feature_group_count={}\n}}\n",
            dims(&shape_in),
            dims(&shape_k),
            dims(&shape_out),
            x(&self.kernel),
            x(&self.stride),
            x(&self.lhs_dilate),
            x(&self.rhs_dilate),
            self.groups,
        )
    }

    /// The convolution by its definition, in f64: each output and the sum
    /// of its terms' magnitudes (for the error bound).
    fn reference(&self, x: &[f32], k: &[f32]) -> (Vec<f64>, Vec<f64>) {
        let (mut y, mut mag) = (Vec::new(), Vec::new());
        self.for_each_output(|terms| {
            let (mut s, mut m) = (0f64, 0f64);
            for (xi, ki) in terms {
                let t = x[xi] as f64 * k[ki] as f64;
                s += t;
                m += t.abs();
            }
            y.push(s);
            mag.push(m);
        });
        (y, mag)
    }

    /// Calls `out` for each output element in order with its terms: the
    /// (input, kernel) index pairs it sums.
    fn for_each_output(&self, mut out: impl FnMut(&mut dyn Iterator<Item = (usize, usize)>)) {
        let nd = self.input.len();
        let positions: usize = self.output().iter().product();
        let taps: usize = self.kernel.iter().product();
        let in_image: usize = self.input.iter().product();
        let cig = self.c_in / self.groups;
        let cog = self.c_out / self.groups;
        let outs = self.output();
        for b in 0..self.batch {
            for pos in 0..positions {
                let oc = unflatten(pos, &outs);
                // The taps' input positions, where real.
                let real: Vec<(usize, usize)> = (0..taps)
                    .filter_map(|tap| {
                        let kc = unflatten(tap, &self.kernel);
                        let mut at = 0;
                        for d in 0..nd {
                            let kk = if self.reversal[d] {
                                self.kernel[d] - 1 - kc[d]
                            } else {
                                kc[d]
                            };
                            let p = (oc[d] * self.stride[d] + kk * self.rhs_dilate[d]) as i64
                                - self.pad[d].0;
                            let l = self.lhs_dilate[d] as i64;
                            if p < 0 || p % l != 0 || (p / l) as usize >= self.input[d] {
                                return None;
                            }
                            at = at * self.input[d] + (p / l) as usize;
                        }
                        Some((tap, at))
                    })
                    .collect();
                for co in 0..self.c_out {
                    let g = co / cog;
                    let mut terms = real.iter().flat_map(|&(tap, at)| {
                        (0..cig).map(move |c| {
                            (
                                (b * in_image + at) * self.c_in + g * cig + c,
                                (tap * cig + c) * self.c_out + co,
                            )
                        })
                    });
                    out(&mut terms);
                }
            }
        }
    }
}

fn unflatten(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        c[d] = i % dims[d];
        i /= dims[d];
    }
    c
}

fn values(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.unit() as f32 * 2.0 - 1.0).collect()
}

/// Runs `conv` with every form and compares each with the reference.
fn check(conv: &Conv, seed: u64) {
    let mut rng = Rng(seed | 1);
    let mut shape_in = vec![conv.batch];
    shape_in.extend(&conv.input);
    shape_in.push(conv.c_in);
    let shape_k = conv.kernel_shape();
    let x = values(&mut rng, shape_in.iter().product());
    let k = values(&mut rng, shape_k.iter().product());
    let (want, mag) = conv.reference(&x, &k);
    let text = conv.text();
    let args = [
        Literal::from_slice::<f32>(&shape_in, &x).expect("input"),
        Literal::from_slice::<f32>(&shape_k, &k).expect("kernel"),
    ];
    let terms = conv.kernel.iter().product::<usize>() * conv.c_in;
    for form in ["auto", "im2col"] {
        let options = CompileOptions {
            debug_options: vec![("host_conv".into(), form.into())],
            ..CompileOptions::default()
        };
        let runner = HostRunner::compile_with(&text, &options)
            .unwrap_or_else(|e| panic!("{form}: {e}\n{text}"));
        let got = runner
            .run(&args)
            .unwrap_or_else(|e| panic!("{form}: {e}\n{text}"));
        let got = got.data::<f32>().expect("f32 result");
        assert_eq!(got.len(), want.len(), "{form}: {conv:?}");
        for (i, ((&g, &w), &m)) in got.iter().zip(&want).zip(&mag).enumerate() {
            // Each term rounds once to f32 and each add once: k·ε·Σ|terms|.
            let bound = (terms as f64 + 2.0) * f32::EPSILON as f64 * m + 1e-30;
            assert!(
                (g as f64 - w).abs() <= bound,
                "{form}: output {i} is {g}, want {w} (bound {bound:e}) for {conv:?}\n{text}"
            );
        }
    }
}

#[test]
fn every_form_computes_the_convolution() {
    let same2 = [(1, 1), (1, 1)];
    let mut cases = vec![
        // 2-D SAME 3x3 over every width of the row-dot kernel and past it.
        Conv::new(2, &[7, 9], 16, &[3, 3], 1, &same2),
        Conv::new(2, &[7, 9], 16, &[3, 3], 2, &same2),
        Conv::new(2, &[7, 9], 16, &[3, 3], 3, &same2),
        Conv::new(1, &[8, 8], 19, &[3, 3], 5, &same2),
        Conv::new(1, &[8, 8], 19, &[3, 3], 8, &same2),
        Conv::new(1, &[8, 8], 16, &[3, 3], 9, &same2),
        Conv::new(2, &[6, 10], 8, &[3, 3], 16, &same2),
        Conv::new(1, &[6, 10], 8, &[3, 3], 17, &same2),
        // Input features below a vector and not a multiple of one.
        Conv::new(3, &[9, 9], 3, &[3, 3], 4, &same2),
        Conv::new(1, &[9, 9], 1, &[3, 3], 6, &same2),
        // Uneven and negative padding; none at all (read in place).
        Conv::new(2, &[10, 11], 5, &[3, 2], 3, &[(2, 0), (0, 1)]),
        Conv::new(1, &[12, 12], 7, &[3, 3], 4, &[(-1, 2), (1, -1)]),
        Conv::new(2, &[12, 40], 7, &[3, 3], 12, &[(1, -1), (-2, 1)]),
        Conv::new(2, &[12, 40], 7, &[3, 3], 3, &[(1, -1), (-2, 1)]),
        Conv::new(2, &[30], 4, &[4], 3, &[(-3, -2)]),
        Conv::new(2, &[9, 9], 20, &[3, 3], 3, &[(0, 0), (0, 0)]),
        Conv::new(2, &[9, 9], 20, &[1, 1], 12, &[(0, 0), (0, 0)]),
        // 1-D and 3-D.
        Conv::new(3, &[40], 9, &[5], 2, &[(4, 0)]),
        Conv::new(1, &[33], 32, &[3], 24, &[(1, 1)]),
        Conv::new(1, &[5, 6, 7], 6, &[3, 3, 3], 3, &[(1, 1), (1, 1), (1, 1)]),
        Conv::new(1, &[5, 6, 7], 6, &[2, 3, 2], 10, &[(0, 1), (1, 1), (1, 0)]),
        // A batch split into chunks (rows × features past the chunk size).
        Conv::new(3, &[100_000], 13, &[3], 3, &[(1, 1)]),
    ];
    // Kernel dilation: one segment per tap.
    let mut dilated = Conv::new(2, &[12, 12], 6, &[3, 3], 3, &[(2, 2), (2, 2)]);
    dilated.rhs_dilate = vec![2, 2];
    cases.push(dilated.clone());
    dilated.c_out = 20;
    cases.push(dilated);
    let mut dilated_1d = Conv::new(2, &[64], 16, &[2], 5, &[(4, 0)]);
    dilated_1d.rhs_dilate = vec![4];
    cases.push(dilated_1d);
    // Reversal of the last dimension (taps in descending pixel order) and
    // of the first.
    for (rev, c_out) in [([false, true], 3), ([true, false], 3), ([true, true], 18)] {
        let mut c = Conv::new(1, &[8, 9], 11, &[3, 3], c_out, &same2);
        c.reversal = rev.to_vec();
        cases.push(c);
    }
    // Strides and input dilation: im2col in both settings.
    let mut strided = Conv::new(2, &[11, 11], 8, &[3, 3], 3, &same2);
    strided.stride = vec![2, 2];
    cases.push(strided);
    let mut transposed = Conv::new(1, &[6, 6], 8, &[3, 3], 4, &[(2, 2), (2, 2)]);
    transposed.lhs_dilate = vec![2, 2];
    cases.push(transposed);
    for (i, conv) in cases.iter().enumerate() {
        check(conv, 1000 + i as u64);
    }
}

/// Random values of an integer type, widened; the type's extremes included.
fn int_values(rng: &mut Rng, ty: &str, n: usize) -> Vec<i64> {
    let (lo, hi): (i64, i64) = match ty {
        "s8" => (-128, 127),
        "u8" => (0, 255),
        "s16" => (-32768, 32767),
        "s32" => (i32::MIN as i64, i32::MAX as i64),
        "pred" => (0, 1),
        _ => panic!("no values for {ty}"),
    };
    let span = (hi - lo + 1) as u64;
    (0..n)
        .map(|i| match i % 17 {
            0 => lo,
            1 => hi,
            _ => lo + (rng.next() % span) as i64,
        })
        .collect()
}

fn int_literal(ty: &str, dims: &[usize], v: &[i64]) -> Literal {
    match ty {
        "s8" => Literal::from_slice::<i8>(dims, &v.iter().map(|&x| x as i8).collect::<Vec<_>>()),
        "u8" => Literal::from_slice::<u8>(dims, &v.iter().map(|&x| x as u8).collect::<Vec<_>>()),
        "pred" => Literal::from_bools(dims, &v.iter().map(|&x| x != 0).collect::<Vec<_>>()),
        "s16" => Literal::from_slice::<i16>(dims, &v.iter().map(|&x| x as i16).collect::<Vec<_>>()),
        "s32" => Literal::from_slice::<i32>(dims, &v.iter().map(|&x| x as i32).collect::<Vec<_>>()),
        _ => panic!("no literal for {ty}"),
    }
    .expect("literal")
}

/// The result's elements, widened (each holds the exact sum's low bits).
fn int_result(ty: &str, got: &Literal) -> Vec<i64> {
    match ty {
        "s8" => got
            .data::<i8>()
            .expect("s8")
            .iter()
            .map(|&x| x as i64)
            .collect(),
        "u8" => got
            .data::<u8>()
            .expect("u8")
            .iter()
            .map(|&x| x as i64)
            .collect(),
        "s16" => got
            .data::<i16>()
            .expect("s16")
            .iter()
            .map(|&x| x as i64)
            .collect(),
        "s32" => got
            .data::<i32>()
            .expect("s32")
            .iter()
            .map(|&x| x as i64)
            .collect(),
        "pred" => got
            .to_bools()
            .expect("pred")
            .iter()
            .map(|&x| x as i64)
            .collect(),
        _ => panic!("no result for {ty}"),
    }
}

/// The exact sum wrapped to the result type, as XLA's integer convolution
/// gives it (a pred result is "some product is true").
fn wrap(ty: &str, sum: i64) -> i64 {
    match ty {
        "s8" => sum as i8 as i64,
        "u8" => sum as u8 as i64,
        "s16" => sum as i16 as i64,
        "s32" => sum as i32 as i64,
        "pred" => (sum != 0) as i64,
        _ => panic!("no wrap for {ty}"),
    }
}

/// Integer convolutions (packed-word products: byte quads under VNNI, AMX
/// tiles for large s8 and u8 ones, i16 pairs, i32 words) are exact modulo
/// the result's width, in every form: SAME and strided windows, input
/// dilation (tap classes), feature groups, several batches, and the
/// operand types' extremes (-128 in an s8 operand is where the byte
/// quads' correction terms matter).
#[test]
fn integer_convolutions_are_exact() {
    let same2 = [(1, 1), (1, 1)];
    let mut cases = vec![
        Conv::new(2, &[9, 9], 16, &[3, 3], 16, &same2),
        Conv::new(1, &[7, 5], 3, &[3, 3], 5, &same2),
        Conv::new(2, &[40], 9, &[5], 2, &[(4, 0)]),
        // Large enough for AMX (4M multiply-adds and more).
        Conv::new(2, &[32, 32], 64, &[3, 3], 64, &same2),
    ];
    let mut strided = Conv::new(2, &[11, 11], 8, &[3, 3], 7, &same2);
    strided.stride = vec![2, 2];
    cases.push(strided);
    let mut transposed = Conv::new(1, &[6, 6], 8, &[3, 3], 4, &[(2, 2), (2, 2)]);
    transposed.lhs_dilate = vec![2, 2];
    cases.push(transposed);
    let mut grouped = Conv::new(2, &[8, 8], 12, &[3, 3], 6, &same2);
    grouped.groups = 3;
    cases.push(grouped);
    // Byte forms on AMX tiles (16 output features per group and more):
    // rows, taps × features and output features off whole tiles, with and
    // without tap classes, strided, and grouped.
    cases.push(Conv::new(3, &[13, 10], 24, &[3, 3], 40, &[(0, 0), (0, 0)]));
    let mut strided_amx = Conv::new(2, &[15, 15], 20, &[3, 3], 33, &same2);
    strided_amx.stride = vec![2, 2];
    cases.push(strided_amx);
    let mut grouped_amx = Conv::new(2, &[9, 9], 16, &[3, 3], 48, &same2);
    grouped_amx.groups = 2;
    cases.push(grouped_amx);
    // Depthwise: one input feature per group, one and three outputs each.
    let mut depthwise = Conv::new(2, &[9, 9], 16, &[3, 3], 16, &same2);
    depthwise.groups = 16;
    cases.push(depthwise);
    let mut multiplier = Conv::new(1, &[8, 7], 8, &[3, 3], 24, &[(2, 0), (1, 1)]);
    multiplier.groups = 8;
    multiplier.stride = vec![1, 2];
    cases.push(multiplier);
    let types = [
        ("s8", "s32"),
        ("u8", "s32"),
        ("s16", "s32"),
        ("s32", "s32"),
        ("s8", "s8"),
        ("s8", "s16"),
        ("u8", "u8"),
        ("pred", "pred"),
    ];
    for (i, conv) in cases.iter().enumerate() {
        for (t, &(operand, result)) in types.iter().enumerate() {
            let mut rng = Rng(7919 * (i as u64 + 1) + t as u64);
            let mut shape_in = vec![conv.batch];
            shape_in.extend(&conv.input);
            shape_in.push(conv.c_in);
            let shape_k = conv.kernel_shape();
            let x = int_values(&mut rng, operand, shape_in.iter().product());
            let k = int_values(&mut rng, operand, shape_k.iter().product());
            let mut want = Vec::new();
            conv.for_each_output(|terms| {
                let sum = terms.fold(0i64, |s, (xi, ki)| {
                    s.wrapping_add(x[xi].wrapping_mul(k[ki]))
                });
                want.push(wrap(result, sum));
            });
            let text = conv.typed_text(operand, result);
            let args = [
                int_literal(operand, &shape_in, &x),
                int_literal(operand, &shape_k, &k),
            ];
            let got = HostRunner::compile(&text)
                .and_then(|r| r.run(&args))
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let got = int_result(result, &got);
            assert_eq!(got.len(), want.len(), "{conv:?}\n{text}");
            if let Some(at) = got.iter().zip(&want).position(|(g, w)| g != w) {
                panic!(
                    "{operand} -> {result}: output {at} is {}, want {} for {conv:?}\n{text}",
                    got[at], want[at]
                );
            }
        }
    }
}
