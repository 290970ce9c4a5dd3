//! `select` of 4- and 8-byte elements as AVX2 blends and full stores.
//!
//! # Why intrinsics
//! A fusion often selects in place: the block already holds one branch
//! (`dst[i] = p[i] ? dst[i] : f[i]`, e.g. the NaN mask JAX puts after an
//! embedding lookup). Given that loop, in any form (a branch, bit masks, a
//! chunk staged through a local array), LLVM vectorises it as a *masked store*
//! of the lanes that change: `vpmaskmovd` / `vmaskmovps` under AVX2. On AMD Zen
//! processors those stores are microcoded and cost tens of cycles each, so the
//! select ran at a fraction of memory speed (a quarter of all the samples of
//! `hlorun bench gather_embedding_50000x256.hlo` under `perf record` sat on
//! them). Here every
//! vector is loaded, blended and stored whole, which costs the same wherever
//! the branches come from.
//!
//! AVX-512 is left to the generic loop: its masked stores (`vmovdqu32 {k}`)
//! are ordinary stores on the processors that have them.

use super::{Operand, SelectElem};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// One branch of the select as the vector loop reads it: vector `i` (of
/// elements `i..i + lanes`) is at `start() + (i & step) * width`: `step` is
/// all ones for a slice or the destination, and zero for a broadcast scalar,
/// whose vector is `splat`.
#[cfg(target_arch = "x86_64")]
struct Branch {
    base: *const u8,
    step: usize,
    splat: [u64; 4],
}

#[cfg(target_arch = "x86_64")]
impl Branch {
    /// Where vector 0 is read from.
    fn start(&self) -> *const u8 {
        if self.step == 0 {
            self.splat.as_ptr().cast()
        } else {
            self.base
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Branch {
    fn new<T: SelectElem>(op: Operand<'_, T>, dst: *const T) -> Branch {
        let mut splat = [0u64; 4];
        match op {
            Operand::Slice(s) => Branch {
                base: s.as_ptr().cast(),
                step: usize::MAX,
                splat,
            },
            Operand::Dst => Branch {
                base: dst.cast(),
                step: usize::MAX,
                splat,
            },
            Operand::Scalar(v) => {
                let bytes = std::mem::size_of::<T>();
                let lanes = 32 / bytes;
                for lane in 0..lanes {
                    // SAFETY: `lanes` values of `T` fill the 32 bytes of `splat`.
                    unsafe {
                        splat
                            .as_mut_ptr()
                            .cast::<u8>()
                            .add(lane * bytes)
                            .cast::<T>()
                            .write_unaligned(v)
                    };
                }
                Branch {
                    base: std::ptr::null(),
                    step: 0,
                    splat,
                }
            }
        }
    }
}

/// `dst[i] = if p[i] != 0 { on_true[i] } else { on_false[i] }` for 4- or
/// 8-byte `T`; returns `false` (having done nothing) for other widths. The
/// lengths must already be checked: every slice has `dst.len()` elements.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn select_avx2<T: SelectElem>(
    p: &[u8],
    on_true: Operand<'_, T>,
    on_false: Operand<'_, T>,
    dst: &mut [T],
) -> bool {
    let width = std::mem::size_of::<T>();
    if width != 4 && width != 8 {
        return false;
    }
    let n = dst.len().min(p.len());
    let out = dst.as_mut_ptr();
    let (t, f) = (Branch::new(on_true, out), Branch::new(on_false, out));
    // SAFETY: AVX2 (the caller's contract); the branches hold `n` elements
    // (or a full vector of splats), as does `dst`.
    unsafe {
        if width == 4 {
            blend::<4>(p.as_ptr(), &t, &f, out.cast(), n)
        } else {
            blend::<8>(p.as_ptr(), &t, &f, out.cast(), n)
        }
    }
    true
}

/// The vector loop for `W`-byte elements (8 or 4 per vector), then the
/// last few elements one by one.
///
/// # Safety
/// AVX2; `p`, `out` and each slice branch are valid for `n` elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
unsafe fn blend<const W: usize>(p: *const u8, t: &Branch, f: &Branch, out: *mut u8, n: usize) {
    let lanes = 32 / W;
    let zero = _mm256_setzero_si256();
    let (tb, fb) = (t.start(), f.start());
    let mut i = 0;
    while i + lanes <= n {
        // SAFETY: elements `i..i + lanes` lie in every slice (the loop bound).
        unsafe {
            let is_false = if W == 4 {
                let bytes = _mm_loadl_epi64(p.add(i).cast());
                _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(bytes), zero)
            } else {
                let bytes = _mm_cvtsi32_si128(p.add(i).cast::<i32>().read_unaligned());
                _mm256_cmpeq_epi64(_mm256_cvtepu8_epi64(bytes), zero)
            };
            let a = _mm256_loadu_si256(tb.add((i & t.step) * W).cast());
            let b = _mm256_loadu_si256(fb.add((i & f.step) * W).cast());
            _mm256_storeu_si256(out.add(i * W).cast(), _mm256_blendv_epi8(a, b, is_false));
        }
        i += lanes;
    }
    while i < n {
        // SAFETY: element `i` lies in every slice; a broadcast branch reads
        // its first splat.
        unsafe {
            let (from, step) = if p.add(i).read() != 0 {
                (tb, t.step)
            } else {
                (fb, f.step)
            };
            std::ptr::copy(from.add((i & step) * W), out.add(i * W), W);
        }
        i += 1;
    }
}
