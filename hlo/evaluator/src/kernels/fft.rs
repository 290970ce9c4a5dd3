//! `fft`: FFT, IFFT, RFFT and IRFFT over the last 1, 2 or 3 dimensions, any
//! lengths.
//!
//! Conventions (XLA's, which are NumPy's): FFT uses `exp(-2πi jk/n)`; IFFT
//! uses `exp(+2πi jk/n)` and divides by `n` per transformed dimension. RFFT
//! takes real input of the `fft_length` sizes and keeps the `n/2 + 1`
//! non-redundant bins of the last dimension. IRFFT takes those bins, inverts
//! the other dimensions, then treats the last dimension as Hermitian — bins
//! above `n/2` are the conjugates of those below, and the imaginary parts of
//! the DC and (even `n`) Nyquist bins cannot affect the real result — and
//! returns the real part.
//!
//! Everything is computed in f64 complex and rounded once to the result type,
//! so single-precision results are at least as accurate as XLA CPU's.
//! Lengths that are powers of two use an iterative radix-2 transform; short
//! other lengths (up to 64) a direct DFT with an exact twiddle table; longer
//! ones Bluestein's algorithm (a chirp convolution done with power-of-two
//! FFTs), so every length costs O(n log n).

use super::util::{self, invalid, operand_array};
use super::CallComputation;
use hlo_ir::{ElementType, HloInstruction, Literal, Result};
use hlo_ir::{FftType, Op};
use num_complex::{Complex32, Complex64};
use std::f64::consts::PI;

/// `exp(sign * 2πi * num / den)` computed from the reduced fraction for
/// accuracy; exact at multiples of a quarter turn (`cos(π/2)` in f64 is
/// 6e-17, not 0, which would turn an infinite input into an infinite
/// component where every FFT has a finite one).
fn twiddle(num: usize, den: usize, sign: f64) -> Complex64 {
    let r = num % den;
    if (4 * r).is_multiple_of(den) {
        return match 4 * r / den {
            0 => Complex64::new(1.0, 0.0),
            1 => Complex64::new(0.0, sign),
            2 => Complex64::new(-1.0, 0.0),
            _ => Complex64::new(0.0, -sign),
        };
    }
    let angle = sign * 2.0 * PI * (r as f64) / (den as f64);
    Complex64::new(angle.cos(), angle.sin())
}

/// `v * w` for a twiddle `w`; a quarter-turn twiddle (±1, ±i) moves the
/// components without multiplying them, as FFT libraries (and XLA CPU's)
/// do, so an infinite component is not multiplied by a zero into a NaN.
fn times(v: Complex64, w: Complex64) -> Complex64 {
    match (w.re, w.im) {
        (1.0, 0.0) => v,
        (-1.0, 0.0) => -v,
        (0.0, 1.0) => Complex64::new(-v.im, v.re),
        (0.0, -1.0) => Complex64::new(v.im, -v.re),
        _ => v * w,
    }
}

/// A forward transform of one length (inverse transforms conjugate around it).
enum Plan {
    Trivial,
    Radix2 {
        n: usize,
        twiddles: Vec<Complex64>,
    },
    Direct {
        n: usize,
        table: Vec<Complex64>,
    },
    Bluestein {
        n: usize,
        m: usize,
        chirp: Vec<Complex64>,
        filter: Vec<Complex64>,
        inner: Box<Plan>,
    },
}

impl Plan {
    fn new(n: usize) -> Plan {
        if n <= 1 {
            Plan::Trivial
        } else if n.is_power_of_two() {
            Plan::Radix2 {
                n,
                twiddles: (0..n / 2).map(|k| twiddle(k, n, -1.0)).collect(),
            }
        } else if n <= 64 {
            Plan::Direct {
                n,
                table: (0..n).map(|k| twiddle(k, n, -1.0)).collect(),
            }
        } else {
            let m = (2 * n - 1).next_power_of_two();
            // c_k = exp(-πi k²/n) = exp(-2πi k² / 2n).
            let chirp: Vec<Complex64> = (0..n)
                .map(|k| twiddle((k * k) % (2 * n), 2 * n, -1.0))
                .collect();
            let inner = Box::new(Plan::new(m));
            let mut filter = vec![Complex64::new(0.0, 0.0); m];
            for k in 0..n {
                filter[k] = chirp[k].conj();
                if k > 0 {
                    filter[m - k] = chirp[k].conj();
                }
            }
            inner.forward(&mut filter);
            Plan::Bluestein {
                n,
                m,
                chirp,
                filter,
                inner,
            }
        }
    }

    /// In-place forward DFT of `x` (whose length is the plan's).
    fn forward(&self, x: &mut [Complex64]) {
        match self {
            Plan::Trivial => {}
            Plan::Radix2 { n, twiddles } => {
                let n = *n;
                let bits = n.trailing_zeros();
                for i in 0..n {
                    let j = i.reverse_bits() >> (usize::BITS - bits);
                    if i < j {
                        x.swap(i, j);
                    }
                }
                let mut len = 2;
                while len <= n {
                    let half = len / 2;
                    let step = n / len;
                    for start in (0..n).step_by(len) {
                        for k in 0..half {
                            let w = twiddles[k * step];
                            let u = x[start + k];
                            let v = times(x[start + k + half], w);
                            x[start + k] = u + v;
                            x[start + k + half] = u - v;
                        }
                    }
                    len *= 2;
                }
            }
            Plan::Direct { n, table } => {
                let n = *n;
                let input = x.to_vec();
                for (k, out) in x.iter_mut().enumerate() {
                    let mut acc = Complex64::new(0.0, 0.0);
                    for (j, &v) in input.iter().enumerate() {
                        acc += times(v, table[(j * k) % n]);
                    }
                    *out = acc;
                }
            }
            Plan::Bluestein {
                n,
                m,
                chirp,
                filter,
                inner,
            } => {
                let (n, m) = (*n, *m);
                let mut a = vec![Complex64::new(0.0, 0.0); m];
                for k in 0..n {
                    a[k] = x[k] * chirp[k];
                }
                inner.forward(&mut a);
                for (v, f) in a.iter_mut().zip(filter) {
                    *v *= f;
                }
                // Inverse of size m through the forward transform.
                for v in a.iter_mut() {
                    *v = v.conj();
                }
                inner.forward(&mut a);
                let scale = 1.0 / m as f64;
                for k in 0..n {
                    x[k] = a[k].conj() * scale * chirp[k];
                }
            }
        }
    }

    /// In-place inverse DFT, divided by the length.
    fn inverse(&self, x: &mut [Complex64]) {
        for v in x.iter_mut() {
            *v = v.conj();
        }
        self.forward(x);
        let scale = 1.0 / x.len().max(1) as f64;
        for v in x.iter_mut() {
            *v = v.conj() * scale;
        }
    }
}

/// Transforms every line of `data` (row-major `dims`) along `axis`.
fn transform_axis(data: &mut [Complex64], dims: &[usize], axis: usize, inverse: bool) {
    let n = dims[axis];
    if n <= 1 || data.is_empty() {
        return;
    }
    let plan = Plan::new(n);
    let strides = util::strides_of(dims);
    let stride = strides[axis];
    let mut outer = dims.to_vec();
    outer[axis] = 1;
    let mut line = vec![Complex64::new(0.0, 0.0); n];
    util::walk1(&outer, &strides, |base| {
        for (t, v) in line.iter_mut().enumerate() {
            *v = data[base + t * stride];
        }
        if inverse {
            plan.inverse(&mut line);
        } else {
            plan.forward(&mut line);
        }
        for (t, v) in line.iter().enumerate() {
            data[base + t * stride] = *v;
        }
    });
}

fn read_complex(literal: &Literal) -> Result<Vec<Complex64>> {
    Ok(match literal.element_type() {
        Some(ElementType::C64) => literal
            .data::<Complex32>()?
            .iter()
            .map(|v| Complex64::new(v.re as f64, v.im as f64))
            .collect(),
        Some(ElementType::C128) => literal.data::<Complex64>()?.to_vec(),
        Some(ElementType::F32) => literal
            .data::<f32>()?
            .iter()
            .map(|&v| Complex64::new(v as f64, 0.0))
            .collect(),
        Some(ElementType::F64) => literal
            .data::<f64>()?
            .iter()
            .map(|&v| Complex64::new(v, 0.0))
            .collect(),
        _ => return Err(hlo_ir::Error::internal("fft operand type checked before")),
    })
}

/// The `fft` kernel.
pub fn fft(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Fft {
        fft_type,
        fft_length,
    } = &instr.op
    else {
        return Err(invalid(instr, "not an fft"));
    };
    if operands.len() != 1 {
        return Err(invalid(
            instr,
            format!("expects 1 operand, got {}", operands.len()),
        ));
    }
    let (input, in_shape) = operand_array(instr, operands, 0)?;
    let result = util::result_array(instr)?;
    let r = fft_length.len();
    let rank = in_shape.dims.len();
    let (it, ot) = (in_shape.element_type, result.element_type);
    let types_ok = match fft_type {
        FftType::Fft | FftType::Ifft => it.is_complex() && ot == it,
        FftType::Rfft => {
            (it == ElementType::F32 && ot == ElementType::C64)
                || (it == ElementType::F64 && ot == ElementType::C128)
        }
        FftType::Irfft => {
            (it == ElementType::C64 && ot == ElementType::F32)
                || (it == ElementType::C128 && ot == ElementType::F64)
        }
    };
    let shapes_ok = (1..=3).contains(&r) && rank >= r && result.dims.len() == rank && {
        let lead = rank - r;
        let last = fft_length[r - 1];
        // Length 0 keeps 0 bins (XLA's shape rule), else n/2 + 1.
        let half = if last == 0 { 0 } else { last / 2 + 1 };
        let (in_tail, out_tail) = (&in_shape.dims[lead..], &result.dims[lead..]);
        in_shape.dims[..lead] == result.dims[..lead]
            && match fft_type {
                // XLA transforms an empty operand to an empty result
                // whatever fft_length says.
                FftType::Fft | FftType::Ifft => {
                    (in_tail == &fft_length[..] && out_tail == &fft_length[..])
                        || (input.element_count() == 0 && in_tail == out_tail)
                }
                FftType::Rfft => {
                    in_tail == &fft_length[..]
                        && out_tail[..r - 1] == fft_length[..r - 1]
                        && out_tail[r - 1] == half
                }
                FftType::Irfft => {
                    out_tail == &fft_length[..]
                        && in_tail[..r - 1] == fft_length[..r - 1]
                        && in_tail[r - 1] == half
                }
            }
    };
    if !types_ok || !shapes_ok {
        return Err(invalid(
            instr,
            format!(
                "{fft_type} with fft_length={fft_length:?} cannot turn {} into {}",
                input.shape(),
                instr.shape
            ),
        ));
    }
    if input.element_count() == 0 || result.dims.contains(&0) {
        // Nothing to transform (an empty batch or a zero length): the result
        // is empty too, or (an inverse of all-empty lines) zeros.
        return Ok(Literal::zeros(&instr.shape.without_layout()));
    }
    let lead = rank - r;
    let mut data = read_complex(input)?;
    let out: Vec<Complex64> = match fft_type {
        FftType::Fft | FftType::Ifft => {
            for axis in lead..rank {
                transform_axis(&mut data, &in_shape.dims, axis, *fft_type == FftType::Ifft);
            }
            data
        }
        FftType::Rfft => {
            for axis in lead..rank {
                transform_axis(&mut data, &in_shape.dims, axis, false);
            }
            // Keep the first n/2 + 1 bins of the last dimension.
            let n = in_shape.dims[rank - 1];
            let half = result.dims[rank - 1];
            let lines = data.len().checked_div(n).unwrap_or(0);
            let mut out = Vec::with_capacity(lines * half);
            for line in 0..lines {
                out.extend_from_slice(&data[line * n..line * n + half]);
            }
            out
        }
        FftType::Irfft => {
            for axis in lead..rank - 1 {
                transform_axis(&mut data, &in_shape.dims, axis, true);
            }
            let half = in_shape.dims[rank - 1];
            let n = result.dims[rank - 1];
            let lines = data.len().checked_div(half).unwrap_or(0);
            let plan = Plan::new(n);
            let mut out = Vec::with_capacity(lines * n);
            let mut full = vec![Complex64::new(0.0, 0.0); n];
            for line in 0..lines {
                let bins = &data[line * half..line * half + half];
                for (k, v) in full.iter_mut().enumerate() {
                    *v = if k < half {
                        bins[k]
                    } else {
                        bins[n - k].conj()
                    };
                }
                plan.inverse(&mut full);
                out.extend(full.iter().map(|v| Complex64::new(v.re, 0.0)));
            }
            out
        }
    };
    match ot {
        ElementType::C64 => {
            let v: Vec<Complex32> = out
                .iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect();
            util::literal_from_values(result, &v)
        }
        ElementType::C128 => util::literal_from_values(result, &out),
        ElementType::F32 => {
            let v: Vec<f32> = out.iter().map(|c| c.re as f32).collect();
            util::literal_from_values(result, &v)
        }
        _ => {
            let v: Vec<f64> = out.iter().map(|c| c.re).collect();
            util::literal_from_values(result, &v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_dft(x: &[Complex64]) -> Vec<Complex64> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(j, &v)| {
                        v * Complex64::from_polar(1.0, -2.0 * PI * (j * k) as f64 / n as f64)
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn every_plan_matches_the_naive_dft() {
        for n in [1, 2, 3, 5, 8, 12, 16, 63, 64, 65, 97, 100, 128, 1000] {
            let x: Vec<Complex64> = (0..n)
                .map(|i| {
                    Complex64::new(((i * 7919) % 13) as f64 - 6.0, ((i * 31) % 7) as f64 * 0.5)
                })
                .collect();
            let want = naive_dft(&x);
            let mut got = x.clone();
            Plan::new(n).forward(&mut got);
            let scale = want.iter().map(|v| v.norm()).fold(1.0, f64::max);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).norm() <= 1e-12 * scale * n as f64,
                    "n={n}: {g} vs {w}"
                );
            }
            Plan::new(n).inverse(&mut got);
            for (g, w) in got.iter().zip(&x) {
                assert!(
                    (g - w).norm() <= 1e-12 * scale,
                    "n={n} round trip: {g} vs {w}"
                );
            }
        }
    }
}
