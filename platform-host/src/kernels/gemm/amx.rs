//! bf16 products on Intel AMX tiles (`tdpbf16ps`), accumulated in f32.
//!
//! AMX holds eight tile registers of up to 16 rows × 64 bytes. One
//! `tdpbf16ps` adds a 16 × 32 bf16 tile of A times a 32 × 16 bf16 tile of B
//! (stored as 16 rows of k pairs, "VNNI" order) into a 16 × 16 f32 tile of
//! C: 8192 multiply-adds, sixteen times an AVX-512 `vdpbf16ps`. Rust has no
//! AMX intrinsics, so the few instructions are `asm!`; the process first
//! asks Linux for the tile state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), once,
//! and a processor or kernel without it keeps the AVX-512 kernels.
//!
//! Layout: B is packed once per product into 16-column panels of 1 KiB
//! tiles (k padded to 32 with zeros); each thread packs 32-row strips of A
//! into two tiles per 32 k. Per strip and pair of panels the k loop keeps
//! four C tiles (32 × 32) in tile registers: two A and two B loads per four
//! products. C tiles are stored straight into a row-major f32 result when
//! whole, else through a buffer. Like `vdpbf16ps`, `tdpbf16ps` treats
//! subnormal inputs as zero and rounds to nearest even; the sums differ
//! from f32 multiply-adds only in their order.

use super::pack::Strided;
use super::words::WordSource;
use super::{split, StridedMut, PARALLEL_MIN_MACS};
use crate::runtime::pool::{compute_pool, run_tasks};
use std::sync::OnceLock;

/// Bytes of a tile row, and rows of a tile.
const TILE_BYTES: usize = 1024;
/// k per tile (bf16 pairs in 64 bytes).
const KB: usize = 32;

/// Whether the processor has AMX-BF16 and Linux granted the tile state
/// (asked once). `HOST_AMX=0` turns the kernels off.
pub fn usable() -> bool {
    static U: OnceLock<bool> = OnceLock::new();
    *U.get_or_init(|| {
        if std::env::var_os("HOST_AMX").is_some_and(|v| v == "0") {
            return false;
        }
        detect()
    })
}

#[cfg(target_arch = "x86_64")]
fn detect() -> bool {
    use std::arch::x86_64::__cpuid_count;
    let leaf7 = __cpuid_count(7, 0);
    let amx_bf16 = leaf7.edx >> 22 & 1 == 1;
    let amx_tile = leaf7.edx >> 24 & 1 == 1;
    if !(amx_bf16 && amx_tile) {
        return false;
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
    ret == 0
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> bool {
    false
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

/// Zero lanes standing in for the row past an odd `k`.
static ZEROS: [u16; 16] = [0; 16];

/// `n` bf16 operands at `p` as their bits.
///
/// # Safety
/// `p` valid for `n` reads; `E` is a bf16 (two bytes).
unsafe fn lanes<'a, E>(p: *const E, n: usize) -> &'a [u16] {
    debug_assert_eq!(size_of::<E>(), 2);
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p.cast::<u16>(), n) }
}

/// A bf16's bits with a subnormal flushed to zero of its sign (as
/// `WordSource::lane16`), without a branch so the packing loops vectorise.
#[inline(always)]
fn flush(x: u16) -> u16 {
    let normal = ((x & 0x7f80 != 0) as u16).wrapping_neg();
    x & (normal | 0x8000)
}

/// Packed B: `panels` 16-column panels, each `kbs` tiles of 1 KiB.
struct PackedB {
    data: Vec<u16>,
    kbs: usize,
}

impl PackedB {
    fn panel(&self, p: usize) -> *const u16 {
        self.data[p * self.kbs * TILE_BYTES / 2..].as_ptr()
    }
}

/// `C = A·B` on AMX tiles for bf16 operands (their 16-bit lanes: the bf16
/// bits, subnormals flushed), `C` as f32 bits.
///
/// # Safety
/// As [`super::words::word_gemm`]; [`usable`] must be true.
#[allow(clippy::too_many_arguments)]
pub unsafe fn bf16_gemm<E: WordSource>(
    m: usize,
    n: usize,
    k: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
    parallel: bool,
) {
    assert!(E::KIND == super::words::WordKind::Bf16Pairs && size_of::<E>() == 2);
    let kbs = k.div_ceil(KB);
    let panels = n.div_ceil(16);
    // B as panels of VNNI tiles: tile row r holds, for each of 16 columns,
    // the pair (k = 2r, 2r + 1).
    let mut packed = PackedB {
        data: vec![0u16; panels * kbs * TILE_BYTES / 2],
        kbs,
    };
    {
        let dst = packed.data.as_mut_ptr() as usize;
        let pack_panel = |p: usize| {
            let dst = dst as *mut u16;
            let cols = 16.min(n - p * 16);
            for kb in 0..kbs {
                // SAFETY: panel p's tile kb lies in the buffer.
                let tile = unsafe { dst.add((p * kbs + kb) * TILE_BYTES / 2) };
                if b.cs == 1 {
                    // Rows contiguous: interleave runs of two rows.
                    for r in 0..16 {
                        let kk = kb * KB + 2 * r;
                        if kk >= k {
                            break;
                        }
                        // SAFETY: `cols` elements of rows kk and kk + 1
                        // (when it exists) from column p·16; tile row r.
                        unsafe {
                            let lo = lanes(b.at(kk, p * 16), cols);
                            let hi = if kk + 1 < k {
                                lanes(b.at(kk + 1, p * 16), cols)
                            } else {
                                &ZEROS[..cols]
                            };
                            let out = std::slice::from_raw_parts_mut(tile.add(r * 32), 2 * cols);
                            for ((o, &l), &h) in out.chunks_exact_mut(2).zip(lo).zip(hi) {
                                o[0] = flush(l);
                                o[1] = flush(h);
                            }
                        }
                    }
                    continue;
                }
                for q in 0..KB.min(k - kb * KB) {
                    let kk = kb * KB + q;
                    for j in 0..cols {
                        // SAFETY: (kk, p·16 + j) lies in B; the slot in the tile.
                        unsafe {
                            let v = b.at(kk, p * 16 + j).read();
                            tile.add((q / 2) * 32 + 2 * j + q % 2).write(v.lane16());
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

struct Job<'a, E> {
    k: usize,
    kbs: usize,
    a: Strided<E>,
    c: StridedMut<u32>,
    packed: &'a PackedB,
}

// SAFETY: threads write disjoint rectangles of C and only read the rest.
unsafe impl<E: Sync> Sync for Job<'_, E> {}

impl<E: WordSource> Job<'_, E> {
    /// One rectangle of C on this thread.
    ///
    /// # Safety
    /// The rectangle is this thread's alone; AMX is usable. `cols` starts
    /// at a multiple of 32.
    unsafe fn run(&self, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) {
        let (k, kbs) = (self.k, self.kbs);
        // Two A tiles per k tile: rows 0-15 and 16-31 of the strip.
        let mut strip = vec![0u16; kbs * 2 * TILE_BYTES / 2 + 32];
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
            if h < 32 || k % KB != 0 {
                // SAFETY: inside the strip buffer.
                unsafe { std::ptr::write_bytes(sp, 0, kbs * TILE_BYTES) };
            }
            for i in 0..h {
                let (half, r) = (i / 16, i % 16);
                for kb in 0..kbs {
                    // SAFETY: the tile's row r.
                    let row = unsafe { sp.add((kb * 2 + half) * TILE_BYTES / 2 + r * 32) };
                    let len = KB.min(k - kb * KB);
                    if self.a.cs == 1 {
                        // SAFETY: `len` elements of row i0 + i from kb·32;
                        // the tile row has 32.
                        unsafe {
                            let src = lanes(self.a.at(i0 + i, kb * KB), len);
                            let dst = std::slice::from_raw_parts_mut(row, len);
                            for (d, &v) in dst.iter_mut().zip(src) {
                                *d = flush(v);
                            }
                        }
                        continue;
                    }
                    for q in 0..len {
                        // SAFETY: (i0 + i, kb·32 + q) lies in A.
                        unsafe {
                            row.add(q)
                                .write(self.a.at(i0 + i, kb * KB + q).read().lane16())
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
                        "tdpbf16ps tmm0, tmm4, tmm6",
                        "tdpbf16ps tmm1, tmm4, tmm7",
                        "tdpbf16ps tmm2, tmm5, tmm6",
                        "tdpbf16ps tmm3, tmm5, tmm7",
                        "add {a}, 2048",
                        "add {b0}, 1024",
                        "add {b1}, 1024",
                        "dec {n}",
                        "jnz 2b",
                        a = inout(reg) sp => _,
                        b0 = inout(reg) b0 => _,
                        b1 = inout(reg) b1 => _,
                        n = inout(reg) kbs => _,
                        s = in(reg) 64usize,
                        options(nostack),
                    );
                }
                let whole = h == 32 && w == 32 && self.c.cs == 1;
                if whole {
                    // SAFETY: C's rows i0..i0 + 32, columns j0..j0 + 32,
                    // contiguous along the row, this thread's.
                    unsafe {
                        let base = self.c.ptr.offset(i0 as isize * self.c.rs + j0 as isize);
                        let stride = self.c.rs as usize * 4;
                        let lower = base.add(16 * self.c.rs as usize);
                        std::arch::asm!(
                            "tilestored [{c0} + {s}*1], tmm0",
                            "tilestored [{c1} + {s}*1], tmm1",
                            "tilestored [{c2} + {s}*1], tmm2",
                            "tilestored [{c3} + {s}*1], tmm3",
                            c0 = in(reg) base,
                            c1 = in(reg) base.add(16),
                            c2 = in(reg) lower,
                            c3 = in(reg) lower.add(16),
                            s = in(reg) stride,
                            options(nostack),
                        );
                    }
                } else {
                    let o = out.as_mut_ptr().cast::<f32>();
                    // SAFETY: `out` is 32 rows of 128 bytes.
                    unsafe {
                        std::arch::asm!(
                            "tilestored [{c0} + {s}*1], tmm0",
                            "tilestored [{c1} + {s}*1], tmm1",
                            "tilestored [{c2} + {s}*1], tmm2",
                            "tilestored [{c3} + {s}*1], tmm3",
                            c0 = in(reg) o,
                            c1 = in(reg) o.add(16),
                            c2 = in(reg) o.add(16 * 32),
                            c3 = in(reg) o.add(16 * 32 + 16),
                            s = in(reg) 128usize,
                            options(nostack),
                        );
                    }
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
