//! Vector instruction sets the GEMM micro-kernel is written against.
//!
//! The micro-kernel ([`super::kernel`]) is one generic function over [`Simd`]:
//! a vector type, its lane count, and the handful of operations a register-
//! blocked GEMM needs (load, broadcast, fused multiply-add, store). Each
//! implementation fixes the register tile (`MR` rows of broadcast lhs values
//! times `NV` vectors of rhs columns) so that the accumulators, the rhs vectors
//! and one broadcast fill the register file without spilling:
//!
//! | ISA | f32 tile | f64 tile | accumulators |
//! | --- | --- | --- | --- |
//! | AVX-512F | 6 × 64 | 6 × 32 | 24 of 32 zmm |
//! | AVX2 + FMA | 6 × 16 | 6 × 8 | 12 of 16 ymm |
//! | portable | 4 × 8 | 4 × 8 | plain arrays |
//!
//! The methods are `#[inline(always)]` wrappers over `std::arch` intrinsics;
//! they compile to single instructions once inlined into a function compiled
//! with the matching `#[target_feature]` (the drivers in [`super`] are). The
//! portable implementation uses arrays and plain arithmetic (no fused
//! multiply-add, so it rounds each product: the fallback for processors
//! without FMA, where a software FMA would be far slower).

use super::Element;

/// One SIMD register type for element type `T` and the tile shape used with it.
///
/// # Safety
/// Implementations wrap instructions of one instruction set: every method
/// may only run on a processor that has it (the drivers check before calling),
/// and pointers must be valid for the lanes read or written.
pub unsafe trait Simd: Copy + Send + Sync + 'static {
    type T: Element;
    type V: Copy;
    /// Elements per vector.
    const LANES: usize;
    /// Rows of the register tile (broadcast lhs values per k step).
    const MR: usize;
    /// Vectors per tile row (rhs vectors per k step).
    const NV: usize;
    /// The tile's width in elements.
    const NR: usize = Self::LANES * Self::NV;
    /// Whether an lhs with contiguous rows is packed as row panels (each
    /// row's `kc` values together) rather than interleaved into column
    /// panels (each k step's `MR` values together). Column panels let the
    /// kernel broadcast from one address per k step, 5-10% faster on AVX2
    /// for large products; but interleaving is a strided write, which
    /// AVX-512 code turns into scatter instructions, and then packing cost
    /// more than the multiply-adds of a narrow product (a convolution's 64
    /// output channels: 3.4-4.0 against 2.4-2.9 ms for `[3136, 576] x [576,
    /// 64]` on one core).
    const ROW_PANELS: bool = false;

    /// All lanes zero.
    ///
    /// # Safety
    /// The processor has this implementation's instruction set.
    unsafe fn zero() -> Self::V;
    /// Loads `LANES` elements (no alignment needed).
    ///
    /// # Safety
    /// As [`Simd::zero`]; `p` is valid for `LANES` reads.
    unsafe fn load(p: *const Self::T) -> Self::V;
    /// One element in every lane.
    ///
    /// # Safety
    /// As [`Simd::zero`]; `p` is valid for one read.
    unsafe fn splat(p: *const Self::T) -> Self::V;
    /// Stores `LANES` elements (no alignment needed).
    ///
    /// # Safety
    /// As [`Simd::zero`]; `p` is valid for `LANES` writes.
    unsafe fn store(p: *mut Self::T, v: Self::V);
    /// `a * b + c`.
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b`.
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Subnormal lanes replaced by zero of their sign (as
    /// [`crate::kernels::denormal::Flushable::flushed`]).
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn flush(v: Self::V) -> Self::V;
    /// Each even-odd lane pair swapped.
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn swap_pairs(v: Self::V) -> Self::V;
    /// `a·b − c` in even lanes, `a·b + c` in odd lanes (one complex
    /// product's real and imaginary parts).
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn fmaddsub(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// The sum of the lanes (in a fixed order of pairwise adds).
    ///
    /// # Safety
    /// As [`Simd::zero`].
    unsafe fn sum(v: Self::V) -> Self::T;
}

#[cfg(target_arch = "x86_64")]
pub use x86::*;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Simd;
    use std::arch::x86_64::*;

    /// AVX-512F, f32: 16 lanes, 6 × 64 tile.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx512F32;
    /// AVX-512F, f64: 8 lanes, 6 × 32 tile.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx512F64;
    /// AVX2 + FMA, f32: 8 lanes, 6 × 16 tile.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx2F32;
    /// AVX2 + FMA, f64: 4 lanes, 6 × 8 tile.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx2F64;

    // SAFETY: every method is an AVX-512F instruction; the drivers only call
    // these after checking the processor has AVX-512F.
    unsafe impl Simd for Avx512F32 {
        type T = f32;
        type V = __m512;
        const LANES: usize = 16;
        const MR: usize = 6;
        const NV: usize = 4;
        const ROW_PANELS: bool = true;
        #[inline(always)]
        unsafe fn zero() -> __m512 {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m512 {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const f32) -> __m512 {
            unsafe { _mm512_set1_ps(p.read()) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512) {
            unsafe { _mm512_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn flush(v: __m512) -> __m512 {
            unsafe {
                let vi = _mm512_castps_si512(v);
                let normal = _mm512_test_epi32_mask(vi, _mm512_set1_epi32(0x7f80_0000));
                let zero = _mm512_and_si512(vi, _mm512_set1_epi32(i32::MIN));
                _mm512_castsi512_ps(_mm512_mask_mov_epi32(zero, normal, vi))
            }
        }
        #[inline(always)]
        unsafe fn swap_pairs(v: __m512) -> __m512 {
            unsafe { _mm512_permute_ps::<0xB1>(v) }
        }
        #[inline(always)]
        unsafe fn fmaddsub(a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmaddsub_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn sum(v: __m512) -> f32 {
            unsafe { _mm512_reduce_add_ps(v) }
        }
    }

    // SAFETY: as for `Avx512F32`.
    unsafe impl Simd for Avx512F64 {
        type T = f64;
        type V = __m512d;
        const LANES: usize = 8;
        const MR: usize = 6;
        const NV: usize = 4;
        const ROW_PANELS: bool = true;
        #[inline(always)]
        unsafe fn zero() -> __m512d {
            unsafe { _mm512_setzero_pd() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> __m512d {
            unsafe { _mm512_loadu_pd(p) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const f64) -> __m512d {
            unsafe { _mm512_set1_pd(p.read()) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f64, v: __m512d) {
            unsafe { _mm512_storeu_pd(p, v) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_add_pd(a, b) }
        }
        #[inline(always)]
        unsafe fn flush(v: __m512d) -> __m512d {
            unsafe {
                let vi = _mm512_castpd_si512(v);
                let normal = _mm512_test_epi64_mask(vi, _mm512_set1_epi64(0x7ff0_0000_0000_0000));
                let zero = _mm512_and_si512(vi, _mm512_set1_epi64(i64::MIN));
                _mm512_castsi512_pd(_mm512_mask_mov_epi64(zero, normal, vi))
            }
        }
        #[inline(always)]
        unsafe fn swap_pairs(v: __m512d) -> __m512d {
            unsafe { _mm512_permute_pd::<0x55>(v) }
        }
        #[inline(always)]
        unsafe fn fmaddsub(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            unsafe { _mm512_fmaddsub_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn sum(v: __m512d) -> f64 {
            unsafe { _mm512_reduce_add_pd(v) }
        }
    }

    // SAFETY: every method is an AVX or FMA instruction; the drivers only call
    // these after checking the processor has AVX2 and FMA.
    unsafe impl Simd for Avx2F32 {
        type T = f32;
        type V = __m256;
        const LANES: usize = 8;
        const MR: usize = 6;
        const NV: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> __m256 {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const f32) -> __m256 {
            unsafe { _mm256_broadcast_ss(&*p) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            unsafe { _mm256_storeu_ps(p, v) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn flush(v: __m256) -> __m256 {
            unsafe {
                let vi = _mm256_castps_si256(v);
                let exp = _mm256_and_si256(vi, _mm256_set1_epi32(0x7f80_0000));
                let sub = _mm256_cmpeq_epi32(exp, _mm256_setzero_si256());
                let clear = _mm256_andnot_si256(_mm256_set1_epi32(i32::MIN), sub);
                _mm256_castsi256_ps(_mm256_andnot_si256(clear, vi))
            }
        }
        #[inline(always)]
        unsafe fn swap_pairs(v: __m256) -> __m256 {
            unsafe { _mm256_permute_ps::<0xB1>(v) }
        }
        #[inline(always)]
        unsafe fn fmaddsub(a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmaddsub_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn sum(v: __m256) -> f32 {
            unsafe {
                let q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
                let d = _mm_add_ps(q, _mm_movehl_ps(q, q));
                _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)))
            }
        }
    }

    // SAFETY: as for `Avx2F32`.
    unsafe impl Simd for Avx2F64 {
        type T = f64;
        type V = __m256d;
        const LANES: usize = 4;
        const MR: usize = 6;
        const NV: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> __m256d {
            unsafe { _mm256_setzero_pd() }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> __m256d {
            unsafe { _mm256_loadu_pd(p) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const f64) -> __m256d {
            unsafe { _mm256_broadcast_sd(&*p) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f64, v: __m256d) {
            unsafe { _mm256_storeu_pd(p, v) }
        }
        #[inline(always)]
        unsafe fn fma(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
            unsafe { _mm256_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_add_pd(a, b) }
        }
        #[inline(always)]
        unsafe fn flush(v: __m256d) -> __m256d {
            unsafe {
                let vi = _mm256_castpd_si256(v);
                let exp = _mm256_and_si256(vi, _mm256_set1_epi64x(0x7ff0_0000_0000_0000));
                let sub = _mm256_cmpeq_epi64(exp, _mm256_setzero_si256());
                let clear = _mm256_andnot_si256(_mm256_set1_epi64x(i64::MIN), sub);
                _mm256_castsi256_pd(_mm256_andnot_si256(clear, vi))
            }
        }
        #[inline(always)]
        unsafe fn swap_pairs(v: __m256d) -> __m256d {
            unsafe { _mm256_permute_pd::<0x5>(v) }
        }
        #[inline(always)]
        unsafe fn fmaddsub(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
            unsafe { _mm256_fmaddsub_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn sum(v: __m256d) -> f64 {
            unsafe {
                let q = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
                _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)))
            }
        }
    }
}

/// Portable vectors: arrays of 4 elements with plain arithmetic, which the
/// baseline compiler turns into SSE2 where it can. 4 × 8 tile.
#[derive(Clone, Copy, Debug)]
pub struct Portable<T>(std::marker::PhantomData<T>);

// SAFETY: plain Rust; only the pointers' validity is the caller's to ensure.
unsafe impl<T: Element> Simd for Portable<T> {
    type T = T;
    type V = [T; 4];
    const LANES: usize = 4;
    const MR: usize = 4;
    const NV: usize = 2;
    #[inline(always)]
    unsafe fn zero() -> [T; 4] {
        [T::ZERO; 4]
    }
    #[inline(always)]
    unsafe fn load(p: *const T) -> [T; 4] {
        unsafe { p.cast::<[T; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn splat(p: *const T) -> [T; 4] {
        [unsafe { p.read() }; 4]
    }
    #[inline(always)]
    unsafe fn store(p: *mut T, v: [T; 4]) {
        unsafe { p.cast::<[T; 4]>().write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn fma(a: [T; 4], b: [T; 4], c: [T; 4]) -> [T; 4] {
        std::array::from_fn(|i| a[i] * b[i] + c[i])
    }
    #[inline(always)]
    unsafe fn add(a: [T; 4], b: [T; 4]) -> [T; 4] {
        std::array::from_fn(|i| a[i] + b[i])
    }
    #[inline(always)]
    unsafe fn flush(v: [T; 4]) -> [T; 4] {
        v.map(crate::kernels::denormal::Flushable::flushed)
    }
    #[inline(always)]
    unsafe fn swap_pairs(v: [T; 4]) -> [T; 4] {
        [v[1], v[0], v[3], v[2]]
    }
    #[inline(always)]
    unsafe fn fmaddsub(a: [T; 4], b: [T; 4], c: [T; 4]) -> [T; 4] {
        std::array::from_fn(|i| {
            if i % 2 == 0 {
                a[i] * b[i] - c[i]
            } else {
                a[i] * b[i] + c[i]
            }
        })
    }
    #[inline(always)]
    unsafe fn sum(v: [T; 4]) -> T {
        (v[0] + v[2]) + (v[1] + v[3])
    }
}
