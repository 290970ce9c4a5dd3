//! `fft`: FFT, IFFT, RFFT and IRFFT over the innermost 1–3 dimensions.
//!
//! Transforms run in the precision of the element type, as XLA CPU's do: f32
//! for `c64`/`f32`, f64 for `c128`/`f64`. Complex dimensions are transformed
//! one at a time by `rustfft` (every length O(n log n): mixed radix, Rader's,
//! Bluestein's, SIMD where the processor has it): every line along the
//! dimension is gathered, transformed and scattered back, lines in parallel.
//! The real transforms use `realfft` on the last dimension (half the work of
//! a complex transform of real data): RFFT transforms the rows real-to-
//! complex, keeping the `n/2 + 1` non-redundant bins, then the other
//! dimensions; IRFFT inverts the other dimensions first, then each row
//! complex-to-real from its Hermitian half (the imaginary parts of the DC and
//! Nyquist bins cannot reach a real output, so they are ignored). Inverse
//! transforms scale by 1/n per dimension. Work happens in the result buffer
//! where its type allows, else in one scratch copy.

use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, Thunk};
use num_complex::Complex;
use platform_api::hlo::{FftType, InstrId, Op};
use platform_api::{ElementType, Error, Result};
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftNum, FftPlanner};
use std::sync::Arc;

/// A precomputed complex transform of one length, both directions.
pub struct FftPlan<T: FftNum> {
    forward: Arc<dyn Fft<T>>,
    inverse: Arc<dyn Fft<T>>,
}

impl<T: FftNum> FftPlan<T> {
    pub fn new(n: usize) -> Self {
        let mut planner = FftPlanner::new();
        FftPlan {
            forward: planner.plan_fft_forward(n),
            inverse: planner.plan_fft_inverse(n),
        }
    }

    /// In-place unnormalized forward transform.
    pub fn forward(&self, x: &mut [Complex<T>]) {
        if x.len() > 1 {
            self.forward.process(x);
        }
    }

    /// In-place unnormalized inverse transform.
    pub fn inverse(&self, x: &mut [Complex<T>]) {
        if x.len() > 1 {
            self.inverse.process(x);
        }
    }
}

/// Every plan one `fft` instruction needs, for its precision.
struct Plans<T: FftNum> {
    /// Complex plans per transformed dimension.
    complex: Vec<FftPlan<T>>,
    /// Real plans for the last dimension (RFFT, IRFFT).
    r2c: Arc<dyn RealToComplex<T>>,
    c2r: Arc<dyn ComplexToReal<T>>,
}

impl<T: FftNum> Plans<T> {
    fn new(lengths: &[usize]) -> Self {
        let mut real = RealFftPlanner::<T>::new();
        let n_last = lengths.last().copied().unwrap_or(0);
        Plans {
            complex: lengths.iter().map(|&n| FftPlan::new(n)).collect(),
            r2c: real.plan_fft_forward(n_last),
            c2r: real.plan_fft_inverse(n_last),
        }
    }
}

/// Applies `f` to every line along dimension `d` of the row-major array of
/// `dims` at `base` (lines are disjoint, so they run in parallel).
fn along<T: FftNum>(base: usize, dims: &[usize], d: usize, f: impl Fn(&mut [Complex<T>]) + Sync) {
    let n = dims[d];
    let inner: usize = dims[d + 1..].iter().product();
    let outer: usize = dims[..d].iter().product();
    parallel_for(outer * inner, (1 << 12) / n.max(1) + 1, |s, e| {
        let data = base as *mut Complex<T>;
        if inner == 1 {
            for o in s..e {
                // SAFETY: line o is contiguous; lines are disjoint.
                f(unsafe { std::slice::from_raw_parts_mut(data.add(o * n), n) });
            }
            return;
        }
        let mut line = vec![Complex::new(T::zero(), T::zero()); n];
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

/// Multiplies every element of a line by `scale`.
fn scaled<T: FftNum>(line: &mut [Complex<T>], scale: T) {
    line.iter_mut().for_each(|v| *v = *v * scale);
}

/// The shapes of one transform: `full` (batch, every fft length) and `half`
/// (the last length cut to its `n/2 + 1` bins).
struct Geometry {
    fft_type: FftType,
    lengths: Vec<usize>,
    full: Vec<usize>,
    half: Vec<usize>,
    in_count: usize,
    out_count: usize,
}

/// Runs one transform in precision `T` from `src` into `dst` (element types
/// `Complex<T>` or `T` as the transform type says).
///
/// # Safety
/// `src` holds `g.in_count` input elements and `dst` `g.out_count` output
/// elements of those types; they do not overlap.
unsafe fn transform<T: FftNum>(g: &Geometry, plans: &Plans<T>, src: *const u8, dst: *mut u8) {
    let k = g.lengths.len();
    let n_last = g.lengths[k - 1];
    let bins = n_last / 2 + 1;
    let inv = |n: usize| T::one() / T::from_usize(n).unwrap_or_else(T::one);
    match g.fft_type {
        FftType::Fft | FftType::Ifft => {
            // In the result buffer.
            // SAFETY: the caller's contract; input and output are both
            // `in_count` (= `out_count`) complex elements.
            unsafe {
                std::ptr::copy_nonoverlapping(src, dst, g.in_count * size_of::<Complex<T>>())
            };
            let base = dst as usize;
            for (i, plan) in plans.complex.iter().enumerate() {
                if g.fft_type == FftType::Fft {
                    along(base, &g.full, i + 1, |line| plan.forward(line));
                } else {
                    let s = inv(g.lengths[i]);
                    along(base, &g.full, i + 1, |line| {
                        plan.inverse(line);
                        scaled(line, s);
                    });
                }
            }
        }
        FftType::Rfft => {
            // Rows real-to-complex into the result, then the other dimensions.
            let rows = g.in_count / n_last.max(1);
            let (src, dst) = (src as usize, dst as usize);
            parallel_for(rows, (1 << 12) / n_last.max(1) + 1, |s, e| {
                let mut line = plans.r2c.make_input_vec();
                let mut scratch = plans.r2c.make_scratch_vec();
                for r in s..e {
                    // SAFETY: row r of the input (n_last reals) and of the
                    // output (bins complex); rows are disjoint.
                    let (x, y) = unsafe {
                        (
                            std::slice::from_raw_parts((src as *const T).add(r * n_last), n_last),
                            std::slice::from_raw_parts_mut(
                                (dst as *mut Complex<T>).add(r * bins),
                                bins,
                            ),
                        )
                    };
                    line.copy_from_slice(x);
                    // Lengths and buffers come from the plan: cannot fail.
                    let _ = plans.r2c.process_with_scratch(&mut line, y, &mut scratch);
                }
            });
            for (i, plan) in plans.complex.iter().enumerate().take(k - 1) {
                along(dst, &g.half, i + 1, |line| plan.forward(line));
            }
        }
        FftType::Irfft => {
            // The other dimensions inverted in a scratch copy of the input,
            // then rows complex-to-real into the result.
            // SAFETY: the caller's contract: `in_count` complex elements.
            let mut w: Vec<Complex<T>> =
                unsafe { std::slice::from_raw_parts(src.cast::<Complex<T>>(), g.in_count) }
                    .to_vec();
            let base = w.as_mut_ptr() as usize;
            for (i, plan) in plans.complex.iter().enumerate().take(k - 1) {
                let s = inv(g.lengths[i]);
                along(base, &g.half, i + 1, |line| {
                    plan.inverse(line);
                    scaled(line, s);
                });
            }
            let rows = g.out_count / n_last.max(1);
            let s_last = inv(n_last);
            let dst = dst as usize;
            parallel_for(rows, (1 << 12) / n_last.max(1) + 1, |s, e| {
                let mut line = plans.c2r.make_input_vec();
                let mut scratch = plans.c2r.make_scratch_vec();
                for r in s..e {
                    // SAFETY: row r of the half spectrum (bins complex) and
                    // of the output (n_last reals); rows are disjoint.
                    let (x, y) = unsafe {
                        (
                            std::slice::from_raw_parts(
                                (base as *const Complex<T>).add(r * bins),
                                bins,
                            ),
                            std::slice::from_raw_parts_mut((dst as *mut T).add(r * n_last), n_last),
                        )
                    };
                    line.copy_from_slice(x);
                    // What a real output cannot hold (see the module docs).
                    line[0].im = T::zero();
                    if n_last.is_multiple_of(2) {
                        line[bins - 1].im = T::zero();
                    }
                    let _ = plans.c2r.process_with_scratch(&mut line, y, &mut scratch);
                    y.iter_mut().for_each(|v| *v = *v * s_last);
                }
            });
        }
    }
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
    // XLA transforms an empty complex operand to an empty result whatever
    // fft_length says (only RFFT/IRFFT tie the operand to it).
    let empty_complex = matches!(fft_type, FftType::Fft | FftType::Ifft)
        && input.element_count() == 0
        && result.dims == input.dims;
    if !empty_complex && (input.dims != want_in || result.dims != want_out) {
        return Err(bad(format!(
            "{input} → {result} does not fit fft_length {fft_length:?}"
        )));
    }
    let (in_ty, out_ty) = (input.element_type, result.element_type);
    let double = match (fft_type, in_ty, out_ty) {
        (FftType::Fft | FftType::Ifft, ElementType::C64, ElementType::C64)
        | (FftType::Rfft, ElementType::F32, ElementType::C64)
        | (FftType::Irfft, ElementType::C64, ElementType::F32) => false,
        (FftType::Fft | FftType::Ifft, ElementType::C128, ElementType::C128)
        | (FftType::Rfft, ElementType::F64, ElementType::C128)
        | (FftType::Irfft, ElementType::C128, ElementType::F64) => true,
        _ => return Err(bad(format!("{fft_type} from {in_ty} to {out_ty}"))),
    };
    let batch: usize = input.dims[..lead].iter().product();
    let geometry = Geometry {
        fft_type: *fft_type,
        lengths: fft_length.clone(),
        full: std::iter::once(batch)
            .chain(fft_length.iter().copied())
            .collect(),
        half: std::iter::once(batch)
            .chain(fft_length[..k - 1].iter().copied())
            .chain([n_last / 2 + 1])
            .collect(),
        in_count: input.element_count(),
        out_count: result.element_count(),
    };
    enum AnyPlans {
        Single(Plans<f32>),
        Double(Plans<f64>),
    }
    // An empty transform plans nothing: its fft_length can be anything
    // (see `empty_complex`), and a plan's tables grow with the length.
    let plans = if geometry.in_count == 0 || geometry.out_count == 0 {
        None
    } else if double {
        Some(AnyPlans::Double(Plans::new(fft_length)))
    } else {
        Some(AnyPlans::Single(Plans::new(fft_length)))
    };
    let (src, out) = (ctx.operand_slice(instr, 0)?, ctx.result_slice(id)?);
    Ok(thunk(instr.name.clone(), "fft", move |ctx| {
        let (ps, po) = (ctx.ptr(src), ctx.ptr(out));
        let g = &geometry;
        let Some(plans) = &plans else {
            // Nothing to transform (an empty batch or a zero length): the
            // result, if it has elements at all, is the transform of zeros.
            // SAFETY: the result holds `out_count` elements of `out_ty`.
            unsafe { po.write_bytes(0, g.out_count * out_ty.byte_size()) };
            return Ok(());
        };
        // SAFETY: operand and result are distinct buffers of the checked
        // shapes and of the element types `double` was chosen for.
        unsafe {
            match plans {
                AnyPlans::Single(p) => transform::<f32>(g, p, ps, po),
                AnyPlans::Double(p) => transform::<f64>(g, p, ps, po),
            }
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;
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
            let plan = FftPlan::<f64>::new(n);
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
