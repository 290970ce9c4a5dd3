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
//! Layout: B is packed once per product into 16-column panels of 1 KiB
//! tiles (k padded to a whole tile with zeros); each thread packs 32-row
//! strips of A into two tiles per tile of k. Per strip and pair of panels the k loop keeps
//! four C tiles (32 × 32) in tile registers: two A and two B loads per four
//! products. C tiles are stored straight into a row-major f32 result when
//! whole, else through a buffer. Like `vdpbf16ps`, `tdpbf16ps` treats
//! subnormal inputs as zero and rounds to nearest even; the sums differ
//! from f32 multiply-adds only in their order. The integer sums are exact
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

/// Packed B: 16-column panels, each `kbs` tiles of 1 KiB.
struct PackedB<L> {
    data: Vec<L>,
    kbs: usize,
}

impl<L> PackedB<L> {
    fn panel(&self, p: usize) -> *const L {
        self.data[p * self.kbs * TILE_BYTES / size_of::<L>()..].as_ptr()
    }
}

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
    let (kb_len, group) = (L::KB, L::GROUP);
    let tile_lanes = TILE_BYTES / size_of::<L>();
    let kbs = k.div_ceil(kb_len);
    let panels = n.div_ceil(16);
    // B as panels of VNNI tiles: tile row r holds, for each of 16 columns,
    // the group k = group·r .. group·(r + 1).
    let mut packed = PackedB {
        data: vec![L::default(); panels * kbs * tile_lanes],
        kbs,
    };
    {
        let dst = packed.data.as_mut_ptr() as usize;
        let pack_panel = |p: usize| {
            let dst = dst as *mut L;
            let cols = 16.min(n - p * 16);
            for kb in 0..kbs {
                // SAFETY: panel p's tile kb lies in the buffer.
                let tile = unsafe { dst.add((p * kbs + kb) * tile_lanes) };
                if b.cs == 1 {
                    // Rows contiguous: interleave runs of `group` rows.
                    for r in 0..16 {
                        let k0 = kb * kb_len + group * r;
                        if k0 >= k {
                            break;
                        }
                        // SAFETY: tile row r; `cols` elements of each row
                        // k0 + t below k, from column p·16.
                        unsafe {
                            let out =
                                std::slice::from_raw_parts_mut(tile.add(r * kb_len), group * cols);
                            for t in 0..group.min(k - k0) {
                                let row: &[L] = lanes(b.at(k0 + t, p * 16), cols);
                                for (j, &v) in row.iter().enumerate() {
                                    out[j * group + t] = v.clean();
                                }
                            }
                        }
                    }
                    continue;
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
                    continue;
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
        };
        let threads = compute_pool().current_num_threads();
        if parallel && threads > 1 && panels > 1 && k * n >= 1 << 16 {
            let per = panels.div_ceil(threads);
            run_tasks(panels.div_ceil(per), |t| {
                for p in t * per..((t + 1) * per).min(panels) {
                    pack_panel(p);
                }
            });
        } else {
            (0..panels).for_each(pack_panel);
        }
    }
    let threads = compute_pool().current_num_threads();
    let (tm, tn) = if parallel && threads > 1 && m * n * k >= PARALLEL_MIN_MACS {
        split(m, n, k, threads, 32, 32)
    } else {
        (1, 1)
    };
    let rows_per = m.div_ceil(32).div_ceil(tm) * 32;
    let cols_per = n.div_ceil(32).div_ceil(tn) * 32;
    let job = Job {
        insn,
        k,
        kbs,
        a,
        c,
        packed: &packed,
    };
    let part = |t: usize| {
        let (pi, pj) = (t / tn, t % tn);
        let rows = (pi * rows_per).min(m)..((pi + 1) * rows_per).min(m);
        let cols = (pj * cols_per).min(n)..((pj + 1) * cols_per).min(n);
        if !rows.is_empty() && !cols.is_empty() {
            // SAFETY: disjoint rectangles of C; AMX is usable.
            unsafe { job.run(rows, cols) };
        }
    };
    if tm * tn == 1 {
        part(0);
    } else {
        run_tasks(tm * tn, part);
    }
}

struct Job<'a, E, L> {
    insn: Insn,
    k: usize,
    kbs: usize,
    a: Strided<E>,
    c: StridedMut<u32>,
    packed: &'a PackedB<L>,
}

// SAFETY: threads write disjoint rectangles of C and only read the rest.
unsafe impl<E: Sync, L: Sync> Sync for Job<'_, E, L> {}

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

impl<E: WordSource, L: Lane> Job<'_, E, L> {
    /// One rectangle of C on this thread.
    ///
    /// # Safety
    /// The rectangle is this thread's alone; AMX is usable. `cols` starts
    /// at a multiple of 32.
    unsafe fn run(&self, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) {
        let (k, kbs, kb_len) = (self.k, self.kbs, L::KB);
        let tile_lanes = TILE_BYTES / size_of::<L>();
        // Two A tiles per k tile: rows 0-15 and 16-31 of the strip.
        let mut strip = vec![L::default(); kbs * 2 * tile_lanes + 64];
        // 64-byte alignment for the tile loads.
        let off = strip.as_ptr().align_offset(64);
        let sp = strip[off..].as_mut_ptr();
        let mut out = [[0f32; 32]; 32];
        // SAFETY: the processor has AMX and the process its tile state.
        unsafe { std::arch::asm!("ldtilecfg [{0}]", in(reg) CONFIG.0.as_ptr(), options(nostack)) };
        let mut i0 = rows.start;
        while i0 < rows.end {
            let h = 32.min(rows.end - i0);
            // Pack rows i0..i0 + h (zeros below and past k).
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
            let mut j0 = cols.start;
            while j0 < cols.end {
                let w = 32.min(cols.end - j0);
                let p = j0 / 16;
                let pair = w > 16;
                let b0 = self.packed.panel(p);
                let b1 = if pair { self.packed.panel(p + 1) } else { b0 };
                // SAFETY: the strip holds kbs pairs of A tiles, each panel
                // kbs B tiles; the tiles are configured.
                unsafe {
                    let (a, b0, b1) = (
                        sp.cast::<u8>().cast_const(),
                        b0.cast::<u8>(),
                        b1.cast::<u8>(),
                    );
                    match self.insn {
                        Insn::Bf16 => k_loop_bf16(a, b0, b1, kbs),
                        Insn::Ssd => k_loop_ssd(a, b0, b1, kbs),
                        Insn::Uud => k_loop_uud(a, b0, b1, kbs),
                    }
                }
                let whole = h == 32 && w == 32 && self.c.cs == 1;
                if whole {
                    // SAFETY: C's rows i0..i0 + 32, columns j0..j0 + 32,
                    // contiguous along the row, this thread's.
                    unsafe {
                        let base = self.c.ptr.offset(i0 as isize * self.c.rs + j0 as isize);
                        store_tiles(base.cast(), self.c.rs as usize);
                    }
                } else {
                    // SAFETY: `out` is 32 rows of 32 lanes.
                    unsafe { store_tiles(out.as_mut_ptr().cast(), 32) };
                    for (i, row) in out.iter().enumerate().take(h) {
                        for (j, v) in row.iter().enumerate().take(w) {
                            // SAFETY: (i0 + i, j0 + j) lies in this thread's rectangle.
                            unsafe {
                                self.c
                                    .ptr
                                    .offset(
                                        (i0 + i) as isize * self.c.rs
                                            + (j0 + j) as isize * self.c.cs,
                                    )
                                    .write(v.to_bits())
                            };
                        }
                    }
                }
                j0 += w;
            }
            i0 += h;
        }
        // SAFETY: gives the tile state back (the next user configures it).
        unsafe { std::arch::asm!("tilerelease", options(nostack)) };
    }
}
