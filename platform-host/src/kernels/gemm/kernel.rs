//! The register-blocked micro-kernel and the loop over one packed block.
//!
//! [`tile`] computes one `MR × NV·LANES` block of `C` from a strip of the lhs
//! (`MR` rows, `kc` columns, addressed by a row stride and a k stride so
//! both packed layouts, row panels and column panels, work) and a packed
//! rhs micro-panel (`kc` rows of `NV` vectors). Per k step it loads the `NV`
//! rhs vectors once, broadcasts each of the `MR` lhs values and issues
//! `MR·NV` fused multiply-adds into accumulators that live in registers for
//! the whole strip. The k loop has no branches and no stores.
//!
//! The tile is then added to or written into `C` with whole-vector stores
//! when it is full and `C`'s columns are contiguous; partial tiles (the
//! right edge) and strided outputs go through a small buffer on the stack.
//! Bottom-edge tiles (fewer than `MR` rows) run an instance compiled for
//! exactly their row count, so no padding rows are computed.
//!
//! [`block`] walks a packed lhs block (`mc × kc`) against a packed rhs
//! block (`kc × nc`): rhs micro-panels outer, lhs strips inner, so each rhs
//! micro-panel stays in L1 while the lhs strips stream from L2.

use super::arch::Simd;
use super::Element;

/// Widest tile row any [`Simd`] implementation uses, in elements.
pub(super) const MAX_NR: usize = 64;

/// `C[0..MR, 0..n_eff] (+)= A·B` for one register tile.
///
/// # Safety
/// `a` must be valid for `MR` rows at stride `ars` and `kc` steps at stride
/// `aps`; `b` for `kc` rows of `NV·LANES` elements at stride `bps`; `c` for
/// `MR × n_eff` elements at strides `rsc`, `csc`; `n_eff ≤ NV·LANES`. The
/// instruction set of `S` must be available.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile<S: Simd, const MR: usize, const NV: usize>(
    kc: usize,
    a: *const S::T,
    ars: usize,
    aps: usize,
    b: *const S::T,
    bps: usize,
    c: *mut S::T,
    rsc: isize,
    csc: isize,
    n_eff: usize,
    accumulate: bool,
) {
    const { assert!(MR >= 1 && NV >= 1) };
    let lanes = S::LANES;
    // SAFETY (whole body): the caller guarantees every access below is in
    // bounds and that the instruction set is available.
    unsafe {
        if csc == 1 {
            // The tile of C is read or written only after the k loop; asking
            // for its lines now hides their latency behind the loop (C is
            // usually far from L1: its rows are a whole row of C apart).
            let bytes = n_eff * std::mem::size_of::<S::T>();
            for i in 0..MR {
                let row = c.offset(i as isize * rsc).cast::<u8>();
                let mut off = 0;
                while off < bytes {
                    crate::kernels::prefetch_l1(row.wrapping_add(off));
                    off += 64;
                }
                crate::kernels::prefetch_l1(row.wrapping_add(bytes.saturating_sub(1)));
            }
        }
        let mut acc = [[S::zero(); NV]; MR];
        let mut ap = a;
        let mut bp = b;
        for _ in 0..kc {
            let mut bv = [S::zero(); NV];
            for (v, slot) in bv.iter_mut().enumerate() {
                *slot = S::load(bp.add(v * lanes));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let av = S::splat(ap.add(i * ars));
                for (v, x) in row.iter_mut().enumerate() {
                    *x = S::fma(av, bv[v], *x);
                }
            }
            ap = ap.add(aps);
            bp = bp.add(bps);
        }
        if csc == 1 && n_eff == NV * lanes {
            for (i, row) in acc.iter().enumerate() {
                let out = c.offset(i as isize * rsc);
                for (v, x) in row.iter().enumerate() {
                    let p = out.add(v * lanes);
                    let val = if accumulate {
                        S::add(S::load(p), *x)
                    } else {
                        *x
                    };
                    S::store(p, val);
                }
            }
        } else {
            let mut buf = [[S::T::ZERO; MAX_NR]; MR];
            for (i, row) in acc.iter().enumerate() {
                for (v, x) in row.iter().enumerate() {
                    S::store(buf[i].as_mut_ptr().add(v * lanes), *x);
                }
            }
            for (i, row) in buf.iter().enumerate() {
                let out = c.offset(i as isize * rsc);
                for (j, &x) in row.iter().take(n_eff).enumerate() {
                    let p = out.offset(j as isize * csc);
                    *p = if accumulate { *p + x } else { x };
                }
            }
        }
    }
}

/// Selects the [`tile`] instance for `mr` rows (1..=6) and `NV` vectors.
///
/// # Safety
/// As [`tile`], with `mr` rows.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tile_rows<S: Simd, const NV: usize>(
    mr: usize,
    kc: usize,
    a: *const S::T,
    ars: usize,
    aps: usize,
    b: *const S::T,
    bps: usize,
    c: *mut S::T,
    rsc: isize,
    csc: isize,
    n_eff: usize,
    accumulate: bool,
) {
    macro_rules! go {
        ($m:literal) => {
            // SAFETY: forwarded from the caller.
            unsafe { tile::<S, $m, NV>(kc, a, ars, aps, b, bps, c, rsc, csc, n_eff, accumulate) }
        };
    }
    match mr {
        1 => go!(1),
        2 => go!(2),
        3 => go!(3),
        4 => go!(4),
        5 => go!(5),
        _ => go!(6),
    }
}

/// Where a packed lhs block lives and how it is laid out.
#[derive(Clone, Copy)]
pub(super) struct PackedLhs<T> {
    pub ptr: *const T,
    /// Rows in the block.
    pub rows: usize,
    /// Element stride between rows of a strip and between k steps.
    pub ars: usize,
    pub aps: usize,
    /// Element distance between consecutive `MR`-row strips.
    pub strip: usize,
}

/// Where a block's rhs micro-panels are.
#[derive(Clone, Copy)]
pub(super) enum Rhs<T> {
    /// Packed: `nc` columns as micro-panels of `S::NR` columns (the last one
    /// `ceil(rest / LANES)` vectors wide), each `kc` rows, one after the
    /// other.
    Packed(*const T),
    /// Read in place from a matrix whose rows are contiguous, `ld` elements
    /// apart, starting at the block's first element; `nc` is a multiple of
    /// `S::NR`.
    Direct { ptr: *const T, ld: usize },
}

/// Runs every tile of a `rows × nc` block of `C`.
///
/// # Safety
/// The lhs must be packed as described, the rhs as its variant says, and
/// `c` valid for `rows × nc` elements at strides `rsc`, `csc`; `S`'s
/// instruction set must be available.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn block<S: Simd>(
    kc: usize,
    lhs: PackedLhs<S::T>,
    rhs: Rhs<S::T>,
    nc: usize,
    c: *mut S::T,
    rsc: isize,
    csc: isize,
    accumulate: bool,
) {
    debug_assert!(S::MR <= 6 && S::NR <= MAX_NR);
    let mut j0 = 0;
    while j0 < nc {
        let width = S::NR.min(nc - j0);
        let nv = width.div_ceil(S::LANES);
        let panel_w = nv * S::LANES;
        // SAFETY: packed panels before this one are full, so it starts at
        // j0·kc; a direct one starts at column j0 of the first row.
        let (bp, bps) = unsafe {
            match rhs {
                Rhs::Packed(b) => (b.add(j0 * kc), panel_w),
                Rhs::Direct { ptr, ld } => (ptr.add(j0), ld),
            }
        };
        let mut i0 = 0;
        while i0 < lhs.rows {
            let mr = S::MR.min(lhs.rows - i0);
            // SAFETY: strip i0/MR of the packed lhs; tile (i0, j0) of C.
            unsafe {
                let ap = lhs.ptr.add(i0 / S::MR * lhs.strip);
                let cp = c.offset(i0 as isize * rsc + j0 as isize * csc);
                macro_rules! go {
                    ($v:literal) => {
                        tile_rows::<S, $v>(
                            mr, kc, ap, lhs.ars, lhs.aps, bp, bps, cp, rsc, csc, width, accumulate,
                        )
                    };
                }
                match nv {
                    1 => go!(1),
                    2 if S::NV >= 2 => go!(2),
                    3 if S::NV >= 3 => go!(3),
                    _ if S::NV >= 4 => go!(4),
                    _ => unreachable_tile(),
                }
            }
            i0 += mr;
        }
        j0 += width;
    }
}

#[cold]
fn unreachable_tile() {
    // `nv` never exceeds `S::NV`: a panel is at most `S::NR` wide.
    debug_assert!(false, "rhs panel wider than the tile");
}

/// Fills `n` elements at `dst` with zero.
///
/// # Safety
/// `dst` valid for `n` writes.
#[inline(always)]
pub(super) unsafe fn zero_fill<T: Element>(dst: *mut T, n: usize) {
    for j in 0..n {
        // SAFETY: the caller's contract.
        unsafe { dst.add(j).write(T::ZERO) };
    }
}
