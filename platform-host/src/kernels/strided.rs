//! The data-movement engine: copy an N-dimensional strided view into another.
//!
//! Broadcast (zero strides), transpose (permuted strides), slice (scaled strides
//! and an offset), reverse (negative strides), dynamic slice (an offset known at
//! run time), concatenate and pad (a strided window of the output) are all one
//! [`StridedCopy`]: for every index `i` of `dims`,
//! `dst[dst_offset + i·dst_strides] = src[src_offset + i·src_strides]`.
//!
//! A plan is simplified once at compile time: dimensions of size 1 are dropped
//! and neighbours that stay contiguous in both views are merged, so most copies
//! become a few long runs. At run time the innermost dimension is a `memcpy`
//! (unit strides), a fill (zero source stride) or a strided loop; when the
//! source's unit-stride dimension is not the destination's innermost one (a
//! transpose), the two are copied in square tiles so both sides stay in cache.
//! Work is split over the outer dimensions on the compute pool.

use crate::runtime::pool::parallel_for;

/// Elements per parallel task for copies.
const COPY_GRAIN: usize = 1 << 16;

/// A strided copy of elements of `width` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedCopy {
    pub width: usize,
    pub dims: Vec<usize>,
    /// Source strides in elements (may be 0 or negative).
    pub src_strides: Vec<isize>,
    /// Destination strides in elements.
    pub dst_strides: Vec<isize>,
}

impl StridedCopy {
    /// A plan, simplified (size-1 dimensions dropped, contiguous neighbours
    /// merged). An empty `dims` copies one element.
    pub fn new(
        width: usize,
        dims: &[usize],
        src_strides: &[isize],
        dst_strides: &[isize],
    ) -> StridedCopy {
        let mut d: Vec<usize> = Vec::new();
        let mut s: Vec<isize> = Vec::new();
        let mut t: Vec<isize> = Vec::new();
        for i in 0..dims.len() {
            if dims[i] == 1 {
                continue;
            }
            if let (Some(&last_d), Some(&last_s), Some(&last_t)) = (d.last(), s.last(), t.last()) {
                let n = dims[i] as isize;
                if last_s == src_strides[i] * n && last_t == dst_strides[i] * n {
                    let k = d.len() - 1;
                    d[k] = last_d * dims[i];
                    s[k] = src_strides[i];
                    t[k] = dst_strides[i];
                    continue;
                }
            }
            d.push(dims[i]);
            s.push(src_strides[i]);
            t.push(dst_strides[i]);
        }
        StridedCopy {
            width,
            dims: d,
            src_strides: s,
            dst_strides: t,
        }
    }

    /// Row-major strides (in elements) of an array with these dimensions.
    pub fn row_major(dims: &[usize]) -> Vec<isize> {
        platform_api::shape::row_major_strides(dims)
            .into_iter()
            .map(|s| s as isize)
            .collect()
    }

    pub fn element_count(&self) -> usize {
        if self.dims.contains(&0) {
            0
        } else {
            self.dims.iter().product()
        }
    }

    /// Runs the copy.
    ///
    /// # Safety
    /// Every source and destination element the plan reaches from the given
    /// bases must be valid; the destination elements must not overlap the
    /// source elements (or be exactly them with unit strides on both sides).
    pub unsafe fn run(&self, src: *const u8, dst: *mut u8) {
        if self.element_count() == 0 {
            return;
        }
        crate::with_width!(self.width, W => {
            // SAFETY: forwarded from the caller.
            unsafe { self.run_typed::<W>(src.cast(), dst.cast()) }
        }, _ => {
            // SAFETY: forwarded from the caller.
            unsafe { self.run_bytes(src, dst) }
        });
    }

    /// Element-by-element fallback for widths without a native type.
    #[allow(clippy::needless_range_loop)]
    unsafe fn run_bytes(&self, src: *const u8, dst: *mut u8) {
        let w = self.width as isize;
        let rank = self.dims.len();
        let mut index = vec![0usize; rank];
        loop {
            let (mut so, mut to) = (0isize, 0isize);
            for d in 0..rank {
                so += index[d] as isize * self.src_strides[d];
                to += index[d] as isize * self.dst_strides[d];
            }
            // SAFETY: the caller guarantees every reached element is valid.
            unsafe {
                std::ptr::copy_nonoverlapping(src.offset(so * w), dst.offset(to * w), self.width)
            };
            if !platform_api::index::next_index(&mut index, &self.dims) {
                break;
            }
        }
    }

    #[allow(clippy::needless_range_loop)]
    unsafe fn run_typed<W: Copy>(&self, src: *const W, dst: *mut W) {
        let rank = self.dims.len();
        if rank == 0 {
            // SAFETY: one element each side.
            unsafe { dst.write(src.read()) };
            return;
        }
        // A transpose: the source's unit-stride dimension is not innermost.
        let inner = rank - 1;
        // (A zero source stride is a broadcast: filled directly below.)
        if self.src_strides[inner] != 1 && self.src_strides[inner] != 0 && self.dims[inner] >= 8 {
            if let Some(a) = (0..inner).find(|&d| self.src_strides[d] == 1 && self.dims[d] >= 8) {
                // SAFETY: forwarded.
                unsafe { self.run_tiled(src, dst, a) };
                return;
            }
        }
        let n_inner = self.dims[inner];
        let (si, ti) = (self.src_strides[inner], self.dst_strides[inner]);
        let outer_dims = &self.dims[..inner];
        let outer: usize = outer_dims.iter().product();
        let (src_a, dst_a) = (src as usize, dst as usize);
        let grain = (COPY_GRAIN / n_inner.max(1)).max(1);
        parallel_for(outer, grain, |start, end| {
            let (src, dst) = (src_a as *const W, dst_a as *mut W);
            let mut index = unflatten(start, outer_dims);
            for _ in start..end {
                let (mut so, mut to) = (0isize, 0isize);
                for d in 0..inner {
                    so += index[d] as isize * self.src_strides[d];
                    to += index[d] as isize * self.dst_strides[d];
                }
                // SAFETY: the caller guarantees every reached element is valid
                // and that source and destination do not overlap.
                unsafe {
                    let (s, t) = (src.offset(so), dst.offset(to));
                    if si == 1 && ti == 1 {
                        std::ptr::copy_nonoverlapping(s, t, n_inner);
                    } else if si == 0 {
                        let v = s.read();
                        for k in 0..n_inner {
                            t.offset(k as isize * ti).write(v);
                        }
                    } else {
                        for k in 0..n_inner as isize {
                            t.offset(k * ti).write(s.offset(k * si).read());
                        }
                    }
                }
                platform_api::index::next_index(&mut index, outer_dims);
            }
        });
    }

    /// Transpose-like copy: dimensions `a` (unit source stride) and the last
    /// (destination's fastest) are walked in tiles. Each tile is read along
    /// `a` (contiguous in the source) into a small local buffer, then written
    /// along the last dimension (contiguous in the destination), so both big
    /// arrays are accessed in long runs and the scatter happens in L1.
    unsafe fn run_tiled<W: Copy>(&self, src: *const W, dst: *mut W, a: usize) {
        let rank = self.dims.len();
        let b = rank - 1;
        let (na, nb) = (self.dims[a], self.dims[b]);
        let rest: Vec<usize> = (0..rank).filter(|&d| d != a && d != b).collect();
        let rest_dims: Vec<usize> = rest.iter().map(|&d| self.dims[d]).collect();
        let outer: usize = rest_dims.iter().product();
        // A tile of at most 16 KiB.
        let edge = match std::mem::size_of::<W>() {
            0..=4 => 64,
            5..=8 => 32,
            _ => 16,
        };
        let tiles_a = na.div_ceil(edge);
        let tiles_b = nb.div_ceil(edge);
        let jobs = outer * tiles_a * tiles_b;
        let (src_a, dst_a) = (src as usize, dst as usize);
        let grain = (COPY_GRAIN / (edge * edge)).max(1);
        parallel_for(jobs, grain, |start, end| {
            let (src, dst) = (src_a as *const W, dst_a as *mut W);
            let mut index = vec![0usize; rest.len()];
            let mut local: Vec<W> = Vec::with_capacity(edge * edge);
            for job in start..end {
                let tb_i = job % tiles_b;
                let ta_i = (job / tiles_b) % tiles_a;
                let mut rem = job / (tiles_b * tiles_a);
                for k in (0..rest.len()).rev() {
                    index[k] = rem % rest_dims[k];
                    rem /= rest_dims[k];
                }
                let (mut so, mut to) = (0isize, 0isize);
                for (k, &d) in rest.iter().enumerate() {
                    so += index[k] as isize * self.src_strides[d];
                    to += index[k] as isize * self.dst_strides[d];
                }
                let (a0, a1) = (ta_i * edge, ((ta_i + 1) * edge).min(na));
                let (b0, b1) = (tb_i * edge, ((tb_i + 1) * edge).min(nb));
                let tile = Tile {
                    src: src.wrapping_offset(so + a0 as isize + b0 as isize * self.src_strides[b]),
                    dst: dst.wrapping_offset(
                        to + a0 as isize * self.dst_strides[a] + b0 as isize * self.dst_strides[b],
                    ),
                    rows: a1 - a0,
                    cols: b1 - b0,
                    src_col_stride: self.src_strides[b],
                    dst_row_stride: self.dst_strides[a],
                    dst_col_stride: self.dst_strides[b],
                };
                // SAFETY: the tile lies inside the copy's extent, which the
                // caller guarantees valid; the local buffer has room for it.
                unsafe { transpose_tile_simd(&tile, &mut local) };
            }
        });
    }
}

/// One tile of a transpose: `rows` positions along the source's unit-stride
/// dimension by `cols` along the destination's fastest dimension.
struct Tile<W> {
    src: *const W,
    dst: *mut W,
    rows: usize,
    cols: usize,
    src_col_stride: isize,
    dst_row_stride: isize,
    dst_col_stride: isize,
}

/// # Safety
/// The tile's source and destination elements must be valid; `local` is
/// scratch.
#[inline(always)]
unsafe fn transpose_tile<W: Copy>(t: &Tile<W>, local: &mut Vec<W>) {
    local.clear();
    for c in 0..t.cols as isize {
        let s = t.src.wrapping_offset(c * t.src_col_stride);
        for r in 0..t.rows {
            // SAFETY: inside the tile (caller's contract).
            local.push(unsafe { s.add(r).read() });
        }
    }
    for r in 0..t.rows {
        let d = t.dst.wrapping_offset(r as isize * t.dst_row_stride);
        for c in 0..t.cols {
            // SAFETY: as above.
            unsafe {
                d.offset(c as isize * t.dst_col_stride)
                    .write(local[c * t.rows + r])
            };
        }
    }
}

crate::multiversion!(unsafe fn transpose_tile_simd<W: Copy>(t: &Tile<W>, local: &mut Vec<W>) => transpose_tile);

/// The row-major multi-index of linear position `linear` in `dims`.
pub fn unflatten(mut linear: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0usize; dims.len()];
    for d in (0..dims.len()).rev() {
        if dims[d] > 0 {
            index[d] = linear % dims[d];
            linear /= dims[d];
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_transpose(x: &[u32], dims: &[usize], perm: &[usize]) -> Vec<u32> {
        let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        let in_strides = platform_api::shape::row_major_strides(dims);
        let mut out = Vec::new();
        platform_api::index::for_each_index(&out_dims, |idx| {
            let mut src = 0;
            for (k, &p) in perm.iter().enumerate() {
                src += idx[k] * in_strides[p];
            }
            out.push(x[src]);
        });
        out
    }

    #[test]
    fn transposes_match_a_naive_loop() {
        for (dims, perm) in [
            (vec![37usize, 70], vec![1usize, 0]),
            (vec![3, 40, 50], vec![2, 0, 1]),
            (vec![4, 5, 33, 2], vec![0, 2, 1, 3]),
            (vec![2, 3, 4], vec![0, 1, 2]),
        ] {
            let n: usize = dims.iter().product();
            let x: Vec<u32> = (0..n as u32).collect();
            let in_strides = StridedCopy::row_major(&dims);
            let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
            let src_strides: Vec<isize> = perm.iter().map(|&p| in_strides[p]).collect();
            let plan = StridedCopy::new(
                4,
                &out_dims,
                &src_strides,
                &StridedCopy::row_major(&out_dims),
            );
            let mut out = vec![0u32; n];
            unsafe { plan.run(x.as_ptr().cast(), out.as_mut_ptr().cast()) };
            assert_eq!(out, naive_transpose(&x, &dims, &perm), "{dims:?} {perm:?}");
        }
    }

    #[test]
    fn broadcast_reverse_and_merge() {
        // Broadcast a [3] vector along a new leading dimension of 4.
        let x = [1u16, 2, 3];
        let plan = StridedCopy::new(2, &[4, 3], &[0, 1], &[3, 1]);
        let mut out = [0u16; 12];
        unsafe { plan.run(x.as_ptr().cast(), out.as_mut_ptr().cast()) };
        assert_eq!(out, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
        // Reverse: start at the last element with a negative stride.
        let x = [1u8, 2, 3, 4];
        let plan = StridedCopy::new(1, &[4], &[-1], &[1]);
        let mut out = [0u8; 4];
        unsafe { plan.run(x.as_ptr().add(3), out.as_mut_ptr()) };
        assert_eq!(out, [4, 3, 2, 1]);
        // Contiguous dimensions merge into one run.
        let plan = StridedCopy::new(4, &[2, 3, 4], &[12, 4, 1], &[12, 4, 1]);
        assert_eq!(plan.dims, vec![24]);
    }
}
