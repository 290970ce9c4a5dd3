//! Views: how a fused computation reads a leaf (a parameter, a constant, an
//! iota) at the positions of the block being evaluated.
//!
//! Data movement inside a fusion (`broadcast`, `transpose`, `slice`,
//! `reverse`, `reshape`, `copy`) never moves data: it only changes which leaf
//! element a position reads. A [`View`] is that mapping, from a linear
//! position in the evaluation domain to an element offset in the leaf, as a
//! chain of strided *stages*: stage `k` splits its input (a linear index) by
//! its `dims` (row-major) and returns `base + Σ index[d] · stride[d]`, which is
//! the next stage's input. One stage is a NumPy-style strided view;
//! `broadcast` is a zero stride, `reverse` a negative one, `slice` an offset
//! and a multiplied stride, `transpose` a permutation. A `reshape` keeps the
//! linear order, so it changes nothing unless the next movement op needs the
//! new dimensions and the current stage cannot be split into them without a
//! copy; then a new stage goes in front (the general, per-element path).
//!
//! Stages are kept canonical (size-1 dimensions dropped, neighbours that step
//! through memory contiguously merged, an identity stage removed), so equal
//! mappings compare equal and the common cases are recognised by shape:
//! no stage is a contiguous read, a stage whose strides are all zero is a
//! splat, an innermost stride of 1 reads contiguous runs, of 0 repeats a value.
//!
//! [`View::for_each_run`] walks a block of positions as runs `(length,
//! offset, stride)`; [`Reader`] turns the runs into loads (copies, fills,
//! strided gathers, or the index values themselves for an iota).

use platform_api::shape::row_major_strides;
use platform_api::{Error, Result};

/// One strided mapping (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stage {
    dims: Vec<usize>,
    strides: Vec<isize>,
    base: isize,
}

impl Stage {
    fn identity(dims: &[usize]) -> Stage {
        Stage {
            dims: dims.to_vec(),
            strides: row_major_strides(dims)
                .into_iter()
                .map(|s| s as isize)
                .collect(),
            base: 0,
        }
    }

    fn count(&self) -> usize {
        self.dims.iter().product()
    }

    /// Drops size-1 dimensions and merges contiguous neighbours.
    fn canonical(mut self) -> Stage {
        if self.count() == 0 {
            // No element is ever read: any mapping will do.
            return Stage {
                dims: vec![0],
                strides: vec![1],
                base: 0,
            };
        }
        let mut dims = Vec::with_capacity(self.dims.len());
        let mut strides: Vec<isize> = Vec::with_capacity(self.dims.len());
        for (&d, &s) in self.dims.iter().zip(&self.strides) {
            if d == 1 {
                continue;
            }
            match (dims.last_mut(), strides.last_mut()) {
                (Some(pd), Some(ps)) if *ps == s * d as isize => {
                    *pd *= d;
                    *ps = s;
                }
                _ => {
                    dims.push(d);
                    strides.push(s);
                }
            }
        }
        // All-zero strides: one dimension (or none) is enough.
        if !strides.is_empty() && strides.iter().all(|&s| s == 0) {
            let n: usize = dims.iter().product();
            dims = vec![n];
            strides = vec![0];
        }
        self.dims = dims;
        self.strides = strides;
        self
    }

    /// Whether the stage maps every linear index to itself.
    fn is_identity(&self) -> bool {
        self.base == 0 && matches!(self.strides.as_slice(), [] | [1])
    }

    /// The stage over `dims` (same count) that maps a multi-index to what this
    /// canonical stage maps its row-major linear index to, when no copy is
    /// needed (every canonical dimension splits into whole target dimensions).
    fn split_into(&self, dims: &[usize]) -> Option<Stage> {
        let count: usize = dims.iter().product();
        if count != self.count() {
            return None;
        }
        let mut strides = vec![0isize; dims.len()];
        // Walk both from the innermost dimension.
        let mut t = dims.len();
        for c in (0..self.dims.len()).rev() {
            let mut remaining = self.dims[c];
            let mut stride = self.strides[c];
            while remaining > 1 {
                if t == 0 {
                    return None;
                }
                t -= 1;
                let d = dims[t];
                if d == 1 {
                    continue;
                }
                if !remaining.is_multiple_of(d) {
                    return None;
                }
                strides[t] = stride;
                stride *= d as isize;
                remaining /= d;
            }
        }
        Some(Stage {
            dims: dims.to_vec(),
            strides,
            base: self.base,
        })
    }

    #[inline]
    fn apply(&self, linear: isize) -> isize {
        let mut l = linear;
        let mut off = self.base;
        for d in (0..self.dims.len()).rev() {
            let n = self.dims[d] as isize;
            off += (l % n) * self.strides[d];
            l /= n;
        }
        off
    }
}

/// A leaf's mapping from domain positions to element offsets (see the module
/// doc). No stage is the identity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct View {
    stages: Vec<Stage>,
}

/// A data movement op applied to a view.
#[derive(Clone, Debug)]
pub enum Movement<'a> {
    Transpose(&'a [usize]),
    /// Result dimensions and, per operand dimension, the result dimension it
    /// becomes.
    Broadcast {
        result: &'a [usize],
        dims: &'a [usize],
    },
    /// Per dimension (start, limit, stride).
    Slice(&'a [(usize, usize, usize)]),
    Reverse(&'a [usize]),
}

impl View {
    /// Reads positions as offsets: position `i` is element `i`.
    pub fn identity() -> View {
        View::default()
    }

    /// The iota along `dimension` of an array of `dims`: position `i` maps to
    /// the `dimension` coordinate of element `i`.
    pub fn iota(dims: &[usize], dimension: usize) -> View {
        let strides = (0..dims.len()).map(|d| (d == dimension) as isize).collect();
        View::from_front(
            Stage {
                dims: dims.to_vec(),
                strides,
                base: 0,
            },
            Vec::new(),
        )
    }

    /// Every position reads offset 0 of a one-element leaf.
    pub fn splat() -> View {
        View::from_front(
            Stage {
                dims: vec![],
                strides: vec![],
                base: 0,
            },
            Vec::new(),
        )
    }

    /// `L ↦ L / row_len` over `rows · row_len` positions: one value per row.
    pub fn rows(rows: usize, row_len: usize) -> View {
        View::from_front(
            Stage {
                dims: vec![rows, row_len],
                strides: vec![1, 0],
                base: 0,
            },
            Vec::new(),
        )
    }

    fn from_front(front: Stage, rest: Vec<Stage>) -> View {
        let front = front.canonical();
        let mut stages = Vec::with_capacity(rest.len() + 1);
        if !front.is_identity() {
            stages.push(front);
        }
        stages.extend(rest);
        View { stages }
    }

    /// The front stage expressed over `dims` (the logical shape the view is
    /// being read as), and the stages after it.
    fn front_over(&self, dims: &[usize]) -> (Stage, Vec<Stage>) {
        if let Some(front) = self.stages.first() {
            if let Some(split) = front.split_into(dims) {
                return (split, self.stages[1..].to_vec());
            }
            return (Stage::identity(dims), self.stages.clone());
        }
        (Stage::identity(dims), Vec::new())
    }

    /// The view of `movement(x)` where this view reads `x`, whose shape is
    /// `dims`.
    pub fn apply(&self, dims: &[usize], movement: &Movement<'_>) -> Result<View> {
        let (mut stage, rest) = self.front_over(dims);
        let bad = |what: &str| {
            Error::invalid_argument(format!(
                "fused {what} does not fit an operand of shape {dims:?}"
            ))
        };
        match movement {
            Movement::Transpose(perm) => {
                if perm.len() != dims.len() {
                    return Err(bad("transpose"));
                }
                let mut nd = Vec::with_capacity(perm.len());
                let mut ns = Vec::with_capacity(perm.len());
                for &p in perm.iter() {
                    if p >= dims.len() {
                        return Err(bad("transpose"));
                    }
                    nd.push(stage.dims[p]);
                    ns.push(stage.strides[p]);
                }
                stage.dims = nd;
                stage.strides = ns;
            }
            Movement::Broadcast {
                result,
                dims: bdims,
            } => {
                if bdims.len() != dims.len() {
                    return Err(bad("broadcast"));
                }
                let mut ns = vec![0isize; result.len()];
                for (k, &r) in bdims.iter().enumerate() {
                    if r >= result.len() || result[r] != dims[k] {
                        return Err(bad("broadcast"));
                    }
                    ns[r] = stage.strides[k];
                }
                stage.dims = result.to_vec();
                stage.strides = ns;
            }
            Movement::Slice(slices) => {
                if slices.len() != dims.len() {
                    return Err(bad("slice"));
                }
                for (d, &(start, limit, step)) in slices.iter().enumerate() {
                    if step == 0 || start > limit || limit > dims[d] {
                        return Err(bad("slice"));
                    }
                    stage.base += start as isize * stage.strides[d];
                    stage.dims[d] = (limit - start).div_ceil(step);
                    stage.strides[d] *= step as isize;
                }
            }
            Movement::Reverse(rdims) => {
                for &d in rdims.iter() {
                    if d >= dims.len() {
                        return Err(bad("reverse"));
                    }
                    if stage.dims[d] > 0 {
                        stage.base += (stage.dims[d] as isize - 1) * stage.strides[d];
                    }
                    stage.strides[d] = -stage.strides[d];
                }
            }
        }
        Ok(View::from_front(stage, rest))
    }

    /// Whether positions read consecutive offsets starting at the returned one.
    pub fn contiguous_start(&self) -> Option<isize> {
        match self.stages.as_slice() {
            [] => Some(0),
            [s] if s.strides.as_slice() == [1] => Some(s.base),
            _ => None,
        }
    }

    /// When positions `0..rows·row_len` read the same `row_len` consecutive
    /// elements for every row: the offset of the first.
    pub fn repeat_base(&self, rows: usize, row_len: usize) -> Option<isize> {
        match self.stages.as_slice() {
            [s] if rows > 1 && row_len > 1 && s.dims == [rows, row_len] && s.strides == [0, 1] => {
                Some(s.base)
            }
            _ => None,
        }
    }

    /// When every value is read `r` times in a row (`r` at most `max`; an
    /// innermost broadcast dimension, as a per-group statistic broadcast over
    /// `[.., groups, r]`): the view of the distinct values (position `L`
    /// there is position `L·r` here) and `r`.
    pub fn repeated_inner(&self, max: usize) -> Option<(View, usize)> {
        let [s] = self.stages.as_slice() else {
            return None;
        };
        let rank = s.dims.len();
        let r = *s.dims.last()?;
        if rank < 2 || s.strides[rank - 1] != 0 || r < 2 || r > max {
            return None;
        }
        let outer = Stage {
            dims: s.dims[..rank - 1].to_vec(),
            strides: s.strides[..rank - 1].to_vec(),
            base: s.base,
        };
        Some((View::from_front(outer, Vec::new()), r))
    }

    /// When positions read short contiguous runs (a transposed read whose
    /// innermost dimension, at most `max` long, is contiguous in the leaf
    /// but its neighbour is not): the one stage's dimensions, strides and
    /// base, for a loader that walks the two innermost dimensions itself.
    pub fn short_runs(&self, max: usize) -> Option<(Vec<usize>, Vec<isize>, isize)> {
        let [s] = self.stages.as_slice() else {
            return None;
        };
        let rank = s.dims.len();
        let r = *s.dims.last()?;
        if !(2..=16).contains(&rank) || s.strides[rank - 1] != 1 || r < 2 || r > max {
            return None;
        }
        Some((s.dims.clone(), s.strides.clone(), s.base))
    }

    /// `(r, base)` when position `i` reads offset `base + i % r` (`2 <= r <=
    /// max`): one short contiguous run read again and again, such as a
    /// per-channel vector broadcast along every outer dimension.
    pub fn periodic(&self, max: usize) -> Option<(usize, isize)> {
        let [s] = self.stages.as_slice() else {
            return None;
        };
        let rank = s.dims.len();
        let r = *s.dims.last()?;
        let outer_still = s.strides[..rank.checked_sub(1)?].iter().all(|&t| t == 0);
        (rank >= 2 && s.strides[rank - 1] == 1 && (2..=max).contains(&r) && outer_still)
            .then_some((r, s.base))
    }

    /// The one offset every position reads, when there is one.
    pub fn splat_offset(&self) -> Option<isize> {
        let front = self.stages.first()?;
        if front.strides.iter().any(|&s| s != 0) {
            return None;
        }
        let mut off = front.base;
        for s in &self.stages[1..] {
            off = s.apply(off);
        }
        Some(off)
    }

    /// The offset position `i` reads.
    pub fn offset(&self, i: usize) -> isize {
        let mut off = i as isize;
        for s in &self.stages {
            off = s.apply(off);
        }
        off
    }

    /// The lowest and highest offsets positions `0..count` read (for bounds
    /// checks at plan time), or `None` for no positions.
    pub fn offset_range(&self, count: usize) -> Option<(isize, isize)> {
        if count == 0 {
            return None;
        }
        match self.stages.as_slice() {
            [] => Some((0, count as isize - 1)),
            [s] => {
                let mut lo = s.base;
                let mut hi = s.base;
                for (&d, &st) in s.dims.iter().zip(&s.strides) {
                    let span = (d as isize - 1) * st;
                    if span < 0 {
                        lo += span;
                    } else {
                        hi += span;
                    }
                }
                Some((lo, hi))
            }
            _ => {
                // Rare (a reshape between movements): check every position.
                let mut lo = isize::MAX;
                let mut hi = isize::MIN;
                for i in 0..count {
                    let o = self.offset(i);
                    lo = lo.min(o);
                    hi = hi.max(o);
                }
                Some((lo, hi))
            }
        }
    }

    /// Calls `run(position, offset, len, stride)` for runs that together cover
    /// positions `start..start + n` in order: position `position + k` reads
    /// offset `offset + k · stride` for `k < len`.
    #[inline]
    pub fn for_each_run(
        &self,
        start: usize,
        n: usize,
        mut run: impl FnMut(usize, isize, usize, isize),
    ) {
        if n == 0 {
            return;
        }
        match self.stages.as_slice() {
            [] => run(0, start as isize, n, 1),
            [s] => walk_stage(s, start, n, &mut run),
            _ => {
                for i in 0..n {
                    run(i, self.offset(start + i), 1, 0);
                }
            }
        }
    }
}

#[inline]
fn walk_stage(s: &Stage, start: usize, n: usize, run: &mut impl FnMut(usize, isize, usize, isize)) {
    let rank = s.dims.len();
    if rank == 0 {
        run(0, s.base, n, 0);
        return;
    }
    if rank == 1 {
        run(0, s.base + start as isize * s.strides[0], n, s.strides[0]);
        return;
    }
    // Multi-index of `start`.
    let mut idx = [0usize; 16];
    let mut idx_vec;
    let idx: &mut [usize] = if rank <= 16 {
        &mut idx[..rank]
    } else {
        idx_vec = vec![0usize; rank];
        &mut idx_vec
    };
    let mut l = start;
    let mut off = s.base;
    for d in (0..rank).rev() {
        idx[d] = l % s.dims[d];
        l /= s.dims[d];
        off += idx[d] as isize * s.strides[d];
    }
    let inner = rank - 1;
    let (inner_dim, inner_stride) = (s.dims[inner], s.strides[inner]);
    let mut pos = 0;
    while pos < n {
        let len = (n - pos).min(inner_dim - idx[inner]);
        run(pos, off, len, inner_stride);
        pos += len;
        if pos >= n {
            break;
        }
        // Carry into the outer dimensions.
        off += (len as isize) * inner_stride - (inner_dim as isize) * inner_stride;
        idx[inner] = 0;
        let mut d = inner;
        loop {
            d -= 1;
            idx[d] += 1;
            off += s.strides[d];
            if idx[d] < s.dims[d] || d == 0 {
                break;
            }
            off -= s.dims[d] as isize * s.strides[d];
            idx[d] = 0;
        }
    }
}

/// Loads a block of a leaf through its view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadKind {
    /// Copy elements of this many bytes from memory.
    Memory(usize),
    /// The positions' offsets themselves are the values (iota).
    Index,
}

/// Copies runs of elements of `width` bytes: `dst[k] = src[offset + k·stride]`.
///
/// # Safety
/// Every offset read lies inside `src`'s allocation; `dst` holds `len`.
#[inline]
pub unsafe fn gather(
    width: usize,
    src: *const u8,
    offset: isize,
    len: usize,
    stride: isize,
    dst: *mut u8,
) {
    macro_rules! go {
        ($W:ty) => {{
            let s = src.cast::<$W>();
            let d = dst.cast::<$W>();
            // SAFETY: forwarded.
            unsafe {
                match stride {
                    1 => std::ptr::copy_nonoverlapping(s.offset(offset), d, len),
                    0 => {
                        let v = s.offset(offset).read();
                        for k in 0..len {
                            d.add(k).write(v);
                        }
                    }
                    2 => gather_every::<$W, 2>(s.offset(offset), len, d),
                    3 => gather_every::<$W, 3>(s.offset(offset), len, d),
                    4 => gather_every::<$W, 4>(s.offset(offset), len, d),
                    _ => {
                        for k in 0..len {
                            d.add(k)
                                .write(s.offset(offset + k as isize * stride).read());
                        }
                    }
                }
            }
        }};
    }
    match width {
        1 => go!(u8),
        2 => go!(u16),
        4 => go!(u32),
        8 => go!(u64),
        16 => go!([u64; 2]),
        _ => {
            for k in 0..len {
                // SAFETY: forwarded.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.offset((offset + k as isize * stride) * width as isize),
                        dst.add(k * width),
                        width,
                    )
                }
            }
        }
    }
}

/// `dst[k] = src[k·S]` for `k < len`: a short fixed stride (a transposed
/// read of a few interleaved channels), which the compiler turns into vector
/// loads and shuffles where the processor has AVX2, instead of one scalar
/// load per element.
///
/// # Safety
/// `src` is readable at every `k·S` and `dst` writable at every `k < len`.
#[inline]
unsafe fn gather_every<W: Copy, const S: usize>(src: *const W, len: usize, dst: *mut W) {
    #[inline(always)]
    unsafe fn body<W: Copy, const S: usize>(src: *const W, len: usize, dst: *mut W) {
        for k in 0..len {
            // SAFETY: the caller's contract.
            unsafe { dst.add(k).write(src.add(k * S).read()) }
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<W: Copy, const S: usize>(src: *const W, len: usize, dst: *mut W) {
        // SAFETY: forwarded.
        unsafe { body::<W, S>(src, len, dst) }
    }
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::simd::has_avx2_fma() {
        // SAFETY: the processor has AVX2 (checked); the rest is forwarded.
        return unsafe { avx2::<W, S>(src, len, dst) };
    }
    // SAFETY: forwarded.
    unsafe { body::<W, S>(src, len, dst) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strides_gather_every_element_they_name() {
        // Enough for offset 3 plus 64 elements 4 apart of 16 bytes.
        let src: Vec<u8> = (0..4200usize).map(|i| (i * 7 % 251) as u8).collect();
        for width in [1usize, 2, 4, 8, 16] {
            for stride in [2isize, 3, 4] {
                for len in [0usize, 1, 5, 31, 33, 64] {
                    let offset = 3isize;
                    let mut dst = vec![0u8; len * width];
                    // SAFETY: every element read lies in `src` (sized above);
                    // `dst` holds `len` elements.
                    unsafe { gather(width, src.as_ptr(), offset, len, stride, dst.as_mut_ptr()) };
                    let want: Vec<u8> = (0..len)
                        .flat_map(|k| {
                            let at = (offset as usize + k * stride as usize) * width;
                            src[at..at + width].to_vec()
                        })
                        .collect();
                    assert_eq!(dst, want, "width {width}, stride {stride}, len {len}");
                }
            }
        }
    }

    fn offsets(v: &View, n: usize) -> Vec<isize> {
        let mut out = vec![0isize; n];
        v.for_each_run(0, n, |p, o, len, s| {
            for k in 0..len {
                out[p + k] = o + k as isize * s;
            }
        });
        out
    }

    /// Offsets of every element of `dims` when read through a reference
    /// model: explicit multi-index arithmetic.
    fn model_transpose(dims: &[usize], perm: &[usize]) -> Vec<isize> {
        let strides = row_major_strides(dims);
        let out_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        let n: usize = dims.iter().product();
        (0..n)
            .map(|l| {
                let mut rem = l;
                let mut idx = vec![0; out_dims.len()];
                for d in (0..out_dims.len()).rev() {
                    idx[d] = rem % out_dims[d];
                    rem /= out_dims[d];
                }
                perm.iter()
                    .enumerate()
                    .map(|(k, &p)| idx[k] * strides[p])
                    .sum::<usize>() as isize
            })
            .collect()
    }

    #[test]
    fn transpose_and_reshape_compose() {
        let v = View::identity()
            .apply(&[2, 3, 4], &Movement::Transpose(&[2, 0, 1]))
            .unwrap();
        assert_eq!(offsets(&v, 24), model_transpose(&[2, 3, 4], &[2, 0, 1]));
        // Reading every position from the middle gives the same offsets.
        let mut tail = vec![0isize; 24 - 5];
        v.for_each_run(5, 19, |p, o, len, s| {
            for k in 0..len {
                tail[p + k] = o + k as isize * s;
            }
        });
        assert_eq!(tail, model_transpose(&[2, 3, 4], &[2, 0, 1])[5..]);
        // A reshape then another transpose needs a second stage.
        let w = v.apply(&[6, 4], &Movement::Transpose(&[1, 0])).unwrap();
        let first = model_transpose(&[2, 3, 4], &[2, 0, 1]);
        let second = model_transpose(&[6, 4], &[1, 0]);
        let expect: Vec<isize> = second.iter().map(|&i| first[i as usize]).collect();
        assert_eq!(offsets(&w, 24), expect);
    }

    #[test]
    fn repeated_values_read_through_the_outer_view() {
        // [2, 3] broadcast to [2, 5, 3, 4] along dims {0, 2}: each value
        // four times, the row of twelve repeated five times per batch.
        let v = View::identity()
            .apply(
                &[2, 3],
                &Movement::Broadcast {
                    result: &[2, 5, 3, 4],
                    dims: &[0, 2],
                },
            )
            .unwrap();
        let (outer, r) = v.repeated_inner(8).expect("an innermost repeat");
        assert_eq!(r, 4);
        let all = offsets(&v, 120);
        let distinct = offsets(&outer, 30);
        for (p, &o) in all.iter().enumerate() {
            assert_eq!(o, distinct[p / 4], "position {p}");
        }
        assert!(v.repeated_inner(3).is_none());
        assert!(View::identity().repeated_inner(8).is_none());
    }

    #[test]
    fn short_runs_describe_the_stage() {
        // [7, 5, 3] read as [5, 7, 3]: runs of 3, rows 15 apart.
        let v = View::identity()
            .apply(&[7, 5, 3], &Movement::Transpose(&[1, 0, 2]))
            .unwrap();
        let (dims, strides, base) = v.short_runs(16).expect("short runs");
        assert_eq!((dims, strides, base), (vec![5, 7, 3], vec![3, 15, 1], 0));
        assert!(v.short_runs(2).is_none());
        assert!(View::identity().short_runs(16).is_none());
    }

    #[test]
    fn broadcast_slice_reverse() {
        // Row broadcast: [4] -> [3, 4] along dim 1.
        let v = View::identity()
            .apply(
                &[4],
                &Movement::Broadcast {
                    result: &[3, 4],
                    dims: &[1],
                },
            )
            .unwrap();
        assert_eq!(offsets(&v, 12), vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        // One value per row, and the canonical form of that is `rows`.
        let r = View::identity()
            .apply(
                &[3],
                &Movement::Broadcast {
                    result: &[3, 4],
                    dims: &[0],
                },
            )
            .unwrap();
        assert_eq!(r, View::rows(3, 4));
        // Scalar broadcast is a splat.
        let s = View::identity()
            .apply(
                &[],
                &Movement::Broadcast {
                    result: &[5, 6],
                    dims: &[],
                },
            )
            .unwrap();
        assert_eq!(s.splat_offset(), Some(0));
        // Slice with stride, then reverse.
        let sl = View::identity()
            .apply(&[10], &Movement::Slice(&[(1, 9, 3)]))
            .unwrap();
        assert_eq!(offsets(&sl, 3), vec![1, 4, 7]);
        let rv = sl.apply(&[3], &Movement::Reverse(&[0])).unwrap();
        assert_eq!(offsets(&rv, 3), vec![7, 4, 1]);
        assert_eq!(rv.offset_range(3), Some((1, 7)));
        // Identity stays identity; a reshape of a transposed view splits it.
        assert_eq!(View::identity().contiguous_start(), Some(0));
        let iota = View::iota(&[2, 3], 1);
        assert_eq!(offsets(&iota, 6), vec![0, 1, 2, 0, 1, 2]);
    }
}
