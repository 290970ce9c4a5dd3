//! Window geometry shared by `reduce-window` and `select-and-scatter`.
//!
//! A window position `k` of output coordinate `o` in one dimension reads the
//! padded, base-dilated input at `o * stride + k * window_dilation - padding_low`;
//! that is an input element when it is a multiple of `base_dilation` and the
//! quotient is inside the input (otherwise it is padding or a dilation hole,
//! and the reduction skips it — XLA never combines the init value in for
//! padding). For one dimension the valid positions, in window order, read input
//! coordinates that form an arithmetic progression, so [`DimWindows`] stores
//! one `(first, step, count)` per output coordinate instead of a list.
//!
//! The whole window of an output index is the row-major product of its
//! per-dimension progressions, the order XLA's evaluator visits it in.

use super::util::{self, invalid};
use hlo_ir::analysis::window::output_size;
use hlo_ir::{HloInstruction, Result};
use hlo_ir::{Window, WindowDim};

/// The valid input coordinates of every output coordinate in one dimension.
#[derive(Clone, Debug)]
pub(crate) struct DimWindows {
    /// Per output coordinate: first input coordinate, step between valid
    /// coordinates (in input elements), number of valid coordinates.
    pub(crate) runs: Vec<(usize, usize, usize)>,
}

impl DimWindows {
    pub(crate) fn new(input: usize, output: usize, w: &WindowDim) -> DimWindows {
        let stride = w.stride as i64;
        let wd = w.window_dilation as i64;
        let bd = w.base_dilation as i64;
        let mut runs = Vec::with_capacity(output);
        for o in 0..output as i64 {
            let mut first: Option<i64> = None;
            let mut second: Option<i64> = None;
            let mut count = 0usize;
            for k in 0..w.size as i64 {
                let pos = o * stride + k * wd - w.padding_low;
                if pos < 0 || pos % bd != 0 {
                    continue;
                }
                let idx = pos / bd;
                if idx >= input as i64 {
                    // Positions only grow with k: nothing further is inside.
                    break;
                }
                if first.is_none() {
                    first = Some(idx);
                } else if second.is_none() {
                    second = Some(idx);
                }
                count += 1;
            }
            let start = first.unwrap_or(0) as usize;
            let step = match (first, second) {
                (Some(a), Some(b)) => (b - a) as usize,
                _ => 0,
            };
            runs.push((start, step, count));
        }
        DimWindows { runs }
    }
}

/// Checks a window against an input and output shape (rank, sizes, strides and
/// dilations at least 1, the output size XLA's shape inference gives).
pub(crate) fn check_window(
    instr: &HloInstruction,
    window: &Window,
    input: &[usize],
    output: &[usize],
) -> Result<()> {
    if window.dims.len() != input.len() || output.len() != input.len() {
        return Err(invalid(
            instr,
            format!(
                "window {window} has {} dimensions for an input of rank {} and a result of rank {}",
                window.dims.len(),
                input.len(),
                output.len()
            ),
        ));
    }
    for (d, w) in window.dims.iter().enumerate() {
        if w.size == 0 || w.stride == 0 || w.window_dilation == 0 || w.base_dilation == 0 {
            return Err(invalid(
                instr,
                format!("window {window}: dimension {d} has a zero size, stride or dilation"),
            ));
        }
        if output_size(input[d], w) != Some(output[d]) {
            return Err(invalid(
                instr,
                format!(
                    "window {window} over input dimensions {input:?} does not give result dimensions {output:?}"
                ),
            ));
        }
    }
    Ok(())
}

/// One event of [`for_each_window`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Visit {
    /// An output's window starts.
    Begin,
    /// A valid element of the current window (its row-major input offset).
    Element(usize),
    /// The output's window is done.
    End(usize),
}

/// Visits every output index in row-major order and, for each, the input
/// offsets of its window's valid elements in window order.
pub(crate) fn for_each_window(
    input: &[usize],
    output: &[usize],
    windows: &[DimWindows],
    mut f: impl FnMut(Visit),
) {
    let rank = input.len();
    let in_strides = util::strides_of(input);
    if output.contains(&0) {
        return;
    }
    let out_count: usize = output.iter().product();
    let mut out_index = vec![0usize; rank];
    let mut counts = vec![0usize; rank];
    let mut steps = vec![0usize; rank];
    for out_offset in 0..out_count {
        f(Visit::Begin);
        let mut base = 0usize;
        let mut empty = false;
        for d in 0..rank {
            let (first, step, count) = windows[d].runs[out_index[d]];
            base += first * in_strides[d];
            steps[d] = step * in_strides[d];
            counts[d] = count;
            empty |= count == 0;
        }
        if !empty {
            util::walk1(&counts, &steps, |off| f(Visit::Element(base + off)));
        }
        f(Visit::End(out_offset));
        hlo_ir::index::next_index(&mut out_index, output);
    }
}
