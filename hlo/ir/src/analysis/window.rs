//! The geometry of a sliding window (convolution, reduce-window,
//! select-and-scatter).

use crate::attrs::WindowDim;

/// The number of positions a window dimension takes over an input dimension of
/// `input` elements, as XLA's shape inference computes it: the input is dilated
/// (`base_dilation`) and padded, the window dilated (`window_dilation`), and
/// every `stride`-th position where the whole window fits counts.
///
/// `None` when the dimension is malformed (a zero size, stride or dilation) or
/// its arithmetic overflows; negative padding that leaves less than the window
/// gives `Some(0)`.
pub fn output_size(input: usize, w: &WindowDim) -> Option<usize> {
    if w.size == 0 || w.stride == 0 || w.base_dilation == 0 || w.window_dilation == 0 {
        return None;
    }
    // i128 holds every intermediate of sane sizes; checked arithmetic turns
    // absurd ones into `None` instead of an overflow.
    let dilate = |bound: usize, by: usize| -> Option<i128> {
        if bound == 0 {
            Some(0)
        } else {
            (bound as i128 - 1).checked_mul(by as i128)?.checked_add(1)
        }
    };
    let padded = (w.padding_low as i128)
        .checked_add(dilate(input, w.base_dilation)?)?
        .checked_add(w.padding_high as i128)?;
    let span = dilate(w.size, w.window_dilation)?;
    let size = if padded < span {
        0
    } else {
        (padded - span) / w.stride as i128 + 1
    };
    usize::try_from(size).ok()
}

/// The input element that window position `k` of output position `o` reads
/// (before any window reversal), or `None` where it falls in padding or between
/// base-dilated elements. `w` must have passed [`output_size`] for the
/// dimension, so the arithmetic stays in range.
pub fn input_position(w: &WindowDim, input: usize, o: usize, k: usize) -> Option<usize> {
    let p = (o * w.stride + k * w.window_dilation) as i64 - w.padding_low;
    let dilation = w.base_dilation as i64;
    if p < 0 || p % dilation != 0 {
        return None;
    }
    let i = (p / dilation) as usize;
    (i < input).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_xla() {
        let mut w = WindowDim::of_size(3);
        assert_eq!(output_size(10, &w), Some(8));
        w.stride = 2;
        assert_eq!(output_size(10, &w), Some(4));
        w.padding_low = 1;
        w.padding_high = 1;
        assert_eq!(output_size(10, &w), Some(5));
        w.base_dilation = 2;
        // 19 dilated + 2 padding = 21 positions, window 3, stride 2.
        assert_eq!(output_size(10, &w), Some(10));
        w.window_dilation = 4;
        // span 9.
        assert_eq!(output_size(10, &w), Some(7));
        assert_eq!(output_size(0, &WindowDim::of_size(1)), Some(0));
        let mut negative = WindowDim::of_size(2);
        negative.padding_low = -5;
        assert_eq!(output_size(3, &negative), Some(0));
        assert_eq!(output_size(3, &WindowDim::of_size(0)), None);
        let mut huge = WindowDim::of_size(2);
        huge.base_dilation = usize::MAX;
        huge.window_dilation = usize::MAX;
        assert_eq!(output_size(usize::MAX, &huge), None);
    }

    #[test]
    fn positions_skip_padding_and_holes() {
        let mut w = WindowDim::of_size(3);
        w.padding_low = 1;
        w.base_dilation = 2;
        // Dilated input of 3: x . x . x; with one element of padding in front.
        let read: Vec<Option<usize>> = (0..3).map(|k| input_position(&w, 3, 0, k)).collect();
        assert_eq!(read, [None, Some(0), None]);
        let read: Vec<Option<usize>> = (0..3).map(|k| input_position(&w, 3, 3, k)).collect();
        assert_eq!(read, [Some(1), None, Some(2)]);
        // Past the input's end.
        assert_eq!(input_position(&w, 3, 6, 1), None);
    }
}
