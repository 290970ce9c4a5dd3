//! bf16 and 8-bit integer products on Intel AMX tiles: `tdpbf16ps`
//! (bf16, accumulated in f32), `tdpbssd` and `tdpbuud` (s8 × s8 and u8 × u8,
//! accumulated in i32, wrapping).
//!
//! AMX holds eight tile registers of up to 16 rows × 64 bytes. One
//! `tdpbf16ps` adds a 16 × 32 bf16 tile of A times a 32 × 16 bf16 tile of B
//! (stored as 16 rows of k pairs, "VNNI" order) into a 16 × 16 f32 tile of
//! C: 8192 multiply-adds, sixteen times an AVX-512 `vdpbf16ps`; the byte
//! forms take 64 k per tile (B in rows of k quads), twice that. Rust has no
//! AMX intrinsics, so the few instructions are `asm!`; the process first
//! asks Linux for the tile state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), once,
//! and a processor or kernel without it keeps the AVX-512 kernels.
//!
//! Layout: B goes into 16-column panels of 1 KiB VNNI tiles (k padded to
//! a whole tile with zeros), A into 32-row strips of two tiles per tile of
//! k. Per strip and pair of panels the k loop keeps four C tiles (32 × 32)
//! in tile registers: two A and two B loads per four products. Two
//! schedules:
//! - many rows: all of B is packed once (threads share the panels), then
//!   each thread packs its strips of A and runs them against its panels;
//! - few rows (packed A within [`STREAM_A_BYTES`]): each thread packs all
//!   of A, then streams its columns of B a pass of panels at a time
//!   ([`pass_panels`]), so B is read once and its packed copy never leaves
//!   the cache.
//!
//! Panels are packed several at a time, one k tile of each in turn, with
//! SSE2 unpacks ([`interleave_row`]). C tiles are stored straight into a
//! row-major result when whole, else through a buffer. Like `vdpbf16ps`,
//! `tdpbf16ps` treats subnormal inputs as zero and rounds to nearest even;
//! the sums differ from f32 multiply-adds only in their order. The integer sums are exact
//! modulo 2^32, as every integer product here.

use super::pack::Strided;
use super::words::WordSource;
use super::{split, StridedMut, PARALLEL_MIN_MACS};
use crate::runtime::pool::{compute_pool, run_tasks};
use std::sync::OnceLock;

/// Bytes of a tile.
const TILE_BYTES: usize = 1024;

/// Which AMX instructions the processor has (and Linux let the process use).
#[derive(Clone, Copy, Debug, Default)]
pub struct Support {
    pub bf16: bool,
    pub int8: bool,
}

/// What this process may use, asked once. `HOST_AMX=0` turns it all off.
pub fn support() -> Support {
    static U: OnceLock<Support> = OnceLock::new();
    *U.get_or_init(|| {
        if std::env::var_os("HOST_AMX").is_some_and(|v| v == "0") {
            return Support::default();
        }
        detect()
    })
}

/// Whether the processor has AMX-BF16 and Linux granted the tile state.
pub fn usable() -> bool {
    support().bf16
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Support {
    use std::arch::x86_64::__cpuid_count;
    let leaf7 = __cpuid_count(7, 0);
    let amx_bf16 = leaf7.edx >> 22 & 1 == 1;
    let amx_tile = leaf7.edx >> 24 & 1 == 1;
    let amx_int8 = leaf7.edx >> 25 & 1 == 1;
    if !amx_tile {
        return Support::default();
    }
    // arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): 0 when granted.
    let ret: i64;
    // SAFETY: a system call with no memory operands; it clobbers rcx and
    // r11 as every `syscall` does.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") 158i64 => ret,
            in("rdi") 0x1023i64,
            in("rsi") 18i64,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    Support {
        bf16: ret == 0 && amx_bf16,
        int8: ret == 0 && amx_int8,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Support {
    Support::default()
}

/// The lanes of one AMX element type: bf16 bits or bytes.
pub trait Lane: Copy + Default + Send + Sync + 'static {
    /// k per 4-byte group of a B tile row (pairs or quads).
    const GROUP: usize;
    /// k per tile row (64 bytes).
    const KB: usize = 64 / size_of::<Self>();
    /// The operand's lane.
    fn of<E: WordSource>(e: E) -> Self;
    /// A lane read straight from memory made what `of` gives.
    fn clean(self) -> Self;
}

impl Lane for u16 {
    const GROUP: usize = 2;
    #[inline(always)]
    fn of<E: WordSource>(e: E) -> u16 {
        e.lane16()
    }
    /// A bf16's bits with a subnormal flushed to zero of its sign (as
    /// `WordSource::lane16`), without a branch so the packing loops
    /// vectorise.
    #[inline(always)]
    fn clean(self) -> u16 {
        let normal = ((self & 0x7f80 != 0) as u16).wrapping_neg();
        self & (normal | 0x8000)
    }
}

impl Lane for u8 {
    const GROUP: usize = 4;
    #[inline(always)]
    fn of<E: WordSource>(e: E) -> u8 {
        e.lane8()
    }
    #[inline(always)]
    fn clean(self) -> u8 {
        self
    }
}

/// The tile product instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insn {
    /// `tdpbf16ps`: bf16 pairs into f32.
    Bf16,
    /// `tdpbssd`: signed byte quads into i32.
    Ssd,
    /// `tdpbuud`: unsigned byte quads into i32.
    Uud,
}

/// The tile configuration: palette 1, eight tiles of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

const CONFIG: TileConfig = {
    let mut c = [0u8; 64];
    c[0] = 1;
    let mut t = 0;
    while t < 8 {
        c[16 + 2 * t] = 64;
        c[48 + t] = 16;
        t += 1;
    }
    TileConfig(c)
};

/// `n` operands at `p` as their lanes (the bits, before `clean`).
///
/// # Safety
/// `p` valid for `n` reads; `E` is as wide as `L`.
unsafe fn lanes<'a, E, L>(p: *const E, n: usize) -> &'a [L] {
    debug_assert_eq!(size_of::<E>(), size_of::<L>());
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p.cast::<L>(), n) }
}

/// Most bytes of packed A for which a product streams B (each thread packs
/// all of A once and then B a pair of panels at a time, each pair used by
/// every strip while it is in L1) instead of packing all of B first: with
/// few rows, B is most of the traffic, and a packed copy of it written to
/// memory and read back (a 64-row product by a 4096 × 4096 bf16 B spent
/// most of its time there) costs more than the product.
const STREAM_A_BYTES: usize = 1 << 20;

/// `C = A·B` on AMX tiles with `insn`, for operands whose lanes are `L`
/// (bf16 bits with subnormals flushed, or bytes), `C` as f32 or i32 bits.
///
/// # Safety
/// As [`super::words::word_gemm`]; [`support`] must have `insn`'s kind,
/// and `E` must be as wide as `L`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm<E: WordSource, L: Lane>(
    insn: Insn,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
    parallel: bool,
) {
    assert_eq!(size_of::<E>(), size_of::<L>());
    let tile_lanes = TILE_BYTES / size_of::<L>();
    let kbs = k.div_ceil(L::KB);
    let panels = n.div_ceil(16);
    let threads = compute_pool().current_num_threads();
    let parallel = parallel && threads > 1 && m * n * k >= PARALLEL_MIN_MACS;
    let job = Job {
        insn,
        k,
        n,
        kbs,
        a,
        b,
        c,
        _lane: std::marker::PhantomData::<L>,
    };
    if m.div_ceil(32) * kbs * 2 * TILE_BYTES <= STREAM_A_BYTES {
        // Threads take runs of column pairs.
        let pairs = n.div_ceil(32);
        let per = pairs.div_ceil(if parallel { threads } else { 1 });
        let part = |t: usize| {
            let cols = (t * per * 32).min(n)..((t + 1) * per * 32).min(n);
            if !cols.is_empty() {
                // SAFETY: disjoint column ranges of C; AMX is usable.
                unsafe { job.run_streaming(m, cols) };
            }
        };
        match pairs.div_ceil(per) {
            0 => {}
            1 => part(0),
            tasks => run_tasks(tasks, part),
        }
        return;
    }
    // B as panels of VNNI tiles, zero where a tile passes k or n.
    let mut packed: Vec<L> = vec![L::default(); panels * kbs * tile_lanes];
    {
        let dst = packed.as_mut_ptr() as usize;
        // Several panels at a time, k tile by k tile (see `pass_panels`).
        let pass = pass_panels::<L>(kbs);
        let pack_panels = |ps: std::ops::Range<usize>| {
            let mut p0 = ps.start;
            while p0 < ps.end {
                let p1 = (p0 + pass).min(ps.end);
                for kb in 0..kbs {
                    for p in p0..p1 {
                        // SAFETY: panel p's tile kb lies in the buffer,
                        // zeroed.
                        unsafe {
                            job.pack_b_tile(p, kb, (dst as *mut L).add((p * kbs + kb) * tile_lanes))
                        };
                    }
                }
                p0 = p1;
            }
        };
        if parallel && panels > 1 && k * n >= 1 << 16 {
            let per = panels.div_ceil(threads).next_multiple_of(2);
            run_tasks(panels.div_ceil(per), |t| {
                pack_panels(t * per..((t + 1) * per).min(panels))
            });
        } else {
            pack_panels(0..panels);
        }
    }
    let (tm, tn) = if parallel {
        split(m, n, k, threads, 32, 32)
    } else {
        (1, 1)
    };
    let rows_per = m.div_ceil(32).div_ceil(tm) * 32;
    let cols_per = n.div_ceil(32).div_ceil(tn) * 32;
    let part = |t: usize| {
        let (pi, pj) = (t / tn, t % tn);
        let rows = (pi * rows_per).min(m)..((pi + 1) * rows_per).min(m);
        let cols = (pj * cols_per).min(n)..((pj + 1) * cols_per).min(n);
        if !rows.is_empty() && !cols.is_empty() {
            // SAFETY: disjoint rectangles of C; AMX is usable; the packed
            // B holds every panel.
            unsafe { job.run(rows, cols, packed.as_ptr()) };
        }
    };
    if tm * tn == 1 {
        part(0);
    } else {
        run_tasks(tm * tn, part);
    }
}

/// One 64-byte VNNI tile row from `L::GROUP` rows of B, 16 columns each
/// (`row(t)` the first byte of row `t`): column `j`'s group of lanes at
/// bytes `4j .. 4j + 4`, bf16 lanes cleaned as [`Lane::clean`]. The
/// element-by-element interleave took most of a 256-row int8 product's
/// time; byte and word unpacks (SSE2, always present) do 64 bytes at once.
///
/// # Safety
/// Each row valid for 16 lanes, `dst` for 64 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_row<L: Lane>(row: impl Fn(usize) -> *const u8, dst: *mut u8) {
    use std::arch::x86_64::*;
    // SAFETY: unaligned loads and stores inside the caller's ranges; SSE2
    // is part of x86-64.
    unsafe {
        let load = |p: *const u8| _mm_loadu_si128(p.cast());
        let out = if size_of::<L>() == 1 {
            let (r0, r1, r2, r3) = (load(row(0)), load(row(1)), load(row(2)), load(row(3)));
            let (lo01, hi01) = (_mm_unpacklo_epi8(r0, r1), _mm_unpackhi_epi8(r0, r1));
            let (lo23, hi23) = (_mm_unpacklo_epi8(r2, r3), _mm_unpackhi_epi8(r2, r3));
            [
                _mm_unpacklo_epi16(lo01, lo23),
                _mm_unpackhi_epi16(lo01, lo23),
                _mm_unpacklo_epi16(hi01, hi23),
                _mm_unpackhi_epi16(hi01, hi23),
            ]
        } else {
            // bf16: a subnormal (zero exponent) keeps only its sign.
            let clean = |v: __m128i| {
                let zero_exp = _mm_cmpeq_epi16(
                    _mm_and_si128(v, _mm_set1_epi16(0x7f80)),
                    _mm_setzero_si128(),
                );
                let keep = _mm_or_si128(
                    _mm_andnot_si128(zero_exp, _mm_set1_epi16(-1)),
                    _mm_set1_epi16(i16::MIN),
                );
                _mm_and_si128(v, keep)
            };
            let (a0, a1) = (clean(load(row(0))), clean(load(row(0).add(16))));
            let (b0, b1) = (clean(load(row(1))), clean(load(row(1).add(16))));
            [
                _mm_unpacklo_epi16(a0, b0),
                _mm_unpackhi_epi16(a0, b0),
                _mm_unpacklo_epi16(a1, b1),
                _mm_unpackhi_epi16(a1, b1),
            ]
        };
        for (q, v) in out.into_iter().enumerate() {
            _mm_storeu_si128(dst.add(16 * q).cast(), v);
        }
    }
}

/// Panels of B packed in one pass over k: an even count from 2 to 16, as
/// many as fit 256 KiB of bytes or 64 KiB of bf16. A row-major B is read
/// a pass's columns of each row at once, and the rows of a wide B lie a
/// page or more apart: a pass of two byte panels (32 bytes of a row) met a
/// TLB miss per row for every 32 columns, which took most of a 64-row
/// product by a 4096 × 4096 int8 B. A bf16 tile carries half the
/// multiply-adds of a byte tile, so its product gains less from fewer
/// misses than it loses when the panels it reads are further out in cache
/// (a 256-row bf16 product ran 8% slower with 256 KiB passes).
fn pass_panels<L: Lane>(kbs: usize) -> usize {
    let budget = if size_of::<L>() == 1 {
        256 << 10
    } else {
        64 << 10
    };
    (budget / (kbs.max(1) * TILE_BYTES)).clamp(2, 16) & !1
}

/// One product's operands and shape, shared by the threads that compute
/// its rectangles.
struct Job<E, L> {
    insn: Insn,
    k: usize,
    n: usize,
    kbs: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
    _lane: std::marker::PhantomData<L>,
}

// SAFETY: threads write disjoint rectangles of C and only read the rest.
unsafe impl<E: Sync, L: Sync> Sync for Job<E, L> {}

/// The k loop over one strip and pair of panels: four C tiles (tmm0-3)
/// zeroed, then per tile of k two A tiles (tmm4, tmm5, 1 KiB apart) and two
/// B tiles (tmm6, tmm7) multiplied crosswise with `$insn`.
macro_rules! k_loop {
    ($name:ident, $insn:literal) => {
        /// # Safety
        /// Tiles configured; `a` holds `kbs` pairs of A tiles, `b0` and
        /// `b1` `kbs` B tiles each; `kbs > 0`.
        unsafe fn $name(a: *const u8, b0: *const u8, b1: *const u8, kbs: usize) {
            // SAFETY: the caller's contract.
            unsafe {
                std::arch::asm!(
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    "tilezero tmm3",
                    "2:",
                    "tileloadd tmm4, [{a} + {s}*1]",
                    "tileloadd tmm5, [{a} + {s}*1 + 1024]",
                    "tileloadd tmm6, [{b0} + {s}*1]",
                    "tileloadd tmm7, [{b1} + {s}*1]",
                    concat!($insn, " tmm0, tmm4, tmm6"),
                    concat!($insn, " tmm1, tmm4, tmm7"),
                    concat!($insn, " tmm2, tmm5, tmm6"),
                    concat!($insn, " tmm3, tmm5, tmm7"),
                    "add {a}, 2048",
                    "add {b0}, 1024",
                    "add {b1}, 1024",
                    "dec {n}",
                    "jnz 2b",
                    a = inout(reg) a => _,
                    b0 = inout(reg) b0 => _,
                    b1 = inout(reg) b1 => _,
                    n = inout(reg) kbs => _,
                    s = in(reg) 64usize,
                    options(nostack),
                );
            }
        }
    };
}
k_loop!(k_loop_bf16, "tdpbf16ps");
k_loop!(k_loop_ssd, "tdpbssd");
k_loop!(k_loop_uud, "tdpbuud");

/// Stores the four C tiles (tmm0-3, a 32 × 32 block) at `c`, rows `ld`
/// lanes apart.
///
/// # Safety
/// Tiles configured and computed; `c` valid for 32 rows of 32 lanes at
/// `ld`.
unsafe fn store_tiles(c: *mut u32, ld: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        let lower = c.add(16 * ld);
        std::arch::asm!(
            "tilestored [{c0} + {s}*1], tmm0",
            "tilestored [{c1} + {s}*1], tmm1",
            "tilestored [{c2} + {s}*1], tmm2",
            "tilestored [{c3} + {s}*1], tmm3",
            c0 = in(reg) c,
            c1 = in(reg) c.add(16),
            c2 = in(reg) lower,
            c3 = in(reg) lower.add(16),
            s = in(reg) ld * 4,
            options(nostack),
        );
    }
}

impl<E: WordSource, L: Lane> Job<E, L> {
    /// Packs tile `kb` of panel `p` of B into `tile` as VNNI rows: tile
    /// row r holds, for each of 16 columns, the group k = group·r ..
    /// group·(r + 1). Lanes past k or n are not written.
    ///
    /// # Safety
    /// `p` and `kb` inside B's panels and k tiles; `tile` valid for 1 KiB.
    unsafe fn pack_b_tile(&self, p: usize, kb: usize, tile: *mut L) {
        let (k, b, kb_len, group) = (self.k, self.b, L::KB, L::GROUP);
        let cols = 16.min(self.n - p * 16);
        if b.cs == 1 {
            // Rows contiguous: interleave runs of `group` rows.
            for r in 0..16 {
                let k0 = kb * kb_len + group * r;
                if k0 >= k {
                    break;
                }
                #[cfg(target_arch = "x86_64")]
                if cols == 16 && k0 + group <= k {
                    // SAFETY: rows k0 .. k0 + group lie in B with
                    // 16 columns from p·16; tile row r has 64 bytes.
                    unsafe {
                        interleave_row::<L>(
                            |t| b.at(k0 + t, p * 16).cast::<u8>(),
                            tile.add(r * kb_len).cast::<u8>(),
                        )
                    };
                    continue;
                }
                // SAFETY: tile row r; `cols` elements of each row
                // k0 + t below k, from column p·16.
                unsafe {
                    let out = std::slice::from_raw_parts_mut(tile.add(r * kb_len), group * cols);
                    for t in 0..group.min(k - k0) {
                        let row: &[L] = lanes(b.at(k0 + t, p * 16), cols);
                        for (j, &v) in row.iter().enumerate() {
                            out[j * group + t] = v.clean();
                        }
                    }
                }
            }
            return;
        }
        if b.rs == 1 {
            // Columns contiguous: each column's groups are runs.
            let len = kb_len.min(k - kb * kb_len);
            for j in 0..cols {
                // SAFETY: `len` elements of column p·16 + j from
                // the tile's first k; the group slots of column j.
                unsafe {
                    let col: &[L] = lanes(b.at(kb * kb_len, p * 16 + j), len);
                    for (q, &v) in col.iter().enumerate() {
                        tile.add((q / group) * kb_len + group * j + q % group)
                            .write(v.clean());
                    }
                }
            }
            return;
        }
        for q in 0..kb_len.min(k - kb * kb_len) {
            let kk = kb * kb_len + q;
            for j in 0..cols {
                // SAFETY: (kk, p·16 + j) lies in B; the slot in the tile.
                unsafe {
                    let v = b.at(kk, p * 16 + j).read();
                    tile.add((q / group) * kb_len + group * j + q % group)
                        .write(L::of(v));
                }
            }
        }
    }

    /// Packs rows `i0 .. i0 + h` (h ≤ 32) of A into `sp`: per k tile, two
    /// A tiles (rows 0-15 and 16-31), zero below the rows and past k.
    ///
    /// # Safety
    /// The rows lie in A; `sp` valid for `kbs` pairs of tiles.
    unsafe fn pack_a_strip(&self, i0: usize, h: usize, sp: *mut L) {
        let (k, kbs, kb_len) = (self.k, self.kbs, L::KB);
        let tile_lanes = TILE_BYTES / size_of::<L>();
        if h < 32 || k % kb_len != 0 {
            // SAFETY: inside the strip buffer.
            unsafe { std::ptr::write_bytes(sp, 0, kbs * 2 * tile_lanes) };
        }
        for i in 0..h {
            let (half, r) = (i / 16, i % 16);
            for kb in 0..kbs {
                // SAFETY: the tile's row r.
                let row = unsafe { sp.add((kb * 2 + half) * tile_lanes + r * kb_len) };
                let len = kb_len.min(k - kb * kb_len);
                if self.a.cs == 1 {
                    // SAFETY: `len` elements of row i0 + i from the
                    // tile's first k; the tile row has `kb_len`.
                    unsafe {
                        let src: &[L] = lanes(self.a.at(i0 + i, kb * kb_len), len);
                        let dst = std::slice::from_raw_parts_mut(row, len);
                        for (d, &v) in dst.iter_mut().zip(src) {
                            *d = v.clean();
                        }
                    }
                    continue;
                }
                for q in 0..len {
                    // SAFETY: (i0 + i, kb·kb_len + q) lies in A.
                    unsafe {
                        row.add(q)
                            .write(L::of(self.a.at(i0 + i, kb * kb_len + q).read()))
                    };
                }
            }
        }
    }

    /// `C[i0 .. i0 + h, j0 .. j0 + w]` (h, w ≤ 32) from a packed A strip and
    /// one or two packed B panels (`b1` is read only when `w > 16`).
    ///
    /// # Safety
    /// Tiles configured; `sp` holds `kbs` pairs of A tiles, `b0` and `b1`
    /// `kbs` B tiles each; the block of C is this thread's.
    #[allow(clippy::too_many_arguments)]
    unsafe fn block(
        &self,
        sp: *const L,
        b0: *const L,
        b1: *const L,
        (i0, h): (usize, usize),
        (j0, w): (usize, usize),
        out: &mut [[f32; 32]; 32],
    ) {
        let b1 = if w > 16 { b1 } else { b0 };
        // SAFETY: the caller's contract.
        unsafe {
            let (a, b0, b1) = (sp.cast::<u8>(), b0.cast::<u8>(), b1.cast::<u8>());
            match self.insn {
                Insn::Bf16 => k_loop_bf16(a, b0, b1, self.kbs),
                Insn::Ssd => k_loop_ssd(a, b0, b1, self.kbs),
                Insn::Uud => k_loop_uud(a, b0, b1, self.kbs),
            }
        }
        if h == 32 && w == 32 && self.c.cs == 1 {
            // SAFETY: C's rows i0..i0 + 32, columns j0..j0 + 32, contiguous
            // along the row, this thread's.
            unsafe {
                let base = self.c.ptr.offset(i0 as isize * self.c.rs + j0 as isize);
                store_tiles(base.cast(), self.c.rs as usize);
            }
            return;
        }
        // SAFETY: `out` is 32 rows of 32 lanes.
        unsafe { store_tiles(out.as_mut_ptr().cast(), 32) };
        for (i, row) in out.iter().enumerate().take(h) {
            for (j, v) in row.iter().enumerate().take(w) {
                // SAFETY: (i0 + i, j0 + j) lies in this thread's block.
                unsafe {
                    self.c
                        .ptr
                        .offset((i0 + i) as isize * self.c.rs + (j0 + j) as isize * self.c.cs)
                        .write(v.to_bits())
                };
            }
        }
    }

    /// One rectangle of C on this thread, from all of B packed at `packed`.
    ///
    /// # Safety
    /// The rectangle is this thread's alone; AMX is usable. `cols` starts
    /// at a multiple of 32; `packed` holds every panel's `kbs` tiles.
    unsafe fn run(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        packed: *const L,
    ) {
        let tile_lanes = TILE_BYTES / size_of::<L>();
        let panel = |p: usize| packed.wrapping_add(p * self.kbs * tile_lanes);
        let mut strip = AlignedTiles::<L>::new(self.kbs * 2);
        let sp = strip.as_mut_ptr();
        let mut out = [[0f32; 32]; 32];
        // SAFETY: the processor has AMX and the process its tile state.
        unsafe { std::arch::asm!("ldtilecfg [{0}]", in(reg) CONFIG.0.as_ptr(), options(nostack)) };
        let mut i0 = rows.start;
        while i0 < rows.end {
            let h = 32.min(rows.end - i0);
            // SAFETY: rows of A; the strip buffer.
            unsafe { self.pack_a_strip(i0, h, sp) };
            let mut j0 = cols.start;
            while j0 < cols.end {
                let w = 32.min(cols.end - j0);
                let p = j0 / 16;
                // SAFETY: the strip and panels hold their tiles; the block
                // is this thread's.
                unsafe { self.block(sp, panel(p), panel(p + 1), (i0, h), (j0, w), &mut out) };
                j0 += w;
            }
            i0 += h;
        }
        // SAFETY: gives the tile state back (the next user configures it).
        unsafe { std::arch::asm!("tilerelease", options(nostack)) };
    }

    /// Columns `cols` of all `m` rows of C on this thread: all of A packed
    /// once, then B a pair of panels at a time, each pair multiplied by
    /// every strip while it is in cache (see [`STREAM_A_BYTES`]).
    ///
    /// # Safety
    /// The columns are this thread's alone; AMX is usable. `cols` starts at
    /// a multiple of 32.
    unsafe fn run_streaming(&self, m: usize, cols: std::ops::Range<usize>) {
        let (kbs, tile_lanes) = (self.kbs, TILE_BYTES / size_of::<L>());
        let strips = m.div_ceil(32);
        let mut a = AlignedTiles::<L>::new(strips * kbs * 2);
        let pass = pass_panels::<L>(kbs);
        let mut panels_buf = AlignedTiles::<L>::new(pass * kbs);
        let (ap, bp) = (a.as_mut_ptr(), panels_buf.as_mut_ptr());
        for s in 0..strips {
            // SAFETY: rows of A; strip s of the buffer.
            unsafe {
                self.pack_a_strip(s * 32, 32.min(m - s * 32), ap.add(s * kbs * 2 * tile_lanes))
            };
        }
        let mut out = [[0f32; 32]; 32];
        // SAFETY: the processor has AMX and the process its tile state.
        unsafe { std::arch::asm!("ldtilecfg [{0}]", in(reg) CONFIG.0.as_ptr(), options(nostack)) };
        let mut c0 = cols.start;
        while c0 < cols.end {
            // One pass: up to `pass` panels packed, then every pair of them
            // times every strip.
            let c1 = (c0 + pass * 16).min(cols.end);
            let (p0, panels) = (c0 / 16, (c1 - c0).div_ceil(16));
            // The buffer starts zeroed and is never cleared between passes:
            // lanes past k are written by no pass (and must stay zero, or a
            // NaN there would meet A's zero padding), while lanes past n
            // may hold an earlier pass's columns, which only reach columns
            // of C past n, never stored.
            for kb in 0..kbs {
                for q in 0..panels {
                    // SAFETY: panel p0 + q's tile kb; its slot in the pass.
                    unsafe { self.pack_b_tile(p0 + q, kb, bp.add((q * kbs + kb) * tile_lanes)) };
                }
            }
            let mut j0 = c0;
            while j0 < c1 {
                let w = 32.min(c1 - j0);
                let q = (j0 - c0) / 16;
                for s in 0..strips {
                    let i0 = s * 32;
                    // SAFETY: strip s of A and the pass's panels hold their
                    // tiles (the second read only when w > 16); the block is
                    // this thread's.
                    unsafe {
                        self.block(
                            ap.add(s * kbs * 2 * tile_lanes),
                            bp.add(q * kbs * tile_lanes),
                            bp.add((q + 1) * kbs * tile_lanes),
                            (i0, 32.min(m - i0)),
                            (j0, w),
                            &mut out,
                        )
                    };
                }
                j0 += w;
            }
            c0 = c1;
        }
        // SAFETY: gives the tile state back (the next user configures it).
        unsafe { std::arch::asm!("tilerelease", options(nostack)) };
    }
}

/// Room for `tiles` tiles of lanes `L`, 64-byte aligned for the tile loads.
struct AlignedTiles<L> {
    buf: Vec<L>,
    off: usize,
}

impl<L: Lane> AlignedTiles<L> {
    fn new(tiles: usize) -> Self {
        let lanes = tiles * TILE_BYTES / size_of::<L>();
        let buf = vec![L::default(); lanes + 64];
        let off = buf.as_ptr().align_offset(64);
        AlignedTiles { buf, off }
    }

    fn as_mut_ptr(&mut self) -> *mut L {
        self.buf[self.off..].as_mut_ptr()
    }
}
