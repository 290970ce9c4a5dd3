//! `fft`: FFT, IFFT, RFFT and IRFFT over the innermost 1–3 dimensions.
//!
//! Transforms are computed in complex f64 whatever the element type (then
//! rounded once), one dimension at a time: every line along a transformed
//! dimension is gathered, transformed and scattered back, lines in parallel.
//! Each line is transformed by `rustfft` (every length O(n log n)). Inverse
//! transforms scale by 1/n
//! per dimension. RFFT keeps the `n/2 + 1` non-redundant outputs of the last
//! dimension; IRFFT first inverts the other dimensions, then rebuilds each last-
//! dimension line from its Hermitian half and keeps the real part.

use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, Thunk};
use num_complex::{Complex32, Complex64};
use platform_api::hlo::{FftType, InstrId, Op};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

/// A precomputed transform of one length: `rustfft`'s plans (mixed radix,
/// Rader's and Bluestein's algorithms chosen per length, SIMD where the
/// processor has it), in f64.
pub struct FftPlan {
    forward: Arc<dyn rustfft::Fft<f64>>,
    inverse: Arc<dyn rustfft::Fft<f64>>,
}

impl FftPlan {
    pub fn new(n: usize) -> FftPlan {
        let mut planner = rustfft::FftPlanner::new();
        FftPlan {
            forward: planner.plan_fft_forward(n),
            inverse: planner.plan_fft_inverse(n),
        }
    }

    /// In-place unnormalized forward transform.
    pub fn forward(&self, x: &mut [Complex64]) {
        if x.len() > 1 {
            self.forward.process(x);
        }
    }

    /// In-place unnormalized inverse transform.
    pub fn inverse(&self, x: &mut [Complex64]) {
        if x.len() > 1 {
            self.inverse.process(x);
        }
    }
}

/// Applies `f` to every line along dimension `d` of a row-major array.
fn along(data: &mut [Complex64], dims: &[usize], d: usize, f: impl Fn(&mut [Complex64]) + Sync) {
    let n = dims[d];
    let inner: usize = dims[d + 1..].iter().product();
    let outer: usize = dims[..d].iter().product();
    let base = data.as_mut_ptr() as usize;
    parallel_for(outer * inner, (1 << 12) / n.max(1) + 1, |s, e| {
        let data = base as *mut Complex64;
        let mut line = vec![Complex64::new(0.0, 0.0); n];
        for l in s..e {
            let (o, i) = (l / inner, l % inner);
            for (j, v) in line.iter_mut().enumerate() {
                // SAFETY: position (o, j, i) of the array; lines are disjoint.
                *v = unsafe { data.add((o * n + j) * inner + i).read() };
            }
            f(&mut line);
            for (j, v) in line.iter().enumerate() {
                // SAFETY: as above.
                unsafe { data.add((o * n + j) * inner + i).write(*v) };
            }
        }
    });
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::Fft {
        fft_type,
        fft_length,
    } = &instr.op
    else {
        return Err(Error::internal("not an fft"));
    };
    let input = ctx.operand_array(instr, 0)?;
    let result = ctx.result_array(instr)?;
    let bad = |why: String| Error::invalid_argument(format!("fft %{}: {why}", instr.name));
    let k = fft_length.len();
    if k == 0 || k > 3 || input.rank() < k {
        return Err(bad(format!(
            "fft_length {fft_length:?} for an operand of rank {}",
            input.rank()
        )));
    }
    let lead = input.rank() - k;
    let n_last = fft_length[k - 1];
    // Length 0 keeps 0 bins (XLA's shape rule), else n/2 + 1.
    let bins = if n_last == 0 { 0 } else { n_last / 2 + 1 };
    let (in_last, out_last) = match fft_type {
        FftType::Fft | FftType::Ifft => (n_last, n_last),
        FftType::Rfft => (n_last, bins),
        FftType::Irfft => (bins, n_last),
    };
    let want_in: Vec<usize> = input.dims[..lead]
        .iter()
        .copied()
        .chain(fft_length[..k - 1].iter().copied())
        .chain([in_last])
        .collect();
    let want_out: Vec<usize> = input.dims[..lead]
        .iter()
        .copied()
        .chain(fft_length[..k - 1].iter().copied())
        .chain([out_last])
        .collect();
    if input.dims != want_in || result.dims != want_out {
        return Err(bad(format!(
            "{input} → {result} does not fit fft_length {fft_length:?}"
        )));
    }
    let (in_ty, out_ty) = (input.element_type, result.element_type);
    let types_ok = match fft_type {
        FftType::Fft | FftType::Ifft => in_ty.is_complex() && in_ty == out_ty,
        FftType::Rfft => matches!(
            (in_ty, out_ty),
            (ElementType::F32, ElementType::C64) | (ElementType::F64, ElementType::C128)
        ),
        FftType::Irfft => matches!(
            (in_ty, out_ty),
            (ElementType::C64, ElementType::F32) | (ElementType::C128, ElementType::F64)
        ),
    };
    if !types_ok {
        return Err(bad(format!("{fft_type} from {in_ty} to {out_ty}")));
    }
    let plans: Vec<Arc<FftPlan>> = fft_length
        .iter()
        .map(|&n| Arc::new(FftPlan::new(n)))
        .collect();
    let batch: usize = input.dims[..lead].iter().product();
    let full: Vec<usize> = std::iter::once(batch)
        .chain(fft_length.iter().copied())
        .collect();
    let half: Vec<usize> = std::iter::once(batch)
        .chain(fft_length[..k - 1].iter().copied())
        .chain([n_last / 2 + 1])
        .collect();
    let fft_type = *fft_type;
    let fft_length = fft_length.clone();
    let (src, out) = (ctx.operand_slice(instr, 0)?, ctx.result_slice(id)?);
    let (in_count, out_count) = (input.element_count(), result.element_count());
    Ok(thunk(instr.name.clone(), "fft", move |ctx| {
        let (ps, po) = (ctx.ptr(src), ctx.ptr(out));
        if in_count == 0 || out_count == 0 {
            // Nothing to transform (an empty batch or a zero length): the
            // result, if it has elements at all, is the transform of zeros.
            // SAFETY: the result holds `out_count` elements of `out_ty`.
            unsafe { po.write_bytes(0, out_count * out_ty.byte_size()) };
            return Ok(());
        }
        // Widen the input to complex f64.
        // SAFETY: the operand holds `in_count` elements of `in_ty`.
        let widened: Vec<Complex64> = unsafe {
            match in_ty {
                ElementType::C64 => std::slice::from_raw_parts(ps.cast::<Complex32>(), in_count)
                    .iter()
                    .map(|c| Complex64::new(c.re as f64, c.im as f64))
                    .collect(),
                ElementType::C128 => {
                    std::slice::from_raw_parts(ps.cast::<Complex64>(), in_count).to_vec()
                }
                ElementType::F32 => std::slice::from_raw_parts(ps.cast::<f32>(), in_count)
                    .iter()
                    .map(|&v| Complex64::new(v as f64, 0.0))
                    .collect(),
                _ => std::slice::from_raw_parts(ps.cast::<f64>(), in_count)
                    .iter()
                    .map(|&v| Complex64::new(v, 0.0))
                    .collect(),
            }
        };
        let output: Vec<Complex64> = match fft_type {
            FftType::Fft | FftType::Rfft => {
                let mut w = widened;
                for (i, plan) in plans.iter().enumerate() {
                    along(&mut w, &full, i + 1, |line| plan.forward(line));
                }
                if fft_type == FftType::Rfft {
                    let last = n_last;
                    let keep = n_last / 2 + 1;
                    w.chunks(last)
                        .flat_map(|row| row[..keep].to_vec())
                        .collect()
                } else {
                    w
                }
            }
            FftType::Ifft => {
                let mut w = widened;
                for (i, plan) in plans.iter().enumerate() {
                    let scale = 1.0 / fft_length[i] as f64;
                    along(&mut w, &full, i + 1, |line| {
                        plan.inverse(line);
                        line.iter_mut().for_each(|v| *v *= scale);
                    });
                }
                w
            }
            FftType::Irfft => {
                let mut w = widened;
                for (i, plan) in plans.iter().enumerate().take(k - 1) {
                    let scale = 1.0 / fft_length[i] as f64;
                    along(&mut w, &half, i + 1, |line| {
                        plan.inverse(line);
                        line.iter_mut().for_each(|v| *v *= scale);
                    });
                }
                let keep = n_last / 2 + 1;
                let plan = &plans[k - 1];
                let scale = 1.0 / n_last as f64;
                let mut real = Vec::with_capacity(out_count);
                let mut line = vec![Complex64::new(0.0, 0.0); n_last];
                for row in w.chunks(keep) {
                    for j in 0..n_last {
                        line[j] = if j < keep {
                            row[j]
                        } else {
                            row[n_last - j].conj()
                        };
                    }
                    plan.inverse(&mut line);
                    real.extend(line.iter().map(|v| Complex64::new(v.re * scale, 0.0)));
                }
                real
            }
        };
        // Narrow into the result.
        // SAFETY: the result holds `out_count` elements of `out_ty`.
        unsafe {
            match out_ty {
                ElementType::C64 => {
                    let o = std::slice::from_raw_parts_mut(po.cast::<Complex32>(), out_count);
                    for (d, s) in o.iter_mut().zip(&output) {
                        *d = Complex32::new(s.re as f32, s.im as f32);
                    }
                }
                ElementType::C128 => {
                    std::slice::from_raw_parts_mut(po.cast::<Complex64>(), out_count)
                        .copy_from_slice(&output[..out_count])
                }
                ElementType::F32 => {
                    let o = std::slice::from_raw_parts_mut(po.cast::<f32>(), out_count);
                    for (d, s) in o.iter_mut().zip(&output) {
                        *d = s.re as f32;
                    }
                }
                _ => {
                    let o = std::slice::from_raw_parts_mut(po.cast::<f64>(), out_count);
                    for (d, s) in o.iter_mut().zip(&output) {
                        *d = s.re;
                    }
                }
            }
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn naive_dft(x: &[Complex64]) -> Vec<Complex64> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(j, v)| {
                        v * Complex64::from_polar(1.0, -2.0 * PI * (j * k) as f64 / n as f64)
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn transforms_of_any_length_match_the_definition() {
        for n in [1usize, 2, 8, 5, 12, 17, 100] {
            let x: Vec<Complex64> = (0..n)
                .map(|i| Complex64::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
                .collect();
            let mut y = x.clone();
            let plan = FftPlan::new(n);
            plan.forward(&mut y);
            for (a, b) in y.iter().zip(naive_dft(&x)) {
                assert!((a - b).norm() < 1e-9 * n as f64, "n={n}: {a} vs {b}");
            }
            plan.inverse(&mut y);
            for (a, b) in y.iter().zip(&x) {
                assert!((a / n as f64 - b).norm() < 1e-12 * n as f64, "n={n}");
            }
        }
    }
}
