//! Packing: copying blocks of the operands into the layouts the micro-kernel
//! streams through, flushing subnormals on the way.
//!
//! * The lhs block (`mc × kc`) becomes strips of `MR` rows in *column
//!   panels*: each k step of a strip is `MR` consecutive values, so the
//!   kernel's broadcasts read one short run per step. A column-major source
//!   is copied column by column; one whose rows are contiguous (row-major
//!   matrices, convolution windows) is read a run of each row at a time and
//!   interleaved, or, under AVX-512, copied row by row into *row panels*
//!   (rows of `kc` consecutive values, which [`super::kernel`] reads through
//!   its row and k strides; see [`super::arch::Simd::ROW_PANELS`]).
//! * The rhs block (`kc × nc`) becomes micro-panels of `NR` columns, each
//!   row of a panel `NR` consecutive values; the last panel is rounded up to
//!   whole vectors with zeros. Row-major sources copy runs of `NR`; column-
//!   major ones scatter each column down its panel.
//!
//! Every packed value goes through [`Flushable::flushed`]: subnormal
//! operands would cost a microcode assist per fused multiply-add (see
//! [`crate::kernels::denormal`]), and doing it here costs almost nothing,
//! since the copy is memory-bound anyway.
//!
//! [`Flushable::flushed`]: crate::kernels::denormal::Flushable::flushed

use super::Element;

/// A matrix in memory: element `(i, j)` at `ptr + i·rs + j·cs`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<T> {
    pub ptr: *const T,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: a read-only view; the GEMM's callers promise nobody writes it while
// the product runs.
unsafe impl<T: Sync> Send for Strided<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Strided<T> {}

impl<T> Strided<T> {
    /// # Safety
    /// `(i, j)` must lie in the matrix.
    #[inline(always)]
    pub(super) unsafe fn at(&self, i: usize, j: usize) -> *const T {
        // SAFETY: the caller's contract.
        unsafe {
            self.ptr
                .offset(i as isize * self.rs)
                .offset(j as isize * self.cs)
        }
    }
}

/// Where the GEMM reads its lhs from: a matrix, or something computed on the
/// fly (a convolution's windows).
///
/// # Contract
/// The source stands for an `m × k` matrix fixed for the GEMM's duration.
/// Reads copy values into packed buffers with subnormals flushed
/// ([`Element::flushed`](crate::kernels::denormal::Flushable::flushed)).
pub trait LhsSource<T: Element>: Sync {
    /// Whether the source reads faster by columns (column-major storage):
    /// then [`LhsSource::read_column`] is used, else [`LhsSource::read_row`].
    fn column_major(&self) -> bool {
        false
    }

    /// Copies `A[row, p0 .. p0 + len]` to `dst[0 .. len]`.
    ///
    /// # Safety
    /// The range must lie in the matrix and `dst` be valid for `len` writes.
    unsafe fn read_row(&self, row: usize, p0: usize, len: usize, dst: *mut T);

    /// Copies `A[r0 .. r0 + len, col]` to `dst[0 .. len]`.
    ///
    /// # Safety
    /// As [`LhsSource::read_row`].
    unsafe fn read_column(&self, col: usize, r0: usize, len: usize, dst: *mut T) {
        for i in 0..len {
            // SAFETY: one element of row r0 + i, forwarded contract.
            unsafe { self.read_row(r0 + i, col, 1, dst.add(i)) };
        }
    }

    /// The source as a matrix whose rows are contiguous (`cs == 1`,
    /// `rs > 0`), which the kernel can read in place; `None` when it is
    /// computed or laid out otherwise.
    fn in_place(&self) -> Option<Strided<T>> {
        None
    }
}

impl<T: Element> LhsSource<T> for Strided<T> {
    fn column_major(&self) -> bool {
        self.rs == 1 && self.cs != 1
    }

    #[inline(always)]
    unsafe fn read_row(&self, row: usize, p0: usize, len: usize, dst: *mut T) {
        // SAFETY: the caller keeps the range inside the matrix.
        unsafe { copy_flushed(self.at(row, p0), self.cs, dst, len) }
    }

    #[inline(always)]
    unsafe fn read_column(&self, col: usize, r0: usize, len: usize, dst: *mut T) {
        // SAFETY: as above.
        unsafe { copy_flushed(self.at(r0, col), self.rs, dst, len) }
    }

    fn in_place(&self) -> Option<Strided<T>> {
        (self.cs == 1 && self.rs > 0).then_some(*self)
    }
}

/// `dst[i] = flushed(src[i·stride])` for `i < len`; a plain loop the
/// compiler vectorizes when `stride` is 1.
///
/// # Safety
/// `src` valid for the strided reads, `dst` for `len` writes.
#[inline(always)]
pub(super) unsafe fn copy_flushed<T: Element>(
    src: *const T,
    stride: isize,
    dst: *mut T,
    len: usize,
) {
    // SAFETY (both loops): the caller's contract.
    unsafe {
        if stride == 1 {
            let (s, d) = (
                std::slice::from_raw_parts(src, len),
                std::slice::from_raw_parts_mut(dst, len),
            );
            for (d, s) in d.iter_mut().zip(s) {
                *d = s.flushed();
            }
        } else {
            for i in 0..len {
                dst.add(i)
                    .write(src.offset(i as isize * stride).read().flushed());
            }
        }
    }
}

/// Layout of a packed lhs block, as [`super::kernel::PackedLhs`] reads it.
pub(super) struct LhsLayout {
    pub ars: usize,
    pub aps: usize,
    pub strip: usize,
}

/// Packs `A[r0 .. r0 + mc, p0 .. p0 + kc]` into strips of `mr` rows at `dst`
/// (`mc·kc` elements, rounded up to whole strips for column panels). A source
/// with contiguous rows is packed as row panels when `row_panels` is set
/// (see [`super::arch::Simd::ROW_PANELS`]), else interleaved into column
/// panels.
///
/// # Safety
/// The block must lie in the source; `dst` valid for
/// `mc.next_multiple_of(mr) · kc` writes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn pack_lhs<T: Element, A: LhsSource<T>>(
    src: &A,
    r0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    mr: usize,
    row_panels: bool,
    dst: *mut T,
) -> LhsLayout {
    // SAFETY (both branches): every write stays inside the strips, every
    // read inside the block.
    unsafe {
        if src.column_major() {
            // Column panels: strip s, k step p, row i at s·mr·kc + p·mr + i.
            let mut i0 = 0;
            while i0 < mc {
                let rows = mr.min(mc - i0);
                let strip = dst.add(i0 * kc);
                for p in 0..kc {
                    src.read_column(p0 + p, r0 + i0, rows, strip.add(p * mr));
                }
                i0 += mr;
            }
            LhsLayout {
                ars: 1,
                aps: mr,
                strip: mr * kc,
            }
        } else if row_panels {
            // Row panels: strip s, row i, k step p at s·mr·kc + i·kc + p,
            // each row one contiguous copy.
            let mut i0 = 0;
            while i0 < mc {
                let rows = mr.min(mc - i0);
                let strip = dst.add(i0 * kc);
                for i in 0..rows {
                    src.read_row(r0 + i0 + i, p0, kc, strip.add(i * kc));
                }
                i0 += mr;
            }
            LhsLayout {
                ars: kc,
                aps: 1,
                strip: mr * kc,
            }
        } else {
            // Rows read in runs through a small buffer, then interleaved into
            // the same column panels: the kernel then broadcasts `mr`
            // consecutive values per k step, one address and no stride
            // arithmetic (row panels, read in place, measured 10-15% slower
            // on AVX2).
            const RUN: usize = 256;
            let mut run = [T::default(); RUN];
            let mut i0 = 0;
            while i0 < mc {
                let rows = mr.min(mc - i0);
                let strip = dst.add(i0 * kc);
                let mut q = 0;
                while q < kc {
                    let len = RUN.min(kc - q);
                    for i in 0..rows {
                        src.read_row(r0 + i0 + i, p0 + q, len, run.as_mut_ptr());
                        for (p, &v) in run[..len].iter().enumerate() {
                            strip.add((q + p) * mr + i).write(v);
                        }
                    }
                    q += len;
                }
                i0 += mr;
            }
            LhsLayout {
                ars: 1,
                aps: mr,
                strip: mr * kc,
            }
        }
    }
}

/// Packs `B[p0 .. p0 + kc, j0 .. j0 + nc]` into micro-panels of `nr` columns
/// (`lanes`-rounded, zero-padded) at `dst`.
///
/// # Safety
/// The block must lie in `b`; `dst` valid for `kc · nc.next_multiple_of(lanes)`
/// writes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn pack_rhs<T: Element>(
    b: &Strided<T>,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    nr: usize,
    lanes: usize,
    dst: *mut T,
) {
    if b.cs == 1 {
        // Rows of B are contiguous: pack a run of panels at a time, row by
        // row, so each row is read as one contiguous run of [`RHS_RUN_BYTES`],
        // fetched a few rows ahead. Walking one panel down all `kc` rows
        // instead reads one line per row: on a wide B (the `[512, 32000]`
        // weights of a language-model head) every line is on its own page,
        // no prefetcher follows, and each is a full trip to memory.
        let run_cols = (RHS_RUN_BYTES / std::mem::size_of::<T>()).next_multiple_of(nr);
        let mut jr = 0;
        while jr < nc {
            let cols = run_cols.min(nc - jr);
            let run_bytes = cols * std::mem::size_of::<T>();
            for p in 0..kc {
                // SAFETY: every read lies in the block; panels before each
                // written one are full (`nr·kc` each), as `run_cols` is a
                // multiple of `nr`.
                unsafe {
                    if p + RHS_ROWS_AHEAD < kc {
                        let ahead = b.at(p0 + p + RHS_ROWS_AHEAD, j0 + jr).cast::<u8>();
                        for line in (0..run_bytes).step_by(64) {
                            crate::kernels::prefetch_l1(ahead.wrapping_add(line));
                        }
                    }
                    let src = b.at(p0 + p, j0 + jr);
                    let mut jp = 0;
                    while jp < cols {
                        let width = nr.min(cols - jp);
                        let panel_w = width.next_multiple_of(lanes);
                        let row = dst.add((jr + jp) * kc + p * panel_w);
                        copy_flushed(src.add(jp), 1, row, width);
                        super::kernel::zero_fill(row.add(width), panel_w - width);
                        jp += width;
                    }
                }
            }
            jr += cols;
        }
        return;
    }
    let mut jp = 0;
    while jp < nc {
        let width = nr.min(nc - jp);
        let panel_w = width.next_multiple_of(lanes);
        // SAFETY: panels before this one are full (`nr·kc` each); every read
        // lies in the block.
        unsafe {
            let panel = dst.add(jp * kc);
            if b.rs != 1 {
                for p in 0..kc {
                    let row = panel.add(p * panel_w);
                    copy_flushed(b.at(p0 + p, j0 + jp), b.cs, row, width);
                    super::kernel::zero_fill(row.add(width), panel_w - width);
                }
            } else if crate::kernels::strided::transpose_block(
                b.at(p0, j0 + jp),
                b.cs,
                panel,
                panel_w as isize,
                kc,
                width,
            ) {
                // Column-major, moved by register tiles; then flushed and
                // padded row by row (contiguous, so both vectorise).
                for p in 0..kc {
                    let row = std::slice::from_raw_parts_mut(panel.add(p * panel_w), panel_w);
                    for x in &mut row[..width] {
                        *x = x.flushed();
                    }
                    super::kernel::zero_fill(row.as_mut_ptr().add(width), panel_w - width);
                }
            } else {
                // Column-major: walk each column down its contiguous storage.
                for j in 0..width {
                    let col = b.at(p0, j0 + jp + j);
                    for p in 0..kc {
                        panel
                            .add(p * panel_w + j)
                            .write(col.add(p).read().flushed());
                    }
                }
                if panel_w > width {
                    for p in 0..kc {
                        super::kernel::zero_fill(panel.add(p * panel_w + width), panel_w - width);
                    }
                }
            }
        }
        jp += width;
    }
}

/// Whether the block `B[p0 .. p0 + kc, j0 .. j0 + nc]` of a matrix with
/// contiguous rows (either operand) holds a subnormal.
///
/// # Safety
/// The block must lie in `b`, and `b.cs == 1`.
#[inline(always)]
pub(super) unsafe fn has_subnormal<T: Element>(
    b: &Strided<T>,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
) -> bool {
    (0..kc).any(|p| {
        // SAFETY: a row of the block (the caller's contract).
        let row = unsafe { std::slice::from_raw_parts(b.at(p0 + p, j0), nc) };
        // Folded rather than `any`, so the row is one vectorised pass.
        row.iter().fold(false, |found, x| found | x.is_subnormal())
    })
}

/// Bytes of each row of a row-major B that [`pack_rhs`] copies in one pass.
const RHS_RUN_BYTES: usize = 1024;
/// Rows of B fetched ahead of the one being copied.
const RHS_ROWS_AHEAD: usize = 8;
