//! The one copying engine behind every data-movement op.
//!
//! Broadcast, transpose, slice, reverse, dynamic-slice, dynamic-update-slice,
//! concatenate, pad and bitcast are all "walk a box of indices and copy element
//! `src[offset + Σ i·stride]` to `dst[offset + Σ i·stride]`" with different
//! offsets and (possibly zero or negative) strides. [`copy_box`] does that walk
//! once, well: elements are moved as fixed-width integers chosen by byte size
//! (so no per-element type dispatch), the innermost dimension is a tight loop,
//! and before anything is touched the extreme offsets of both views are checked
//! against their buffers, so a wrong view is an error, never a panic.

use hlo_ir::{Error, Result};

/// Where a box of elements sits in a flat buffer: a starting element offset and a
/// stride (in elements, possibly zero or negative) per box dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub offset: isize,
    pub strides: Vec<isize>,
}

impl View {
    /// The row-major view of a whole array with these dimensions.
    pub fn row_major(dims: &[usize]) -> View {
        View {
            offset: 0,
            strides: row_major_strides(dims),
        }
    }

    /// The smallest and largest offsets the view touches over a box (`None` for an empty box).
    fn extent(&self, dims: &[usize]) -> Option<(isize, isize)> {
        if dims.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.offset, self.offset);
        for (&n, &s) in dims.iter().zip(&self.strides) {
            let reach = (n as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some((lo, hi))
    }
}

/// Row-major strides, signed.
pub fn row_major_strides(dims: &[usize]) -> Vec<isize> {
    hlo_ir::shape::row_major_strides(dims)
        .into_iter()
        .map(|s| s as isize)
        .collect()
}

/// Copies the box `dims` from `src` (seen through `src_view`) to `dst` (through
/// `dst_view`); both buffers hold elements of `element_size` bytes.
pub fn copy_box(
    element_size: usize,
    dims: &[usize],
    dst: &mut [u8],
    dst_view: &View,
    src: &[u8],
    src_view: &View,
) -> Result<()> {
    if dst_view.strides.len() != dims.len() || src_view.strides.len() != dims.len() {
        return Err(Error::internal(format!(
            "copy_box: a box of rank {} with views of rank {} and {}",
            dims.len(),
            dst_view.strides.len(),
            src_view.strides.len()
        )));
    }
    let (Some(d), Some(s)) = (dst_view.extent(dims), src_view.extent(dims)) else {
        return Ok(()); // empty box
    };
    let dst_len = (dst.len() / element_size.max(1)) as isize;
    let src_len = (src.len() / element_size.max(1)) as isize;
    if d.0 < 0 || d.1 >= dst_len || s.0 < 0 || s.1 >= src_len {
        return Err(Error::internal(format!(
            "copy_box: box {dims:?} reaches elements {}..={} of a {dst_len}-element destination and {}..={} of a {src_len}-element source",
            d.0, d.1, s.0, s.1
        )));
    }
    // Walk the box so the innermost loop writes the destination with its smallest
    // stride: scattered writes cost more than scattered reads.
    let mut order: Vec<usize> = (0..dims.len()).collect();
    order.sort_by_key(|&d| {
        (
            std::cmp::Reverse(dst_view.strides[d].unsigned_abs()),
            std::cmp::Reverse(src_view.strides[d].unsigned_abs()),
        )
    });
    let dims: Vec<usize> = order.iter().map(|&d| dims[d]).collect();
    let dst_view = &View {
        offset: dst_view.offset,
        strides: order.iter().map(|&d| dst_view.strides[d]).collect(),
    };
    let src_view = &View {
        offset: src_view.offset,
        strides: order.iter().map(|&d| src_view.strides[d]).collect(),
    };
    let dims = dims.as_slice();
    match element_size {
        1 => typed::<u8>(dims, dst, dst_view, src, src_view),
        2 => typed::<u16>(dims, dst, dst_view, src, src_view),
        4 => typed::<u32>(dims, dst, dst_view, src, src_view),
        8 => typed::<u64>(dims, dst, dst_view, src, src_view),
        16 => typed::<[u64; 2]>(dims, dst, dst_view, src, src_view),
        n => Err(Error::internal(format!(
            "copy_box: no element type is {n} bytes wide"
        ))),
    }
}

fn typed<T: bytemuck::Pod>(
    dims: &[usize],
    dst: &mut [u8],
    dst_view: &View,
    src: &[u8],
    src_view: &View,
) -> Result<()> {
    // Literal buffers are 8-byte aligned and sized in whole elements, so these casts
    // succeed for every element type; a buffer from elsewhere is checked, not trusted.
    let misaligned = |e: bytemuck::PodCastError| {
        Error::internal(format!(
            "copy_box: buffer cannot be viewed as elements: {e:?}"
        ))
    };
    let dst: &mut [T] = bytemuck::try_cast_slice_mut(dst).map_err(misaligned)?;
    let src: &[T] = bytemuck::try_cast_slice(src).map_err(misaligned)?;
    let rank = dims.len();
    if rank == 0 {
        dst[dst_view.offset as usize] = src[src_view.offset as usize];
        return Ok(());
    }
    let inner = dims[rank - 1];
    let (ds, ss) = (dst_view.strides[rank - 1], src_view.strides[rank - 1]);
    let mut index = vec![0usize; rank - 1];
    let (mut d0, mut s0) = (dst_view.offset, src_view.offset);
    loop {
        if ds == 1 && ss == 1 {
            let (d, s) = (d0 as usize, s0 as usize);
            dst[d..d + inner].copy_from_slice(&src[s..s + inner]);
        } else {
            let (mut d, mut s) = (d0, s0);
            for _ in 0..inner {
                dst[d as usize] = src[s as usize];
                d += ds;
                s += ss;
            }
        }
        // Advance the outer index, updating both offsets incrementally.
        let mut dim = rank - 1;
        loop {
            if dim == 0 {
                return Ok(());
            }
            dim -= 1;
            index[dim] += 1;
            d0 += dst_view.strides[dim];
            s0 += src_view.strides[dim];
            if index[dim] < dims[dim] {
                break;
            }
            d0 -= dst_view.strides[dim] * dims[dim] as isize;
            s0 -= src_view.strides[dim] * dims[dim] as isize;
            index[dim] = 0;
        }
    }
}

/// Fills every element of `dst` with the `element`'s bytes.
pub fn fill(dst: &mut [u8], element: &[u8]) {
    if element.iter().all(|&b| b == 0) {
        dst.fill(0);
        return;
    }
    for chunk in dst.chunks_exact_mut(element.len().max(1)) {
        chunk.copy_from_slice(element);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposes_and_reverses() {
        // src 2x3 row-major: 0 1 2 / 3 4 5; dst 3x2 = transpose.
        let src: Vec<u8> = (0..6).collect();
        let mut dst = vec![0u8; 6];
        let src_view = View {
            offset: 0,
            strides: vec![1, 3],
        };
        copy_box(
            1,
            &[3, 2],
            &mut dst,
            &View::row_major(&[3, 2]),
            &src,
            &src_view,
        )
        .unwrap();
        assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
        // reverse a 4-vector of u32.
        let src: Vec<u8> = bytemuck::cast_slice(&[1u32, 2, 3, 4]).to_vec();
        let mut dst = vec![0u8; 16];
        copy_box(
            4,
            &[4],
            &mut dst,
            &View::row_major(&[4]),
            &src,
            &View {
                offset: 3,
                strides: vec![-1],
            },
        )
        .unwrap();
        assert_eq!(bytemuck::cast_slice::<u8, u32>(&dst), [4, 3, 2, 1]);
    }

    #[test]
    fn out_of_bounds_views_are_errors() {
        let src = vec![0u8; 4];
        let mut dst = vec![0u8; 4];
        let err = copy_box(
            1,
            &[5],
            &mut dst,
            &View::row_major(&[5]),
            &src,
            &View::row_major(&[5]),
        )
        .unwrap_err();
        assert_eq!(err.code(), hlo_ir::Code::Internal);
        // An empty box touches nothing.
        copy_box(
            1,
            &[0, 7],
            &mut dst,
            &View::row_major(&[0, 7]),
            &src,
            &View::row_major(&[0, 7]),
        )
        .unwrap();
    }
}
