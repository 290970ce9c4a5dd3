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
        }
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
        let mut shape_k = self.kernel.clone();
        shape_k.extend([self.c_in, self.c_out]);
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
            "HloModule c\nENTRY e {{\n  x = f32[{}] parameter(0)\n  k = f32[{}] parameter(1)\n  \
             ROOT c = f32[{}] convolution(x, k), window={{size={} stride={} pad={pad} \
             lhs_dilate={} rhs_dilate={} rhs_reversal={rev}}}, dim_labels=b{spatial}f_{spatial}io->b{spatial}f\n}}\n",
            dims(&shape_in),
            dims(&shape_k),
            dims(&shape_out),
            x(&self.kernel),
            x(&self.stride),
            x(&self.lhs_dilate),
            x(&self.rhs_dilate),
        )
    }

    /// The convolution by its definition, in f64: each output and the sum
    /// of its terms' magnitudes (for the error bound).
    fn reference(&self, x: &[f32], k: &[f32]) -> (Vec<f64>, Vec<f64>) {
        let nd = self.input.len();
        let out = self.output();
        let positions: usize = out.iter().product();
        let taps: usize = self.kernel.iter().product();
        let in_image: usize = self.input.iter().product();
        let (mut y, mut mag) = (Vec::new(), Vec::new());
        for b in 0..self.batch {
            for pos in 0..positions {
                let oc = unflatten(pos, &out);
                for co in 0..self.c_out {
                    let (mut s, mut m) = (0f64, 0f64);
                    'taps: for tap in 0..taps {
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
                                continue 'taps;
                            }
                            at = at * self.input[d] + (p / l) as usize;
                        }
                        for ci in 0..self.c_in {
                            let xv = x[(b * in_image + at) * self.c_in + ci] as f64;
                            let kv = k[(tap * self.c_in + ci) * self.c_out + co] as f64;
                            s += xv * kv;
                            m += (xv * kv).abs();
                        }
                    }
                    y.push(s);
                    mag.push(m);
                }
            }
        }
        (y, mag)
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
    let mut shape_k = conv.kernel.clone();
    shape_k.extend([conv.c_in, conv.c_out]);
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
