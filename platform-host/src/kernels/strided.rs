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
pub(crate) const COPY_GRAIN: usize = 1 << 16;

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
                    } else if si == -1 && ti == 1 && n_inner > 0 {
                        // A reversed run (`reverse` of the innermost
                        // dimension): as slices, so the compiler vectorises
                        // it with lane permutes instead of one element at a
                        // time.
                        let from =
                            std::slice::from_raw_parts(s.offset(1 - n_inner as isize), n_inner);
                        let to = std::slice::from_raw_parts_mut(t, n_inner);
                        for (x, y) in to.iter_mut().zip(from.iter().rev()) {
                            *x = *y;
                        }
                    } else if si == 0 {
                        let v = s.read();
                        for k in 0..n_inner {
                            t.offset(k as isize * ti).write(v);
                        }
                    } else if ti == 1 && si > 1 && si <= 4 && n_inner > 1 {
                        // A strided slice's run: a fixed small stride lets
                        // the compiler load whole vectors and pick every
                        // `si`-th lane with shuffles.
                        let to = std::slice::from_raw_parts_mut(t, n_inner);
                        let span = (n_inner - 1) * si as usize + 1;
                        let from = std::slice::from_raw_parts(s, span);
                        match si {
                            2 => gather_every::<W, 2>(from, to),
                            3 => gather_every::<W, 3>(from, to),
                            _ => gather_every::<W, 4>(from, to),
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
    /// (destination's fastest) are walked in tiles of [`TILE_A`] by
    /// [`TILE_B`] positions. Within a tile, blocks of 8×8 (4-byte elements)
    /// or 4×4 (8-byte) are loaded as vectors along `a`, transposed in
    /// registers and stored as vectors along the last dimension, so both
    /// arrays are read and written in whole cache lines; other widths (and
    /// tile edges) go element by element through a small local buffer.
    unsafe fn run_tiled<W: Copy>(&self, src: *const W, dst: *mut W, a: usize) {
        let rank = self.dims.len();
        let b = rank - 1;
        let (na, nb) = (self.dims[a], self.dims[b]);
        let rest: Vec<usize> = (0..rank).filter(|&d| d != a && d != b).collect();
        let rest_dims: Vec<usize> = rest.iter().map(|&d| self.dims[d]).collect();
        let outer: usize = rest_dims.iter().product();
        // Tiles of at most 16 KiB: both sides' lines of a tile stay in L1.
        let (edge_a, edge_b) = match std::mem::size_of::<W>() {
            0..=4 => (TILE_A, TILE_B),
            5..=8 => (TILE_A / 2, TILE_B),
            _ => (16, 16),
        };
        let tiles_a = na.div_ceil(edge_a);
        let tiles_b = nb.div_ceil(edge_b);
        let jobs = outer * tiles_a * tiles_b;
        let (src_a, dst_a) = (src as usize, dst as usize);
        let grain = (COPY_GRAIN / (edge_a * edge_b)).max(1);
        let simd = transpose_kernel::<W>(self.dst_strides[b]);
        parallel_for(jobs, grain, |start, end| {
            let (src, dst) = (src_a as *const W, dst_a as *mut W);
            let mut index = vec![0usize; rest.len()];
            let mut local: Vec<W> = Vec::with_capacity(edge_a * edge_b);
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
                let (a0, a1) = (ta_i * edge_a, ((ta_i + 1) * edge_a).min(na));
                let (b0, b1) = (tb_i * edge_b, ((tb_i + 1) * edge_b).min(nb));
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
                unsafe {
                    match simd {
                        Some(kernel) => kernel(&tile, &mut local),
                        None => transpose_tile_simd(&tile, &mut local),
                    }
                }
            }
        });
    }
}

/// `to[k] = from[k * S]` for every `k`; `from` holds `(to.len() - 1) * S + 1`
/// elements, so the last one is copied apart from the whole groups of `S`.
#[inline(always)]
fn gather_every<W: Copy, const S: usize>(from: &[W], to: &mut [W]) {
    let Some((last, head)) = to.split_last_mut() else {
        return;
    };
    for (d, group) in head.iter_mut().zip(from.chunks_exact(S)) {
        *d = group[0];
    }
    *last = from[head.len() * S];
}

/// Tile extent along the source's unit-stride dimension (4-byte elements).
const TILE_A: usize = 64;
/// Tile extent along the destination's fastest dimension.
const TILE_B: usize = 64;

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

/// A register-transposing tile kernel for elements of `W`, when the processor
/// has one and the destination's fastest dimension is contiguous.
type TileKernel<W> = unsafe fn(&Tile<W>, &mut Vec<W>);

fn transpose_kernel<W: Copy>(dst_col_stride: isize) -> Option<TileKernel<W>> {
    #[cfg(target_arch = "x86_64")]
    if dst_col_stride == 1 && super::simd::has_avx2_fma() {
        // SAFETY (of the casts): the kernels only move `size_of::<W>()`-byte
        // values, so a tile of `W` is a tile of the same-width integer.
        match std::mem::size_of::<W>() {
            4 => {
                let k: TileKernel<u32> = tile_avx2_4;
                // SAFETY: same signature up to a same-width element type.
                return Some(unsafe { std::mem::transmute::<TileKernel<u32>, TileKernel<W>>(k) });
            }
            8 => {
                let k: TileKernel<u64> = tile_avx2_8;
                // SAFETY: as above.
                return Some(unsafe { std::mem::transmute::<TileKernel<u64>, TileKernel<W>>(k) });
            }
            _ => {}
        }
    }
    #[cfg(target_arch = "x86_64")]
    if dst_col_stride == 1 && std::mem::size_of::<W>() == 2 {
        let k: TileKernel<u16> = tile_sse2_2;
        // SAFETY: as above (SSE2 is part of x86-64).
        return Some(unsafe { std::mem::transmute::<TileKernel<u16>, TileKernel<W>>(k) });
    }
    let _ = dst_col_stride;
    None
}

/// Transposes a `rows × cols` block of 2-, 4- or 8-byte elements through
/// register tiles: `dst[r·dst_row_stride + c] = src[c·src_col_stride + r]`.
/// Returns `false`, touching nothing, where the processor has no such
/// kernel for the width (the caller then copies element by element).
///
/// # Safety
/// Every element named above lies in its allocation; the two blocks do not
/// overlap.
pub unsafe fn transpose_block<W: Copy>(
    src: *const W,
    src_col_stride: isize,
    dst: *mut W,
    dst_row_stride: isize,
    rows: usize,
    cols: usize,
) -> bool {
    let Some(kernel) = transpose_kernel::<W>(1) else {
        return false;
    };
    let tile = Tile {
        src,
        dst,
        rows,
        cols,
        src_col_stride,
        dst_row_stride,
        dst_col_stride: 1,
    };
    // SAFETY: the caller's contract; the register kernels use no scratch.
    unsafe { kernel(&tile, &mut Vec::new()) };
    true
}

/// Copies the parts of a tile outside its whole `block`×`block` blocks
/// element by element (the right and bottom edges).
///
/// # Safety
/// As [`transpose_tile`].
#[inline(always)]
unsafe fn tile_edges<W: Copy>(t: &Tile<W>, block: usize) {
    let (full_r, full_c) = (t.rows / block * block, t.cols / block * block);
    for c in 0..t.cols {
        let s = t.src.wrapping_offset(c as isize * t.src_col_stride);
        let d = t.dst.wrapping_offset(c as isize * t.dst_col_stride);
        let first = if c < full_c { full_r } else { 0 };
        for r in first..t.rows {
            // SAFETY: inside the tile (caller's contract).
            unsafe {
                d.wrapping_offset(r as isize * t.dst_row_stride)
                    .write(s.add(r).read())
            };
        }
    }
}

/// 8×8 blocks of 4-byte elements through AVX2 registers (bit-exact moves).
///
/// # Safety
/// As [`transpose_tile`]; the processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tile_avx2_4(t: &Tile<u32>, _local: &mut Vec<u32>) {
    use std::arch::x86_64::*;
    let (sc, dr) = (t.src_col_stride, t.dst_row_stride);
    let src = t.src.cast::<f32>();
    let dst = t.dst.cast::<f32>();
    let mut c = 0;
    while c + 8 <= t.cols {
        let mut r = 0;
        while r + 8 <= t.rows {
            // SAFETY: an 8×8 block inside the tile.
            unsafe {
                let s = src.wrapping_offset(c as isize * sc + r as isize);
                let ld = |k: isize| _mm256_loadu_ps(s.wrapping_offset(k * sc));
                let (r0, r1, r2, r3) = (ld(0), ld(1), ld(2), ld(3));
                let (r4, r5, r6, r7) = (ld(4), ld(5), ld(6), ld(7));
                let t0 = _mm256_unpacklo_ps(r0, r1);
                let t1 = _mm256_unpackhi_ps(r0, r1);
                let t2 = _mm256_unpacklo_ps(r2, r3);
                let t3 = _mm256_unpackhi_ps(r2, r3);
                let t4 = _mm256_unpacklo_ps(r4, r5);
                let t5 = _mm256_unpackhi_ps(r4, r5);
                let t6 = _mm256_unpacklo_ps(r6, r7);
                let t7 = _mm256_unpackhi_ps(r6, r7);
                let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
                let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
                let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
                let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
                let d = dst.wrapping_offset(r as isize * dr + c as isize);
                let st = |k: isize, v: __m256| _mm256_storeu_ps(d.wrapping_offset(k * dr), v);
                st(0, _mm256_permute2f128_ps::<0x20>(u0, u4));
                st(1, _mm256_permute2f128_ps::<0x20>(u1, u5));
                st(2, _mm256_permute2f128_ps::<0x20>(u2, u6));
                st(3, _mm256_permute2f128_ps::<0x20>(u3, u7));
                st(4, _mm256_permute2f128_ps::<0x31>(u0, u4));
                st(5, _mm256_permute2f128_ps::<0x31>(u1, u5));
                st(6, _mm256_permute2f128_ps::<0x31>(u2, u6));
                st(7, _mm256_permute2f128_ps::<0x31>(u3, u7));
            }
            r += 8;
        }
        c += 8;
    }
    // SAFETY: forwarded.
    unsafe { tile_edges(t, 8) };
}

/// 4×4 blocks of 8-byte elements through AVX2 registers (bit-exact moves).
///
/// # Safety
/// As [`transpose_tile`]; the processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tile_avx2_8(t: &Tile<u64>, _local: &mut Vec<u64>) {
    use std::arch::x86_64::*;
    let (sc, dr) = (t.src_col_stride, t.dst_row_stride);
    let src = t.src.cast::<f64>();
    let dst = t.dst.cast::<f64>();
    let mut c = 0;
    while c + 4 <= t.cols {
        let mut r = 0;
        while r + 4 <= t.rows {
            // SAFETY: a 4×4 block inside the tile.
            unsafe {
                let s = src.wrapping_offset(c as isize * sc + r as isize);
                let ld = |k: isize| _mm256_loadu_pd(s.wrapping_offset(k * sc));
                let (r0, r1, r2, r3) = (ld(0), ld(1), ld(2), ld(3));
                let t0 = _mm256_unpacklo_pd(r0, r1);
                let t1 = _mm256_unpackhi_pd(r0, r1);
                let t2 = _mm256_unpacklo_pd(r2, r3);
                let t3 = _mm256_unpackhi_pd(r2, r3);
                let d = dst.wrapping_offset(r as isize * dr + c as isize);
                let st = |k: isize, v: __m256d| _mm256_storeu_pd(d.wrapping_offset(k * dr), v);
                st(0, _mm256_permute2f128_pd::<0x20>(t0, t2));
                st(1, _mm256_permute2f128_pd::<0x20>(t1, t3));
                st(2, _mm256_permute2f128_pd::<0x31>(t0, t2));
                st(3, _mm256_permute2f128_pd::<0x31>(t1, t3));
            }
            r += 4;
        }
        c += 4;
    }
    // SAFETY: forwarded.
    unsafe { tile_edges(t, 4) };
}

/// 8×8 blocks of 2-byte elements (bf16, f16, s16) through SSE2 registers
/// (bit-exact moves): three rounds of interleaving, 16-, 32- and 64-bit.
///
/// A whole tile is transposed into `local` first and then written out row
/// by row: written straight, each destination row of the tile got 16 bytes
/// per column block, and with rows a power-of-two apart (a 2048-wide bf16
/// matrix: 4 KiB) the tile's 64 rows share one L1 set, so every line left
/// L1 between its four writes.
///
/// # Safety
/// As [`transpose_tile`].
#[cfg(target_arch = "x86_64")]
unsafe fn tile_sse2_2(t: &Tile<u16>, local: &mut Vec<u16>) {
    let (sc, dr) = (t.src_col_stride, t.dst_row_stride);
    let (full_r, full_c) = (t.rows / 8 * 8, t.cols / 8 * 8);
    if full_r == t.rows && full_c == t.cols && full_c >= 16 {
        local.clear();
        local.resize(t.rows * t.cols, 0);
        let staged = local.as_mut_ptr();
        // SAFETY: the blocks lie in the tile and in `local` (rows × cols,
        // row length cols); each staged row is copied to its destination
        // row.
        unsafe {
            blocks_sse2_2(t.src, sc, staged, t.cols as isize, t.rows, t.cols);
            for r in 0..t.rows {
                std::ptr::copy_nonoverlapping(
                    staged.add(r * t.cols),
                    t.dst.wrapping_offset(r as isize * dr),
                    t.cols,
                );
            }
        }
        return;
    }
    // SAFETY: the whole blocks lie in the tile; the edges are forwarded.
    unsafe {
        blocks_sse2_2(t.src, sc, t.dst, dr, full_r, full_c);
        tile_edges(t, 8);
    }
}

/// Transposes the `rows × cols` (multiples of 8) positions at `src` (rows
/// contiguous, columns `sc` apart) into `dst` (rows `dr` apart, columns
/// contiguous), 8×8 at a time.
///
/// # Safety
/// Every position read or written must be valid.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn blocks_sse2_2(
    src: *const u16,
    sc: isize,
    dst: *mut u16,
    dr: isize,
    rows: usize,
    cols: usize,
) {
    use std::arch::x86_64::*;
    let mut c = 0;
    while c + 8 <= cols {
        let mut r = 0;
        while r + 8 <= rows {
            // SAFETY: an 8×8 block inside the extent.
            unsafe {
                let s = src.wrapping_offset(c as isize * sc + r as isize);
                let ld = |k: isize| _mm_loadu_si128(s.wrapping_offset(k * sc).cast());
                let (a0, a1, a2, a3) = (ld(0), ld(1), ld(2), ld(3));
                let (a4, a5, a6, a7) = (ld(4), ld(5), ld(6), ld(7));
                let t0 = _mm_unpacklo_epi16(a0, a1);
                let t1 = _mm_unpackhi_epi16(a0, a1);
                let t2 = _mm_unpacklo_epi16(a2, a3);
                let t3 = _mm_unpackhi_epi16(a2, a3);
                let t4 = _mm_unpacklo_epi16(a4, a5);
                let t5 = _mm_unpackhi_epi16(a4, a5);
                let t6 = _mm_unpacklo_epi16(a6, a7);
                let t7 = _mm_unpackhi_epi16(a6, a7);
                let u0 = _mm_unpacklo_epi32(t0, t2);
                let u1 = _mm_unpackhi_epi32(t0, t2);
                let u2 = _mm_unpacklo_epi32(t1, t3);
                let u3 = _mm_unpackhi_epi32(t1, t3);
                let u4 = _mm_unpacklo_epi32(t4, t6);
                let u5 = _mm_unpackhi_epi32(t4, t6);
                let u6 = _mm_unpacklo_epi32(t5, t7);
                let u7 = _mm_unpackhi_epi32(t5, t7);
                let d = dst.wrapping_offset(r as isize * dr + c as isize);
                let st =
                    |k: isize, v: __m128i| _mm_storeu_si128(d.wrapping_offset(k * dr).cast(), v);
                st(0, _mm_unpacklo_epi64(u0, u4));
                st(1, _mm_unpackhi_epi64(u0, u4));
                st(2, _mm_unpacklo_epi64(u1, u5));
                st(3, _mm_unpackhi_epi64(u1, u5));
                st(4, _mm_unpacklo_epi64(u2, u6));
                st(5, _mm_unpackhi_epi64(u2, u6));
                st(6, _mm_unpacklo_epi64(u3, u7));
                st(7, _mm_unpackhi_epi64(u3, u7));
            }
            r += 8;
        }
        c += 8;
    }
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

    /// Transposes `dims` by `perm` with elements of `W` (values are the
    /// linear source position) and compares with a naive loop.
    fn check_transpose<W: Copy + PartialEq + std::fmt::Debug>(
        dims: &[usize],
        perm: &[usize],
        make: impl Fn(usize) -> W,
    ) {
        let n: usize = dims.iter().product();
        let x: Vec<W> = (0..n).map(&make).collect();
        let in_strides = StridedCopy::row_major(dims);
        let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        let src_strides: Vec<isize> = perm.iter().map(|&p| in_strides[p]).collect();
        let plan = StridedCopy::new(
            std::mem::size_of::<W>(),
            &out_dims,
            &src_strides,
            &StridedCopy::row_major(&out_dims),
        );
        let mut out = vec![make(usize::MAX); n];
        unsafe { plan.run(x.as_ptr().cast(), out.as_mut_ptr().cast()) };
        let idx: Vec<u32> = (0..n as u32).collect();
        let want: Vec<W> = naive_transpose(&idx, dims, perm)
            .into_iter()
            .map(|i| x[i as usize])
            .collect();
        assert_eq!(
            out,
            want,
            "{dims:?} {perm:?} width {}",
            std::mem::size_of::<W>()
        );
    }

    #[test]
    fn register_transposes_match_a_naive_loop_at_every_width_and_edge() {
        let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
            (vec![1, 1], vec![1, 0]),
            (vec![8, 8], vec![1, 0]),
            (vec![9, 17], vec![1, 0]),
            (vec![64, 64], vec![1, 0]),
            (vec![65, 130], vec![1, 0]),
            (vec![3, 7], vec![1, 0]),
            (vec![5, 24, 40], vec![2, 0, 1]),
            (vec![16, 4, 33], vec![2, 1, 0]),
            (vec![2, 40, 3, 72], vec![3, 1, 0, 2]),
            (vec![0, 12], vec![1, 0]),
        ];
        for (dims, perm) in &cases {
            check_transpose(dims, perm, |i| i as u8);
            check_transpose(dims, perm, |i| i as u16);
            // NaN payloads must survive the register moves bit for bit.
            check_transpose(dims, perm, |i| 0x7FC0_0000u32 | i as u32);
            check_transpose(dims, perm, |i| 0xFFF8_0000_0000_0000u64 | i as u64);
            check_transpose(dims, perm, |i| (i as u128) << 64 | 5);
        }
    }

    #[test]
    fn tiled_copy_with_a_strided_destination_uses_the_general_tile() {
        // Source [a=40 contiguous, b=20 at stride 40]; destination b has
        // stride 2 (every other element), so no register kernel applies.
        let x: Vec<u32> = (0..800).collect();
        let plan = StridedCopy::new(4, &[40, 20], &[1, 40], &[40, 2]);
        let mut out = vec![u32::MAX; 40 * 40];
        unsafe { plan.run(x.as_ptr().cast(), out.as_mut_ptr().cast()) };
        for a in 0..40 {
            for b in 0..20 {
                assert_eq!(out[a * 40 + 2 * b], x[a + 40 * b]);
                assert_eq!(out[a * 40 + 2 * b + 1], u32::MAX);
            }
        }
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
