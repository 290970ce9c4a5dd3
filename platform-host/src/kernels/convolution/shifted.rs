//! A unit-stride convolution as a sum of GEMMs over shifted views of a
//! zero-padded input, with no im2col matrix.
//!
//! Pad the canonical input `[n, spatial..., c]` with zeros to the padded
//! extents `P`, and number the padded pixels row-major across the images.
//! Output position `o` (its coordinates placed in the padded grid) then
//! reads, for kernel position `kp`, the `c` features at pixel
//! `flat(o) + offset(kp)`, where the offset depends on the kernel position
//! alone. So for each run of kernel positions whose offsets are
//! consecutive pixels (the taps along the last spatial dimension when it is
//! not dilated: a *segment*), the windows of every output position are the
//! rows of one matrix read in place: row `i` starts at pixel `i + offset`,
//! rows `c` elements apart, `taps · c` long. The convolution is the sum,
//! over the segments, of that matrix times the kernel's rows for the
//! segment (`[taps · c, c_out]`, contiguous in the canonical kernel).
//!
//! The GEMM computes a row for every padded pixel up to the last output
//! position, the ones outside the output included (at most
//! [`MAX_WASTE`] of the useful work, or the convolution goes to im2col);
//! the product goes to a scratch matrix whose output rows are then copied
//! out. Against im2col this reads the input once per segment in place,
//! where im2col writes and reads a copy as large as the input times the
//! taps: the difference that matters when the output has few channels and
//! the product is cheap next to the copy.

use super::ConvPlan;
use crate::kernels::dot::SegmentedFn;
use crate::kernels::gemm::narrow::LhsRun;
use crate::kernels::gemm::{Strided, StridedMut};
use crate::runtime::pool::parallel_for;
use platform_api::hlo::WindowDim;
use platform_api::index::next_index;
use platform_api::shape::row_major_strides;

/// Most rows computed per output position (padding rows included) for the
/// shifted form to be used.
const MAX_WASTE: f64 = 1.3;
/// Images are processed in chunks whose padded input and product hold
/// about this many elements (at least one image each).
const CHUNK_ELEMENTS: usize = 1 << 22;

/// Kernel positions whose input pixels are consecutive.
#[derive(Clone, Debug)]
struct Segment {
    /// First kernel position (row-major over the kernel's spatial sizes).
    kp: usize,
    /// Kernel positions in the run.
    taps: usize,
    /// Pixel offset of the first one's input from the output position's.
    offset: usize,
}

/// How a convolution runs in the shifted form (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct ShiftedPlan {
    /// Padding before each spatial dimension (negative: cropped).
    low: Vec<i64>,
    /// Padded spatial extents.
    padded: Vec<usize>,
    segments: Vec<Segment>,
    /// Whether the input must be copied (it has padding).
    copy: bool,
}

impl ShiftedPlan {
    /// The plan, when the convolution has unit strides, no input dilation,
    /// no groups, and padding that adds at most [`MAX_WASTE`] rows.
    pub(super) fn new(p: &ConvPlan, window: &[WindowDim]) -> Option<ShiftedPlan> {
        let nd = p.in_spatial.len();
        if nd == 0
            || window.len() != nd
            || p.feature_groups != 1
            || p.batch_groups != 1
            || p.c_in == 0
            || p.c_out == 0
            || p.n_out == 0
            || p.positions() == 0
            || p.k_spatial.contains(&0)
        {
            return None;
        }
        let mut padded = Vec::with_capacity(nd);
        for (d, w) in window.iter().enumerate() {
            if w.stride != 1 || w.base_dilation != 1 {
                return None;
            }
            // Wide arithmetic: a module may give any padding and dilation.
            let extent = p.in_spatial[d] as i128 + w.padding_low as i128 + w.padding_high as i128;
            let span = (p.k_spatial[d] as i128 - 1).checked_mul(w.window_dilation as i128)? + 1;
            // The output extent follows from the padded one (a mismatch would
            // be a malformed plan: leave it to the general path).
            if extent < span || usize::try_from(extent - span + 1).ok() != Some(p.out_spatial[d]) {
                return None;
            }
            padded.push(usize::try_from(extent).ok()?);
        }
        // The padded copy holds an image's pixels: at most twice its output
        // positions (which the result's buffer bounds), so a window dilated
        // or padded far past the output cannot ask for a huge copy.
        let image = padded
            .iter()
            .try_fold(1usize, |acc, &e| acc.checked_mul(e))?;
        if image > 2 * p.positions() {
            return None;
        }
        let rows = (p.n_out - 1) * image + last_row(&p.out_spatial, &padded) + 1;
        if rows as f64 > MAX_WASTE * (p.n_out * p.positions()) as f64 {
            return None;
        }
        // Segments: kernel positions in row-major order, merged while their
        // input pixels are consecutive.
        let pstrides = row_major_strides(&padded);
        let mut segments: Vec<Segment> = Vec::new();
        let mut kc = vec![0usize; nd];
        let mut kp = 0;
        loop {
            let offset: usize = (0..nd)
                .map(|d| {
                    let w = &window[d];
                    let k = if w.window_reversal {
                        p.k_spatial[d] - 1 - kc[d]
                    } else {
                        kc[d]
                    };
                    k * w.window_dilation * pstrides[d]
                })
                .sum();
            match segments.last_mut() {
                Some(s) if s.kp + s.taps == kp && s.offset + s.taps == offset => s.taps += 1,
                _ => segments.push(Segment {
                    kp,
                    taps: 1,
                    offset,
                }),
            }
            kp += 1;
            if !next_index(&mut kc, &p.k_spatial) {
                break;
            }
        }
        if !worth_it(p, segments.len()) {
            return None;
        }
        let copy = window
            .iter()
            .any(|w| w.padding_low != 0 || w.padding_high != 0);
        Some(ShiftedPlan {
            low: window.iter().map(|w| w.padding_low).collect(),
            padded,
            segments,
            copy,
        })
    }
}

/// Whether the shifted form should beat im2col, counted in elements moved
/// per output row. With a few output channels every segment adds into the
/// same registers (the row-dot kernel), so it always should. Otherwise each
/// segment after the first reads and writes the product's row once more
/// (`2·c_out`), and the padded copy moves `c_in`; im2col copies `taps·c_in`
/// per row, about 16 more per run of taps for the run's bookkeeping. (A
/// 1-D convolution of 64 channels with two dilated taps measured 1.6 ms
/// shifted against 1.2 ms through im2col; the rule sends it to im2col.)
fn worth_it(p: &ConvPlan, segments: usize) -> bool {
    if crate::kernels::gemm::narrow::applies(p.c_out) {
        return true;
    }
    let taps = p.kernel_positions();
    2 * p.c_out * (segments - 1) + p.c_in <= taps * p.c_in + 16 * segments
}

/// The flat padded-grid index of the last output position of an image.
fn last_row(out: &[usize], padded: &[usize]) -> usize {
    let strides = row_major_strides(padded);
    out.iter().zip(&strides).map(|(&o, &s)| (o - 1) * s).sum()
}

/// Runs the convolution in the shifted form on canonical buffers (input,
/// kernel and output addresses).
pub(super) fn run<T: bytemuck::Pod + Send + Sync>(
    p: &ConvPlan,
    s: &ShiftedPlan,
    x: usize,
    k: usize,
    o: usize,
    gemm: SegmentedFn<T>,
) {
    let (c, co) = (p.c_in, p.c_out);
    let image: usize = s.padded.iter().product();
    let in_image = p.in_spatial.iter().product::<usize>() * c;
    let out_image = p.positions() * co;
    let last = last_row(&p.out_spatial, &s.padded);
    // The product is the output itself when every padded pixel is an output
    // position (a kernel of one tap per dimension, no padding).
    let in_place = image == p.positions();
    let per_chunk = (CHUNK_ELEMENTS / (image * (c + co)).max(1)).clamp(1, p.n_out);
    let (mut xp_buf, mut prod_buf) = (Vec::<T>::new(), Vec::<T>::new());
    let mut n0 = 0;
    while n0 < p.n_out {
        let nb = per_chunk.min(p.n_out - n0);
        let src = x + n0 * in_image * size_of::<T>();
        let xp = if s.copy {
            xp_buf.clear();
            xp_buf.resize(nb * image * c, T::zeroed());
            pad_into(p, s, src as *const T, xp_buf.as_mut_ptr(), nb);
            xp_buf.as_ptr()
        } else {
            src as *const T
        };
        let rows = (nb - 1) * image + last + 1;
        let product = if in_place {
            (o as *mut T).wrapping_add(n0 * out_image)
        } else {
            prod_buf.clear();
            prod_buf.reserve(rows * co);
            prod_buf.as_mut_ptr()
        };
        let runs: Vec<LhsRun<T>> = s
            .segments
            .iter()
            .map(|seg| LhsRun {
                a: xp.wrapping_add(seg.offset * c),
                rs: c as isize,
                len: seg.taps * c,
            })
            .collect();
        // SAFETY: row r of a segment's run reads pixels r + offset .. r +
        // offset + taps of the padded chunk, all inside it (the last row is
        // the chunk's last output position, whose window ends inside the
        // padded grid); the segments take the kernel's rows in order, so
        // the runs' columns are the canonical kernel's rows; the product
        // has `rows × co` room. The input is free of subnormal values (the
        // thunk flushed it for this form).
        unsafe {
            gemm(
                rows,
                co,
                &runs,
                Strided {
                    ptr: k as *const T,
                    rs: co as isize,
                    cs: 1,
                },
                StridedMut {
                    ptr: product,
                    rs: co as isize,
                    cs: 1,
                },
            )
        };
        if !in_place {
            extract(
                p,
                s,
                product.cast_const(),
                (o as *mut T).wrapping_add(n0 * out_image),
                nb,
            );
        }
        n0 += nb;
    }
}

/// Copies `nb` canonical input images into the zeroed padded grid at `dst`.
fn pad_into<T: bytemuck::Pod + Send + Sync>(
    p: &ConvPlan,
    s: &ShiftedPlan,
    src: *const T,
    dst: *mut T,
    nb: usize,
) {
    let c = p.c_in;
    let nd = p.in_spatial.len();
    let in_strides = row_major_strides(&p.in_spatial);
    let pad_strides = row_major_strides(&s.padded);
    let in_image: usize = p.in_spatial.iter().product();
    let image: usize = s.padded.iter().product();
    // One task line: an input line (every coordinate but the last) of one
    // image, copied to its padded place, cropped where padding is negative.
    let outer: usize = p.in_spatial[..nd - 1].iter().product();
    let lines = nb * outer;
    let line_len = p.in_spatial[nd - 1];
    let (src, dst) = (src as usize, dst as usize);
    parallel_for(lines, (16_384 / (line_len * c).max(1)).max(1), |a, b| {
        for line in a..b {
            let (img, mut rest) = (line / outer.max(1), line % outer.max(1));
            let mut from = img * in_image;
            let mut to = Some(img * image);
            for d in (0..nd - 1).rev() {
                let i = rest % p.in_spatial[d];
                rest /= p.in_spatial[d];
                from += i * in_strides[d];
                let q = i as i64 + s.low[d];
                to = match to {
                    Some(t) if q >= 0 && (q as usize) < s.padded[d] => {
                        Some(t + q as usize * pad_strides[d])
                    }
                    _ => None,
                };
            }
            let Some(to) = to else {
                continue;
            };
            // The last dimension: input i lands at i + low, kept inside the grid.
            let low = s.low[nd - 1];
            let first = (-low).max(0) as usize;
            let end = ((s.padded[nd - 1] as i64 - low).max(0) as usize).min(line_len);
            if first >= end {
                continue;
            }
            let at = (first as i64 + low) as usize;
            // SAFETY: the run lies in input image img's line and in the
            // padded image's line; lines are disjoint between tasks.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (src as *const T).add((from + first) * c),
                    (dst as *mut T).add((to + at) * c),
                    (end - first) * c,
                )
            };
        }
    });
}

/// Copies the output positions' rows of the product (one row per padded
/// pixel) into the canonical output of `nb` images at `out`.
fn extract<T: bytemuck::Pod + Send + Sync>(
    p: &ConvPlan,
    s: &ShiftedPlan,
    product: *const T,
    out: *mut T,
    nb: usize,
) {
    let co = p.c_out;
    let nd = p.out_spatial.len();
    let pad_strides = row_major_strides(&s.padded);
    let image: usize = s.padded.iter().product();
    let outer: usize = p.out_spatial[..nd - 1].iter().product();
    let run = p.out_spatial[nd - 1] * co;
    let (product, out) = (product as usize, out as usize);
    parallel_for(nb * outer, (16_384 / run.max(1)).max(1), |a, b| {
        let mut oc = vec![0usize; nd - 1];
        for line in a..b {
            let (img, mut rest) = (line / outer.max(1), line % outer.max(1));
            for d in (0..nd - 1).rev() {
                oc[d] = rest % p.out_spatial[d];
                rest /= p.out_spatial[d];
            }
            let from = img * image + (0..nd - 1).map(|d| oc[d] * pad_strides[d]).sum::<usize>();
            // SAFETY: the product holds this output line's rows (every
            // output position's row is below the chunk's last); output
            // line `line` is `run` elements, disjoint between tasks.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (product as *const T).add(from * co),
                    (out as *mut T).add(line * run),
                    run,
                )
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of a one-group convolution of `[2, input..., 8]` by
    /// `[kernel..., 8, 4]` over `window` (its output sizes from the window).
    fn plan(input: &[usize], kernel: &[usize], window: &[WindowDim]) -> Option<ShiftedPlan> {
        plan_with(8, 4, input, kernel, window)
    }

    /// The same with `c_in` input and `c_out` output channels.
    fn plan_with(
        c_in: usize,
        c_out: usize,
        input: &[usize],
        kernel: &[usize],
        window: &[WindowDim],
    ) -> Option<ShiftedPlan> {
        let out: Vec<usize> = (0..input.len())
            .map(|d| {
                platform_api::hlo::analysis::window::output_size(input[d], &window[d])
                    .expect("a valid window")
            })
            .collect();
        let p = ConvPlan {
            in_spatial: input.to_vec(),
            c_in,
            k_spatial: kernel.to_vec(),
            ci_group: c_in,
            c_out,
            n_out: 2,
            out_spatial: out,
            feature_groups: 1,
            batch_groups: 1,
            taps: Vec::new(),
            classes: None,
        };
        ShiftedPlan::new(&p, window)
    }

    fn dim(size: usize, pad: i64) -> WindowDim {
        WindowDim {
            padding_low: pad,
            padding_high: pad,
            ..WindowDim::of_size(size)
        }
    }

    fn segments(s: &ShiftedPlan) -> Vec<(usize, usize, usize)> {
        s.segments
            .iter()
            .map(|g| (g.kp, g.taps, g.offset))
            .collect()
    }

    #[test]
    fn a_kernel_row_is_one_segment() {
        // SAME 3x3 over 32x32: padded 34x34; each kernel row is 3 taps at
        // consecutive pixels, one padded row (34 pixels) below the last.
        let s = plan(&[32, 32], &[3, 3], &[dim(3, 1), dim(3, 1)]).expect("shifted");
        assert_eq!(s.padded, vec![34, 34]);
        assert!(s.copy);
        assert_eq!(segments(&s), vec![(0, 3, 0), (3, 3, 34), (6, 3, 68)]);
    }

    #[test]
    fn dilation_and_reversal_split_the_rows() {
        let mut d = dim(3, 2);
        d.window_dilation = 2;
        let s = plan(&[32, 32], &[3, 3], &[dim(3, 1), d]).expect("shifted");
        assert_eq!(s.segments.len(), 9);
        assert_eq!(segments(&s)[..3], [(0, 1, 0), (1, 1, 2), (2, 1, 4)]);
        // A reversed last dimension reads its taps in descending pixels.
        let mut r = dim(3, 1);
        r.window_reversal = true;
        let s = plan(&[32, 32], &[3, 3], &[dim(3, 1), r]).expect("shifted");
        assert_eq!(segments(&s)[..3], [(0, 1, 2), (1, 1, 1), (2, 1, 0)]);
        // A reversed first dimension keeps whole rows, last row first.
        let mut r = dim(3, 1);
        r.window_reversal = true;
        let s = plan(&[32, 32], &[3, 3], &[r, dim(3, 1)]).expect("shifted");
        assert_eq!(segments(&s), vec![(0, 3, 68), (3, 3, 34), (6, 3, 0)]);
    }

    #[test]
    fn no_padding_reads_the_input_itself() {
        let s = plan(&[16, 16], &[3, 3], &[dim(3, 0), dim(3, 0)]).expect("shifted");
        assert!(!s.copy);
        assert_eq!(s.padded, vec![16, 16]);
    }

    #[test]
    fn strides_dilated_inputs_and_wasteful_padding_stay_on_im2col() {
        let mut strided = dim(3, 1);
        strided.stride = 2;
        assert!(plan(&[32, 32], &[3, 3], &[dim(3, 1), strided]).is_none());
        let mut dilated = dim(3, 1);
        dilated.base_dilation = 2;
        assert!(plan(&[32, 32], &[3, 3], &[dim(3, 1), dilated]).is_none());
        // 4x4 images padded to 6x6 compute 36 rows per 16 outputs.
        assert!(plan(&[4, 4], &[3, 3], &[dim(3, 1), dim(3, 1)]).is_none());
    }

    #[test]
    fn windows_far_past_the_output_stay_on_im2col() {
        // One image, 16 outputs, 8 channels into 4.
        let one = |kernel: usize, w: &WindowDim| {
            let p = ConvPlan {
                in_spatial: vec![16],
                c_in: 8,
                k_spatial: vec![kernel],
                ci_group: 8,
                c_out: 4,
                n_out: 1,
                out_spatial: vec![16],
                feature_groups: 1,
                batch_groups: 1,
                taps: Vec::new(),
                classes: None,
            };
            ShiftedPlan::new(&p, std::slice::from_ref(w))
        };
        // Two taps 2^40 apart over an input padded to match: a padded
        // extent of 2^40 + 16, which the shifted form would copy whole.
        let mut d = dim(2, 1 << 39);
        d.window_dilation = 1 << 40;
        assert!(one(2, &d).is_none());
        // A span that overflows even wide arithmetic.
        d.window_dilation = usize::MAX;
        d.padding_low = i64::MAX;
        d.padding_high = i64::MAX;
        assert!(one(usize::MAX, &d).is_none());
        // The same geometry with an ordinary window takes the form.
        assert!(one(3, &dim(3, 1)).is_some());
    }

    #[test]
    fn wide_outputs_over_few_deep_segments_stay_on_im2col() {
        // Two dilated taps of 64 channels into 64: the second segment's
        // pass over the product costs more than im2col's copy.
        let mut d = dim(2, 0);
        d.padding_low = 4;
        d.window_dilation = 4;
        assert!(plan_with(64, 64, &[4096], &[2], &[d.clone()]).is_none());
        // Into a few channels every segment adds into the same registers.
        assert!(plan_with(64, 4, &[4096], &[2], &[d]).is_some());
        // A 3x3 window of 64 channels into 64: three kernel rows.
        assert!(plan_with(64, 64, &[32, 32], &[3, 3], &[dim(3, 1), dim(3, 1)]).is_some());
    }
}
