//! Products over packed 32-bit words: integer products (exact, wrapping like
//! XLA's s32 accumulation) and bf16 products accumulated in f32.
//!
//! Both operands are packed, converted on the way, into 32-bit words, and
//! one register-blocked micro-kernel ([`tile`]) runs over the words, generic
//! over [`WordIsa`]: what a word holds and the one instruction that folds a
//! pair of words into an accumulator. A new element type or instruction set
//! is one more [`WordIsa`] implementation; the blocking, packing, threading
//! and edges are shared.
//!
//! | [`WordKind`] | a word holds | accumulator step | AVX-512 | AVX2 | portable |
//! | --- | --- | --- | --- | --- | --- |
//! | `I8Quads` | four bytes of consecutive k | `i32 += Σ a_t·b_t`, lhs unsigned, rhs signed | `vpdpbusd` (VNNI) | — | — |
//! | `I16Pairs` | two i16 of consecutive k | `i32 += a0·b0 + a1·b1` | `vpdpwssd` (VNNI), else `vpmaddwd` + `vpaddd` | `vpmaddwd` + `vpaddd` | scalar |
//! | `I32` | one i32 | `i32 += a·b` | `vpmulld` + `vpaddd` | the same | scalar |
//! | `Bf16Pairs` | two bf16 of consecutive k | `f32 += a0·b0 + a1·b1` | `vdpbf16ps` (AVX512-BF16) | — | — |
//! | `F32` | one f32 (an f16 converted) | `f32 += a·b` | `vfmadd231ps` | `vfmadd231ps` | multiply, add |
//!
//! Integer sums wrap modulo 2^32 (`vpmaddwd` wraps its one overflowing case,
//! `(-2^15)² + (-2^15)²`, to `-2^31`, the sum modulo 2^32), so any integer
//! result of 32 bits or fewer is exact after truncation. Under VNNI, s8
//! and u8 operands take byte quads (`vpdpbusd`, twice the products per
//! instruction of `vpdpwssd`): one side's bytes are flipped by 128 to make
//! it unsigned (s8 lhs) or signed (u8 rhs), and a per-column or per-row
//! term `∓128·Σ` computed from the other operand corrects the sums; all of
//! it is exact modulo 2^32 (four products of at most 255·128 never
//! saturate the non-saturating form). Elsewhere they take i16 pairs, which
//! need no correction.
//! A bf16 product is exact in f32, so `vdpbf16ps` differs from f32
//! multiply-adds only in summation order; it treats subnormal inputs as zero,
//! as packing does everywhere (XLA CPU runs with FTZ/DAZ). f16 operands are
//! converted to f32 while packing (exactly: an f16 subnormal is a normal
//! f32, kept, as when XLA converts them), which saves the f32 GEMM path a
//! converted copy of each operand.
//!
//! Where the processor has AMX and Linux grants the tile state
//! ([`WordLevel::Amx`]), bf16 products of at least 16 rows and columns, and
//! large s8 x s8 and u8 x u8 ones, run on AMX tiles instead
//! ([`super::amx`]): sixteen times the multiply-adds of `vdpbf16ps` per
//! instruction.
//!
//! A product one or two vectors wide runs a taller, narrower tile
//! ([`Narrow`]): a tall-skinny product in the `6 × 4`-vector tile would
//! compute mostly padding.
//!
//! Blocking follows the f32 GEMM ([`super::Blocking`] for 4-byte elements,
//! `kc` counted in words); the lhs is packed as row panels when its rows are
//! contiguous (a copy that stays contiguous), else as column panels; partial
//! strips and panels are padded with zero words, so the kernel always runs
//! whole tiles and only the stores see the edges. Against one rhs panel a
//! row-major bf16 lhs is read in place (its rows already are row panels of
//! pairs, and `vdpbf16ps` flushes subnormal inputs itself).

use super::blocking::Blocking;
use super::pack::Strided;
use super::{split, StridedMut, PARALLEL_MIN_MACS};
use crate::runtime::pool::{compute_pool, run_tasks};
use crate::vmath::Level;
use std::cell::Cell;
use std::ops::Range;

/// What the words hold and how they combine (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordKind {
    I16Pairs,
    I32,
    Bf16Pairs,
    /// One f32 (from f16, converted while packing).
    F32,
    /// Four bytes of consecutive k: the lhs's unsigned, the rhs's signed
    /// (s8 and u8 operands under AVX-512 VNNI, see [`WordSource::FLIP_A`]).
    I8Quads,
}

impl WordKind {
    /// Elements of k per word.
    fn per_word(self) -> usize {
        match self {
            WordKind::I32 | WordKind::F32 => 1,
            WordKind::I8Quads => 4,
            _ => 2,
        }
    }
}

/// An operand element type, and the word kind its products use.
pub trait WordSource: Copy + Send + Sync + 'static {
    const KIND: WordKind;
    /// A plain type of the same size, for staging copies.
    type Stage: crate::kernels::denormal::MaybeFlushable;
    /// The value as a 16-bit lane: an integer that fits i16, or bf16 bits
    /// (subnormals flushed to signed zero).
    fn lane16(self) -> u16;
    /// The value as an i32 lane.
    fn lane32(self) -> u32;
    /// The low byte (s8 and u8).
    #[inline(always)]
    fn lane8(self) -> u8 {
        self.lane32() as u8
    }
    /// For [`WordKind::I8Quads`]: the byte mask XORed into the lhs's and
    /// the rhs's bytes so the lhs reads as unsigned and the rhs as signed
    /// (`vpdpbusd`'s operands). An s8 lhs becomes `a + 128` (its products
    /// then exceed by `128·Σb`, taken off per column), a u8 rhs `b − 128`
    /// (short by `128·Σa`, added back per row).
    const FLIP_A: u32 = 0;
    const FLIP_B: u32 = 0;
    /// Runs `job` with the kernel of `Self::KIND` at `level`.
    ///
    /// # Safety
    /// As [`word_gemm`].
    #[doc(hidden)]
    unsafe fn dispatch(job: &WordJob<Self>, level: WordLevel);
}

/// The kernel of `$W` through trampoline `$tramp`, in the tile shape that
/// suits the product's width (see [`Narrow`]).
macro_rules! go {
    ($job:expr, $tramp:ident, $W:ty) => {{
        let job = $job;
        // SAFETY: the trampoline's instruction set is present: the vector
        // level is at most the detected one, VNNI and BF16 are probed, and
        // the caller checked `supported`.
        unsafe {
            match narrow_shape::<$W>(job.n) {
                Some((12, 1)) => {
                    type T = Narrow<$W, 12, 1>;
                    run(job, T::MR, T::NR, $tramp::<T, Self>)
                }
                Some(_) => {
                    type T = Narrow<$W, 8, 2>;
                    run(job, T::MR, T::NR, $tramp::<T, Self>)
                }
                None => run(job, <$W>::MR, <$W>::NR, $tramp::<$W, Self>),
            }
        }
    }};
}

/// The tile shape for a product `n` columns wide when `W`'s own tile would
/// compute mostly padding: a tall-skinny product (`n` of one or two
/// vectors) in a `6 × 4`-vector tile wastes half its multiply-adds or more,
/// while a taller, narrower tile keeps as many accumulators busy.
fn narrow_shape<W: WordIsa>(n: usize) -> Option<(usize, usize)> {
    if W::NV > 1 && n <= W::LANES {
        Some((12, 1))
    } else if W::NV > 2 && n <= 2 * W::LANES {
        Some((8, 2))
    } else {
        None
    }
}

/// `W`'s instructions in an `MR × NV`-vector tile.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Narrow<W, const MR: usize, const NV: usize>(std::marker::PhantomData<W>);

// SAFETY: every method forwards to `W`, whose contract carries over.
unsafe impl<W: WordIsa, const MR: usize, const NV: usize> WordIsa for Narrow<W, MR, NV> {
    type V = W::V;
    const LANES: usize = W::LANES;
    const MR: usize = MR;
    const NV: usize = NV;
    #[inline(always)]
    unsafe fn zero() -> Self::V {
        unsafe { W::zero() }
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> Self::V {
        unsafe { W::load(p) }
    }
    #[inline(always)]
    unsafe fn splat(p: *const u32) -> Self::V {
        unsafe { W::splat(p) }
    }
    #[inline(always)]
    unsafe fn step(acc: Self::V, a: Self::V, b: Self::V) -> Self::V {
        unsafe { W::step(acc, a, b) }
    }
    #[inline(always)]
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V {
        unsafe { W::add(a, b) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: Self::V) {
        unsafe { W::store(p, v) }
    }
    #[inline(always)]
    fn add_scalar(a: u32, b: u32) -> u32 {
        W::add_scalar(a, b)
    }
}

macro_rules! i16_source {
    ($t:ty, $flip_a:expr, $flip_b:expr, $quads:expr) => {
        impl WordSource for $t {
            const KIND: WordKind = WordKind::I16Pairs;
            type Stage = $t;
            const FLIP_A: u32 = $flip_a;
            const FLIP_B: u32 = $flip_b;
            #[inline(always)]
            fn lane16(self) -> u16 {
                self as i16 as u16
            }
            #[inline(always)]
            fn lane32(self) -> u32 {
                self as i32 as u32
            }
            unsafe fn dispatch(job: &WordJob<Self>, level: WordLevel) {
                match level {
                    #[cfg(target_arch = "x86_64")]
                    WordLevel::Avx512Ext if $quads && has_vnni() => {
                        let quads = WordJob {
                            kind: WordKind::I8Quads,
                            ..*job
                        };
                        go!(&quads, rect_avx512_ext, Avx512Vnni8)
                    }
                    #[cfg(target_arch = "x86_64")]
                    WordLevel::Avx512Ext if has_vnni() => go!(job, rect_avx512_ext, Avx512Vnni16),
                    #[cfg(target_arch = "x86_64")]
                    WordLevel::Avx512 | WordLevel::Avx512Ext => go!(job, rect_avx512, Avx512I16),
                    #[cfg(target_arch = "x86_64")]
                    WordLevel::Avx2 => go!(job, rect_avx2, Avx2I16),
                    _ => go!(job, rect_portable, PortableInt<true>),
                }
            }
        }
    };
}
i16_source!(i8, 0x80, 0, true);
i16_source!(u8, 0, 0x80, true);
i16_source!(i16, 0, 0, false);

impl WordSource for i32 {
    const KIND: WordKind = WordKind::I32;
    type Stage = i32;
    #[inline(always)]
    fn lane16(self) -> u16 {
        self as u16
    }
    #[inline(always)]
    fn lane32(self) -> u32 {
        self as u32
    }
    unsafe fn dispatch(job: &WordJob<Self>, level: WordLevel) {
        match level {
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx512 | WordLevel::Avx512Ext => go!(job, rect_avx512, Avx512I32),
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx2 => go!(job, rect_avx2, Avx2I32),
            _ => go!(job, rect_portable, PortableInt<false>),
        }
    }
}

impl WordSource for half::f16 {
    const KIND: WordKind = WordKind::F32;
    type Stage = u16;
    #[inline(always)]
    fn lane16(self) -> u16 {
        self.to_bits()
    }
    #[inline(always)]
    fn lane32(self) -> u32 {
        f16_to_f32_bits(self.to_bits())
    }
    unsafe fn dispatch(job: &WordJob<Self>, level: WordLevel) {
        match level {
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx512 | WordLevel::Avx512Ext => go!(job, rect_avx512, Avx512F32),
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx2 => go!(job, rect_avx2, Avx2F32),
            _ => go!(job, rect_portable, PortableF32),
        }
    }
}

/// f16 bits to f32 bits, exactly (subnormal f16 values are normal f32s),
/// written with selects so packing loops vectorize.
#[inline(always)]
fn f16_to_f32_bits(h: u16) -> u32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let em = h & 0x7fff;
    // Rebias the exponent (127 - 15 = 112) for normal values.
    let normal = (em << 13) + (112 << 23);
    let inf_nan = (em << 13) | 0x7f80_0000;
    // A subnormal's 10-bit significand times 2^-24, exact in f32.
    let sub = (em as f32 * (1.0 / 16_777_216.0)).to_bits();
    let bits = if em >= 0x7c00 {
        inf_nan
    } else if em >= 0x0400 {
        normal
    } else {
        sub
    };
    bits | sign
}

impl WordSource for half::bf16 {
    const KIND: WordKind = WordKind::Bf16Pairs;
    type Stage = u16;
    #[inline(always)]
    fn lane16(self) -> u16 {
        let bits = self.to_bits();
        if bits & 0x7f80 == 0 {
            bits & 0x8000
        } else {
            bits
        }
    }
    #[inline(always)]
    fn lane32(self) -> u32 {
        self.to_f32().to_bits()
    }
    unsafe fn dispatch(job: &WordJob<Self>, _level: WordLevel) {
        #[cfg(target_arch = "x86_64")]
        go!(job, rect_avx512_ext, Avx512Bf16);
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("bf16 pairs need AVX512-BF16");
    }
}

/// One word kind on one instruction set.
///
/// # Safety
/// Implementations wrap instructions of one instruction set: every method
/// may only run on a processor that has it, and pointers must be valid for
/// the lanes read or written.
pub(crate) unsafe trait WordIsa: Copy + Send + Sync + 'static {
    type V: Copy;
    /// 32-bit lanes per vector.
    const LANES: usize;
    /// Rows of the register tile.
    const MR: usize;
    /// Vectors per tile row.
    const NV: usize;
    const NR: usize = Self::LANES * Self::NV;
    /// # Safety
    /// The processor has the instruction set.
    unsafe fn zero() -> Self::V;
    /// # Safety
    /// As [`WordIsa::zero`]; `p` valid for `LANES` reads.
    unsafe fn load(p: *const u32) -> Self::V;
    /// One word in every lane.
    /// # Safety
    /// As [`WordIsa::zero`]; `p` valid for one read.
    unsafe fn splat(p: *const u32) -> Self::V;
    /// `acc + a ∘ b` for the kind's product of words.
    /// # Safety
    /// As [`WordIsa::zero`].
    unsafe fn step(acc: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise accumulator sum.
    /// # Safety
    /// As [`WordIsa::zero`].
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// As [`WordIsa::zero`]; `p` valid for `LANES` writes.
    unsafe fn store(p: *mut u32, v: Self::V);
    /// One accumulator lane plus another.
    fn add_scalar(a: u32, b: u32) -> u32;
}

/// Integer accumulators.
#[inline(always)]
fn wrapping_add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{wrapping_add, WordIsa};
    use std::arch::x86_64::*;

    macro_rules! isa512 {
        ($name:ident, $doc:literal, |$acc:ident, $a:ident, $b:ident| $step:expr) => {
            #[doc = $doc]
            #[derive(Clone, Copy, Debug)]
            pub struct $name;
            // SAFETY: AVX-512 instructions (F/BW, plus VNNI or BF16 where the
            // step names them); the drivers check the processor first.
            unsafe impl WordIsa for $name {
                type V = __m512i;
                const LANES: usize = 16;
                const MR: usize = 6;
                const NV: usize = 4;
                #[inline(always)]
                unsafe fn zero() -> __m512i {
                    unsafe { _mm512_setzero_si512() }
                }
                #[inline(always)]
                unsafe fn load(p: *const u32) -> __m512i {
                    unsafe { _mm512_loadu_si512(p.cast()) }
                }
                #[inline(always)]
                unsafe fn splat(p: *const u32) -> __m512i {
                    unsafe { _mm512_set1_epi32(p.read() as i32) }
                }
                #[inline(always)]
                unsafe fn step($acc: __m512i, $a: __m512i, $b: __m512i) -> __m512i {
                    unsafe { $step }
                }
                #[inline(always)]
                unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
                    unsafe { Self::add_vec(a, b) }
                }
                #[inline(always)]
                unsafe fn store(p: *mut u32, v: __m512i) {
                    unsafe { _mm512_storeu_si512(p.cast(), v) }
                }
                #[inline(always)]
                fn add_scalar(a: u32, b: u32) -> u32 {
                    Self::add_lane(a, b)
                }
            }
        };
    }

    macro_rules! isa256 {
        ($name:ident, $doc:literal, |$acc:ident, $a:ident, $b:ident| $step:expr) => {
            #[doc = $doc]
            #[derive(Clone, Copy, Debug)]
            pub struct $name;
            // SAFETY: AVX2 instructions; the drivers check the processor first.
            unsafe impl WordIsa for $name {
                type V = __m256i;
                const LANES: usize = 8;
                const MR: usize = 6;
                const NV: usize = 2;
                #[inline(always)]
                unsafe fn zero() -> __m256i {
                    unsafe { _mm256_setzero_si256() }
                }
                #[inline(always)]
                unsafe fn load(p: *const u32) -> __m256i {
                    unsafe { _mm256_loadu_si256(p.cast()) }
                }
                #[inline(always)]
                unsafe fn splat(p: *const u32) -> __m256i {
                    unsafe { _mm256_set1_epi32(p.read() as i32) }
                }
                #[inline(always)]
                unsafe fn step($acc: __m256i, $a: __m256i, $b: __m256i) -> __m256i {
                    unsafe { $step }
                }
                #[inline(always)]
                unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
                    unsafe { _mm256_add_epi32(a, b) }
                }
                #[inline(always)]
                unsafe fn store(p: *mut u32, v: __m256i) {
                    unsafe { _mm256_storeu_si256(p.cast(), v) }
                }
                #[inline(always)]
                fn add_scalar(a: u32, b: u32) -> u32 {
                    wrapping_add(a, b)
                }
            }
        };
    }

    /// Integer accumulators, for the integer AVX-512 kinds.
    trait IntAcc {
        #[inline(always)]
        unsafe fn add_vec(a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(a, b) }
        }
        #[inline(always)]
        fn add_lane(a: u32, b: u32) -> u32 {
            wrapping_add(a, b)
        }
    }
    impl IntAcc for Avx512Vnni16 {}
    impl IntAcc for Avx512Vnni8 {}
    impl IntAcc for Avx512I16 {}
    impl IntAcc for Avx512I32 {}

    /// f32 accumulators.
    trait FloatAcc {
        #[inline(always)]
        unsafe fn add_vec(a: __m512i, b: __m512i) -> __m512i {
            unsafe {
                _mm512_castps_si512(_mm512_add_ps(
                    _mm512_castsi512_ps(a),
                    _mm512_castsi512_ps(b),
                ))
            }
        }
        #[inline(always)]
        fn add_lane(a: u32, b: u32) -> u32 {
            (f32::from_bits(a) + f32::from_bits(b)).to_bits()
        }
    }
    impl FloatAcc for Avx512Bf16 {}
    impl FloatAcc for Avx512F32 {}

    isa512!(Avx512F32, "f32, AVX-512F: `vfmadd231ps`.", |acc, a, b| {
        _mm512_castps_si512(_mm512_fmadd_ps(
            _mm512_castsi512_ps(a),
            _mm512_castsi512_ps(b),
            _mm512_castsi512_ps(acc),
        ))
    });

    /// f32, AVX2 + FMA: `vfmadd231ps`.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx2F32;
    // SAFETY: AVX2 and FMA instructions; the drivers check the processor
    // first.
    unsafe impl WordIsa for Avx2F32 {
        type V = __m256;
        const LANES: usize = 8;
        const MR: usize = 6;
        const NV: usize = 2;
        #[inline(always)]
        unsafe fn zero() -> __m256 {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn load(p: *const u32) -> __m256 {
            unsafe { _mm256_loadu_ps(p.cast()) }
        }
        #[inline(always)]
        unsafe fn splat(p: *const u32) -> __m256 {
            unsafe { _mm256_broadcast_ss(&*p.cast::<f32>()) }
        }
        #[inline(always)]
        unsafe fn step(acc: __m256, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, acc) }
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut u32, v: __m256) {
            unsafe { _mm256_storeu_ps(p.cast(), v) }
        }
        #[inline(always)]
        fn add_scalar(a: u32, b: u32) -> u32 {
            (f32::from_bits(a) + f32::from_bits(b)).to_bits()
        }
    }

    isa512!(
        Avx512Vnni16,
        "i16 pairs, AVX-512 VNNI: `vpdpwssd`.",
        |acc, a, b| _mm512_dpwssd_epi32(acc, a, b)
    );
    isa512!(
        Avx512Vnni8,
        "byte quads, AVX-512 VNNI: `vpdpbusd` (unsigned lhs bytes, signed rhs bytes).",
        |acc, a, b| _mm512_dpbusd_epi32(acc, a, b)
    );
    isa512!(
        Avx512I16,
        "i16 pairs, AVX-512BW: `vpmaddwd` + `vpaddd`.",
        |acc, a, b| _mm512_add_epi32(acc, _mm512_madd_epi16(a, b))
    );
    isa512!(
        Avx512I32,
        "i32, AVX-512F: `vpmulld` + `vpaddd`.",
        |acc, a, b| _mm512_add_epi32(acc, _mm512_mullo_epi32(a, b))
    );
    isa512!(
        Avx512Bf16,
        "bf16 pairs, AVX512-BF16: `vdpbf16ps`.",
        |acc, a, b| {
            _mm512_castps_si512(_mm512_dpbf16_ps(
                _mm512_castsi512_ps(acc),
                std::mem::transmute::<__m512i, __m512bh>(a),
                std::mem::transmute::<__m512i, __m512bh>(b),
            ))
        }
    );
    isa256!(
        Avx2I16,
        "i16 pairs, AVX2: `vpmaddwd` + `vpaddd`.",
        |acc, a, b| _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
    );
    isa256!(Avx2I32, "i32, AVX2: `vpmulld` + `vpaddd`.", |acc, a, b| {
        _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b))
    });
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::*;

/// Portable integer words: arrays of 4 lanes, plain wrapping arithmetic.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableInt<const PAIRS: bool>;

// SAFETY: plain Rust; only the pointers' validity is the caller's to ensure.
unsafe impl<const PAIRS: bool> WordIsa for PortableInt<PAIRS> {
    type V = [u32; 4];
    const LANES: usize = 4;
    const MR: usize = 4;
    const NV: usize = 2;
    #[inline(always)]
    unsafe fn zero() -> [u32; 4] {
        [0; 4]
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> [u32; 4] {
        unsafe { p.cast::<[u32; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn splat(p: *const u32) -> [u32; 4] {
        [unsafe { p.read() }; 4]
    }
    #[inline(always)]
    unsafe fn step(acc: [u32; 4], a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
        std::array::from_fn(|i| {
            let prod = if PAIRS {
                let lo = (a[i] as i16 as i32).wrapping_mul(b[i] as i16 as i32);
                let hi = ((a[i] >> 16) as i16 as i32).wrapping_mul((b[i] >> 16) as i16 as i32);
                lo.wrapping_add(hi) as u32
            } else {
                a[i].wrapping_mul(b[i])
            };
            acc[i].wrapping_add(prod)
        })
    }
    #[inline(always)]
    unsafe fn add(a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
        std::array::from_fn(|i| a[i].wrapping_add(b[i]))
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: [u32; 4]) {
        unsafe { p.cast::<[u32; 4]>().write_unaligned(v) }
    }
    #[inline(always)]
    fn add_scalar(a: u32, b: u32) -> u32 {
        wrapping_add(a, b)
    }
}

/// Portable f32 words: arrays of 4 lanes, a rounded multiply then add (as
/// the f32 GEMM's portable kernel).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableF32;

// SAFETY: plain Rust; only the pointers' validity is the caller's to ensure.
unsafe impl WordIsa for PortableF32 {
    type V = [f32; 4];
    const LANES: usize = 4;
    const MR: usize = 4;
    const NV: usize = 2;
    #[inline(always)]
    unsafe fn zero() -> [f32; 4] {
        [0.0; 4]
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> [f32; 4] {
        unsafe { p.cast::<[f32; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn splat(p: *const u32) -> [f32; 4] {
        [unsafe { p.cast::<f32>().read() }; 4]
    }
    #[inline(always)]
    unsafe fn step(acc: [f32; 4], a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        std::array::from_fn(|i| a[i] * b[i] + acc[i])
    }
    #[inline(always)]
    unsafe fn add(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        std::array::from_fn(|i| a[i] + b[i])
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, v: [f32; 4]) {
        unsafe { p.cast::<[f32; 4]>().write_unaligned(v) }
    }
    #[inline(always)]
    fn add_scalar(a: u32, b: u32) -> u32 {
        (f32::from_bits(a) + f32::from_bits(b)).to_bits()
    }
}

/// The instruction set a word product runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordLevel {
    Portable,
    Avx2,
    Avx512,
    /// AVX-512 with VNNI (integer pairs) and BF16 (bf16 pairs) where the
    /// processor has each.
    Avx512Ext,
    /// `Avx512Ext`, with bf16 and 8-bit integer products of at least 16
    /// rows and columns on AMX tiles ([`super::amx`]).
    Amx,
}

fn has_vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *V.get_or_init(|| std::arch::is_x86_feature_detected!("avx512vnni"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

fn has_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *V.get_or_init(|| std::arch::is_x86_feature_detected!("avx512bf16"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The word level for a vector level (`None`: [`crate::vmath::level`]).
pub fn word_level(level: Option<Level>) -> WordLevel {
    match super::effective_level(level) {
        Level::Baseline => WordLevel::Portable,
        Level::Avx2 => WordLevel::Avx2,
        Level::Avx512 if has_bf16() && super::amx::usable() => WordLevel::Amx,
        Level::Avx512 => WordLevel::Avx512Ext,
    }
}

/// Whether `kind` has a kernel at `level` on this processor.
pub fn supported(kind: WordKind, level: WordLevel) -> bool {
    match kind {
        WordKind::Bf16Pairs => matches!(level, WordLevel::Avx512Ext | WordLevel::Amx) && has_bf16(),
        _ => true,
    }
}

/// Fewest multiply-adds of a byte product for AMX: below, packing for the
/// tiles costs more than VNNI's whole product (32 attention heads of
/// `[128, 64] x [64, 128]` took 2.4x VNNI's time on AMX, `[4096, 512] x
/// [512, 16]` 0.9x; bf16 products, twice as slow under AVX-512, gain on
/// AMX at every size tried).
const AMX_INT8_MIN_MACS: usize = 1 << 22;

/// `C = A·B` over words of `E::KIND`: `C` holds i32 (integer kinds) or
/// f32 (bf16 pairs) bits.
///
/// # Safety
/// As [`super::gemm`]; `supported(E::KIND, level)`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn word_gemm<E: WordSource>(
    level: WordLevel,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m as isize {
            for j in 0..n as isize {
                // SAFETY: (i, j) lies in C.
                unsafe { c.ptr.offset(i * c.rs + j * c.cs).write(0) };
            }
        }
        return;
    }
    if level == WordLevel::Amx && m >= 16 && n >= 16 && k >= 16 {
        use super::amx::{self, Insn};
        let bytes = size_of::<E>() == 1 && E::KIND == WordKind::I16Pairs;
        // SAFETY (each): forwarded; the level says AMX-BF16 is usable, the
        // support probe AMX-INT8; the lanes are as wide as the operands.
        if E::KIND == WordKind::Bf16Pairs && size_of::<E>() == 2 {
            unsafe { amx::gemm::<E, u16>(Insn::Bf16, m, n, k, a, b, c, parallel) };
            return;
        }
        if bytes && amx::support().int8 && m * n * k >= AMX_INT8_MIN_MACS {
            // s8 operands flip the lhs to unsigned for VNNI (`FLIP_A`), u8
            // ones the rhs to signed: AMX multiplies either as they are.
            let insn = if E::FLIP_A != 0 { Insn::Ssd } else { Insn::Uud };
            unsafe { amx::gemm::<E, u8>(insn, m, n, k, a, b, c, parallel) };
            return;
        }
    }
    if level == WordLevel::Amx {
        // SAFETY: forwarded, at the level AMX extends.
        return unsafe { word_gemm(WordLevel::Avx512Ext, m, n, k, a, b, c, parallel) };
    }
    // SAFETY: forwarded.
    if unsafe { try_int_gemv(level, m, n, k, a, b, c) } {
        return;
    }
    assert!(
        supported(E::KIND, level),
        "{:?} has no kernel at {level:?}",
        E::KIND
    );
    // A column-major C, or few columns and many rows: Cᵀ = Bᵀ·Aᵀ keeps the
    // stores contiguous and the vectors along the long side.
    let job = if (c.cs != 1 && c.rs == 1) || (n < 16 && m > n) {
        WordJob {
            kind: E::KIND,
            m: n,
            n: m,
            k,
            a: Strided {
                ptr: b.ptr,
                rs: b.cs,
                cs: b.rs,
            },
            b: Strided {
                ptr: a.ptr,
                rs: a.cs,
                cs: a.rs,
            },
            c: StridedMut {
                ptr: c.ptr,
                rs: c.cs,
                cs: c.rs,
            },
            parallel,
        }
    } else {
        WordJob {
            kind: E::KIND,
            m,
            n,
            k,
            a,
            b,
            c,
            parallel,
        }
    };
    // SAFETY: forwarded; the transposed job describes the same matrices.
    unsafe { E::dispatch(&job, level) }
}

/// Integer matrix-vector products (`m = 1` or `n = 1`, the matrix's rows
/// or columns contiguous), exact: the matrix streamed in place, where the
/// word GEMM would pack all of it to fill one row of each tile. False (and
/// nothing written) otherwise.
///
/// # Safety
/// As [`word_gemm`].
#[allow(clippy::too_many_arguments)]
unsafe fn try_int_gemv<E: WordSource>(
    level: WordLevel,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
) -> bool {
    if !matches!(E::KIND, WordKind::I16Pairs | WordKind::I32) {
        return false;
    }
    let (rows, mat, x, xs, y, ys) = if n == 1 && m > 1 {
        (m, a, b.ptr, b.rs, c.ptr, c.rs)
    } else if m == 1 && n > 1 {
        let bt = Strided {
            ptr: b.ptr,
            rs: b.cs,
            cs: b.rs,
        };
        (n, bt, a.ptr, a.cs, c.ptr, c.cs)
    } else {
        return false;
    };
    if !(mat.cs == 1 || mat.rs == 1) {
        return false;
    }
    // SAFETY: x has k elements at stride xs.
    let xv: Vec<i32> = (0..k)
        .map(|p| unsafe { x.offset(p as isize * xs).read() }.lane32() as i32)
        .collect();
    let job = IntGemv {
        rows,
        mat,
        x: &xv,
        y,
        ys,
    };
    // SAFETY: the level is at most the detected one; the views are valid.
    unsafe {
        match level {
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx512 | WordLevel::Avx512Ext => int_gemv_avx512(&job),
            #[cfg(target_arch = "x86_64")]
            WordLevel::Avx2 => int_gemv_avx2(&job),
            _ => job.run(),
        }
    }
    true
}

struct IntGemv<'a, E> {
    rows: usize,
    mat: Strided<E>,
    x: &'a [i32],
    y: *mut u32,
    ys: isize,
}

impl<E: WordSource> IntGemv<'_, E> {
    /// # Safety
    /// The matrix (`rows × x.len()`) and y (`rows` at stride `ys`) are valid.
    #[inline(always)]
    unsafe fn run(&self) {
        let k = self.x.len();
        // SAFETY (whole body): every access lies in the matrix or y.
        unsafe {
            if self.mat.cs == 1 {
                for i in 0..self.rows {
                    let row = self.mat.at(i, 0);
                    let mut s = 0i32;
                    for (p, &xp) in self.x.iter().enumerate() {
                        s = s.wrapping_add((row.add(p).read().lane32() as i32).wrapping_mul(xp));
                    }
                    self.y.offset(i as isize * self.ys).write(s as u32);
                }
            } else {
                let mut acc = vec![0i32; self.rows];
                for p in 0..k {
                    let col = self.mat.at(0, p);
                    let xp = self.x[p];
                    for (i, s) in acc.iter_mut().enumerate() {
                        *s = s.wrapping_add((col.add(i).read().lane32() as i32).wrapping_mul(xp));
                    }
                }
                for (i, &s) in acc.iter().enumerate() {
                    self.y.offset(i as isize * self.ys).write(s as u32);
                }
            }
        }
    }
}

/// [`IntGemv::run`] compiled with AVX-512.
///
/// # Safety
/// As [`IntGemv::run`]; the processor has AVX-512F/BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,avx512f,avx512bw,avx512vl")]
unsafe fn int_gemv_avx512<E: WordSource>(job: &IntGemv<'_, E>) {
    // SAFETY: forwarded.
    unsafe { job.run() }
}

/// [`IntGemv::run`] compiled with AVX2.
///
/// # Safety
/// As [`IntGemv::run`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma")]
unsafe fn int_gemv_avx2<E: WordSource>(job: &IntGemv<'_, E>) {
    // SAFETY: forwarded.
    unsafe { job.run() }
}

#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct WordJob<E> {
    kind: WordKind,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<E>,
    b: Strided<E>,
    c: StridedMut<u32>,
    parallel: bool,
}

/// One rectangle of C, compiled for one instruction set.
///
/// # Safety
/// The rectangle lies in C and no other thread touches it; the processor
/// has the instruction set.
type RectFn<E> = unsafe fn(&WordJob<E>, Range<usize>, Range<usize>, &mut Buffers);

/// Splits C over the compute pool and runs each rectangle through `rect`.
/// The trampoline is chosen before the split: the pool's threads run the
/// closure below as plain code, and each part re-enters compiled code of the
/// right level through the function pointer.
///
/// # Safety
/// `rect`'s instruction set is present; the job's views are valid.
unsafe fn run<E: WordSource>(job: &WordJob<E>, mr: usize, nr: usize, rect: RectFn<E>) {
    let (m, n) = (job.m, job.n);
    let threads = compute_pool().current_num_threads();
    let (tm, tn) = if job.parallel && threads > 1 && m * n * job.k >= PARALLEL_MIN_MACS {
        split(m, n, job.k, threads, mr, nr)
    } else {
        (1, 1)
    };
    if tm * tn == 1 {
        // SAFETY: the whole of C on this thread.
        with_buffers(|bufs| unsafe { rect(job, 0..m, 0..n, bufs) });
        return;
    }
    let rows_per = m.div_ceil(mr).div_ceil(tm) * mr;
    let cols_per = n.div_ceil(nr).div_ceil(tn) * nr;
    let part = |t: usize| {
        let (pi, pj) = (t / tn, t % tn);
        let rows = (pi * rows_per).min(m)..((pi + 1) * rows_per).min(m);
        let cols = (pj * cols_per).min(n)..((pj + 1) * cols_per).min(n);
        if !rows.is_empty() && !cols.is_empty() {
            // SAFETY: disjoint rectangles of C; the caller checked the
            // instruction set.
            with_buffers(|bufs| unsafe { rect(job, rows, cols, bufs) });
        }
    };
    run_tasks(tm * tn, part);
}

// SAFETY: the views are read-only (A, B) or cut into disjoint rectangles (C).
unsafe impl<E: Sync> Sync for WordJob<E> {}

/// [`rect`] compiled with AVX-512 plus VNNI and BF16 (the target features
/// sit on named functions so the kernel's intrinsics inline into code
/// compiled with them).
///
/// # Safety
/// As [`RectFn`]; the processor has AVX-512F/BW and the extension `W` uses.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16")]
unsafe fn rect_avx512_ext<W: WordIsa, E: WordSource>(
    job: &WordJob<E>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut Buffers,
) {
    // SAFETY: forwarded.
    unsafe { rect::<W, E>(job, rows, cols, bufs) }
}

/// [`rect`] compiled with AVX-512F/BW.
///
/// # Safety
/// As [`RectFn`]; the processor has AVX-512F/BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,avx512f,avx512bw,avx512vl")]
unsafe fn rect_avx512<W: WordIsa, E: WordSource>(
    job: &WordJob<E>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut Buffers,
) {
    // SAFETY: forwarded.
    unsafe { rect::<W, E>(job, rows, cols, bufs) }
}

/// [`rect`] compiled with AVX2.
///
/// # Safety
/// As [`RectFn`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma")]
unsafe fn rect_avx2<W: WordIsa, E: WordSource>(
    job: &WordJob<E>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut Buffers,
) {
    // SAFETY: forwarded.
    unsafe { rect::<W, E>(job, rows, cols, bufs) }
}

/// [`rect`] as plain code.
///
/// # Safety
/// As [`RectFn`].
unsafe fn rect_portable<W: WordIsa, E: WordSource>(
    job: &WordJob<E>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut Buffers,
) {
    // SAFETY: forwarded.
    unsafe { rect::<W, E>(job, rows, cols, bufs) }
}

/// The blocked loops for one rectangle of C.
#[inline(always)]
unsafe fn rect<W: WordIsa, E: WordSource>(
    job: &WordJob<E>,
    rows: Range<usize>,
    cols: Range<usize>,
    bufs: &mut Buffers,
) {
    let per = job.kind.per_word();
    let kw = job.k.div_ceil(per);
    let bl = Blocking::for_tile::<u32>(W::MR, W::NR);
    let kc = super::even_block(kw, bl.kc, 1);
    let mc = super::even_block(rows.len(), bl.mc, W::MR);
    let nc_target = if rows.len() <= mc {
        bl.nc_one_pass
    } else {
        bl.nc
    };
    let nc = super::even_block(cols.len(), nc_target, W::NR);
    let row_panels = job.a.cs == 1;
    // A bf16 lhs with contiguous rows already is row panels of bf16 pairs,
    // and `vdpbf16ps` treats subnormal inputs as zero, as packing's flush
    // does: with one rhs panel (each lhs word feeds a single tile, so
    // packing would double the traffic of the largest operand), whole
    // strips are read in place when every row starts on a word (an even
    // `k` and row stride, an aligned base); a ragged last strip is packed.
    let a_in_place = job.kind == WordKind::Bf16Pairs
        && row_panels
        && cols.len() <= W::NR
        && job.k.is_multiple_of(2)
        && job.a.rs > 0
        && (job.a.rs as usize).is_multiple_of(2)
        && (job.a.ptr as usize).is_multiple_of(4);
    // Byte quads' corrections (see `WordSource::FLIP_A`), added as the
    // first k slice is stored: 128·Σ_p a[i][p] per row for a flipped rhs,
    // −128·Σ_p b[p][j] per column for a flipped lhs.
    let mut row_bias = Vec::new();
    let mut col_bias = Vec::new();
    if job.kind == WordKind::I8Quads {
        // SAFETY: the sums read rows `rows` and columns `cols` of A and B.
        unsafe {
            if E::FLIP_B != 0 {
                row_bias = vec![0u32; rows.len().next_multiple_of(W::MR)];
                for (i, bias) in rows.clone().zip(row_bias.iter_mut()) {
                    let mut sum = 0u32;
                    for p in 0..job.k {
                        sum = sum.wrapping_add(job.a.at(i, p).read().lane32());
                    }
                    *bias = sum.wrapping_mul(128);
                }
            }
            if E::FLIP_A != 0 {
                col_bias = vec![0u32; cols.len().next_multiple_of(W::NR)];
                let sums = &mut col_bias[..cols.len()];
                for p in 0..job.k {
                    for (j, sum) in cols.clone().zip(sums.iter_mut()) {
                        *sum = sum.wrapping_add(job.b.at(p, j).read().lane32());
                    }
                }
                for sum in sums {
                    *sum = sum.wrapping_mul(128).wrapping_neg();
                }
            }
        }
    }
    let mut j0 = cols.start;
    while j0 < cols.end {
        let ncb = nc.min(cols.end - j0);
        let panels = ncb.div_ceil(W::NR);
        let mut p0 = 0;
        while p0 < kw {
            let kcb = kc.min(kw - p0);
            let bbuf = bufs.b.get(panels * W::NR * kcb);
            // SAFETY: the block lies in B; the buffer holds its panels.
            unsafe { pack_b::<E>(job.kind, &job.b, job.k, p0, kcb, j0, ncb, W::NR, bbuf) };
            let mut i0 = rows.start;
            while i0 < rows.end {
                let mcb = mc.min(rows.end - i0);
                let strips = mcb.div_ceil(W::MR);
                let in_place = if a_in_place { mcb / W::MR } else { 0 };
                let abuf = bufs.a.get((strips - in_place) * W::MR * kcb);
                if in_place < strips {
                    let first = in_place * W::MR;
                    // SAFETY: the block lies in A; the buffer holds its
                    // strips from `first` on.
                    unsafe {
                        pack_a::<E>(
                            job.kind,
                            &job.a,
                            job.k,
                            i0 + first,
                            mcb - first,
                            p0,
                            kcb,
                            W::MR,
                            row_panels,
                            abuf,
                        )
                    };
                }
                let (ars, aps) = if row_panels { (kcb, 1) } else { (1, W::MR) };
                // Strip `s`'s first word and its row and word strides.
                let strip = |s: usize| {
                    if s < in_place {
                        // SAFETY: row i0 + s·MR of A, word p0 of it (the
                        // checks on `a_in_place` make it a whole word).
                        let row = unsafe { job.a.at(i0 + s * W::MR, 0).cast::<u32>() };
                        (row.wrapping_add(p0), job.a.rs as usize / 2, 1)
                    } else {
                        let packed = abuf.wrapping_add((s - in_place) * W::MR * kcb);
                        (packed.cast_const(), ars, aps)
                    }
                };
                for q in 0..panels {
                    let jq = j0 + q * W::NR;
                    let n_eff = W::NR.min(j0 + ncb - jq);
                    for s in 0..strips {
                        let is = i0 + s * W::MR;
                        let m_eff = W::MR.min(i0 + mcb - is);
                        let bias = Bias {
                            row: if row_bias.is_empty() {
                                std::ptr::null()
                            } else {
                                row_bias[is - rows.start..].as_ptr()
                            },
                            col: if col_bias.is_empty() {
                                std::ptr::null()
                            } else {
                                col_bias[jq - cols.start..].as_ptr()
                            },
                        };
                        let (ap, ars, aps) = strip(s);
                        // SAFETY: strip s is packed or read in place, panel
                        // q packed; the tile's m_eff × n_eff elements lie in
                        // C's rectangle.
                        unsafe {
                            tile::<W>(
                                kcb,
                                ap,
                                ars,
                                aps,
                                bbuf.add(q * W::NR * kcb),
                                job.c
                                    .ptr
                                    .offset(is as isize * job.c.rs + jq as isize * job.c.cs),
                                job.c.rs,
                                job.c.cs,
                                m_eff,
                                n_eff,
                                p0 > 0,
                                bias,
                            )
                        };
                    }
                }
                i0 += mcb;
            }
            p0 += kcb;
        }
        j0 += ncb;
    }
}

/// The word of k-word `w` along a line of `len` elements whose `i`-th
/// element is at `p + i·step`.
///
/// # Safety
/// The line's first `len` elements are readable.
#[inline(always)]
unsafe fn word<E: WordSource>(
    kind: WordKind,
    p: *const E,
    step: isize,
    w: usize,
    len: usize,
    flip: u32,
) -> u32 {
    // SAFETY: only elements below `len` are read.
    unsafe {
        match kind {
            WordKind::I32 | WordKind::F32 => p.offset(w as isize * step).read().lane32(),
            WordKind::I8Quads => {
                let mut v = 0;
                for t in 0..4 {
                    let i = 4 * w + t;
                    if i < len {
                        let byte = p.offset(i as isize * step).read().lane8() as u32 ^ flip;
                        v |= byte << (8 * t);
                    }
                }
                v
            }
            _ => {
                let i = 2 * w;
                let lo = p.offset(i as isize * step).read().lane16() as u32;
                let hi = if i + 1 < len {
                    p.offset((i + 1) as isize * step).read().lane16() as u32
                } else {
                    0
                };
                lo | hi << 16
            }
        }
    }
}

/// Packs k-words `p0..p0+kcb` of B's columns `j0..j0+ncb` into panels of
/// `nr` columns (each k-word a run of `nr` words), zero-padded.
///
/// # Safety
/// The block lies in B (`k` rows); `dst` holds `ceil(ncb/nr)·nr·kcb` words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b<E: WordSource>(
    kind: WordKind,
    b: &Strided<E>,
    k: usize,
    p0: usize,
    kcb: usize,
    j0: usize,
    ncb: usize,
    nr: usize,
    dst: *mut u32,
) {
    let panels = ncb.div_ceil(nr);
    let per = kind.per_word();
    for q in 0..panels {
        let jq = j0 + q * nr;
        let w = nr.min(j0 + ncb - jq);
        // SAFETY: every read is inside the block, every write inside the
        // panel.
        unsafe {
            let panel = dst.add(q * nr * kcb);
            if b.cs != 1 && b.rs == 1 {
                // k-contiguous columns (a transposed rhs; the matrix of a
                // matrix-vector product, whose product runs as `vector ·
                // matrixᵀ`): each column's words are read in order, a whole
                // word at a time. Word by word across the columns, each
                // element cost a call of `word`, with its bounds checks:
                // the packing was nine tenths of a bf16 matrix-vector
                // product.
                pack_b_columns(kind, b, k, p0, kcb, jq, w, nr, panel);
                continue;
            }
            for p in 0..kcb {
                let out = panel.add(p * nr);
                let kk = per * (p0 + p);
                if b.cs == 1 {
                    let r0 = b.at(kk, jq);
                    match kind {
                        WordKind::I8Quads if kk + 3 < k => {
                            let (r1, r2, r3) =
                                (b.at(kk + 1, jq), b.at(kk + 2, jq), b.at(kk + 3, jq));
                            let f = E::FLIP_B;
                            for j in 0..w {
                                *out.add(j) = (r0.add(j).read().lane8() as u32 ^ f)
                                    | (r1.add(j).read().lane8() as u32 ^ f) << 8
                                    | (r2.add(j).read().lane8() as u32 ^ f) << 16
                                    | (r3.add(j).read().lane8() as u32 ^ f) << 24;
                            }
                        }
                        WordKind::I8Quads => {
                            for j in 0..w {
                                *out.add(j) =
                                    word(kind, b.at(0, jq + j), b.rs, p0 + p, k, E::FLIP_B);
                            }
                        }
                        WordKind::I32 | WordKind::F32 => {
                            for j in 0..w {
                                *out.add(j) = r0.add(j).read().lane32();
                            }
                        }
                        _ if kk + 1 < k => {
                            let r1 = b.at(kk + 1, jq);
                            for j in 0..w {
                                *out.add(j) = r0.add(j).read().lane16() as u32
                                    | (r1.add(j).read().lane16() as u32) << 16;
                            }
                        }
                        _ => {
                            for j in 0..w {
                                *out.add(j) = r0.add(j).read().lane16() as u32;
                            }
                        }
                    }
                } else {
                    for j in 0..w {
                        let col = b.at(0, jq + j);
                        *out.add(j) = word(kind, col, b.rs, p0 + p, k, E::FLIP_B);
                    }
                }
                for j in w..nr {
                    *out.add(j) = 0;
                }
            }
        }
    }
}

/// [`pack_b`]'s panel of columns `jq..jq+w` when B's columns are
/// contiguous in k (`b.rs == 1`): words `p0..p0+kcb` of each column, column
/// `j`'s word `p` at `panel[p·nr + j]`, zero-padded to `nr` columns.
///
/// # Safety
/// As [`pack_b`]; `panel` holds `nr·kcb` words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b_columns<E: WordSource>(
    kind: WordKind,
    b: &Strided<E>,
    k: usize,
    p0: usize,
    kcb: usize,
    jq: usize,
    w: usize,
    nr: usize,
    panel: *mut u32,
) {
    let per = kind.per_word();
    // Words wholly inside k; the last, partial one goes through `word`.
    let full = (k / per).saturating_sub(p0).min(kcb);
    // SAFETY: the caller's block: column `jq + j` holds `k` elements at
    // unit stride, and the panel `nr·kcb` words.
    unsafe {
        for j in 0..w {
            let col = b.at(0, jq + j);
            let src = col.add(per * p0);
            let out = panel.add(j);
            match kind {
                WordKind::I8Quads => {
                    let f = E::FLIP_B * 0x0101_0101;
                    for p in 0..full {
                        let s = src.add(4 * p);
                        *out.add(p * nr) = (s.read().lane8() as u32
                            | (s.add(1).read().lane8() as u32) << 8
                            | (s.add(2).read().lane8() as u32) << 16
                            | (s.add(3).read().lane8() as u32) << 24)
                            ^ f;
                    }
                }
                WordKind::I32 | WordKind::F32 => {
                    for p in 0..full {
                        *out.add(p * nr) = src.add(p).read().lane32();
                    }
                }
                _ => {
                    for p in 0..full {
                        *out.add(p * nr) = src.add(2 * p).read().lane16() as u32
                            | (src.add(2 * p + 1).read().lane16() as u32) << 16;
                    }
                }
            }
            for p in full..kcb {
                *out.add(p * nr) = word(kind, col, 1, p0 + p, k, E::FLIP_B);
            }
        }
        for p in 0..kcb {
            for j in w..nr {
                *panel.add(p * nr + j) = 0;
            }
        }
    }
}

/// Packs k-words `p0..p0+kcb` of A's rows `i0..i0+mcb` into strips of `mr`
/// rows, zero-padded: row panels (each row's `kcb` words together) or column
/// panels (each k-word's `mr` words together).
///
/// # Safety
/// The block lies in A (`k` columns); `dst` holds `ceil(mcb/mr)·mr·kcb`
/// words.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pack_a<E: WordSource>(
    kind: WordKind,
    a: &Strided<E>,
    k: usize,
    i0: usize,
    mcb: usize,
    p0: usize,
    kcb: usize,
    mr: usize,
    row_panels: bool,
    dst: *mut u32,
) {
    let strips = mcb.div_ceil(mr);
    let per = kind.per_word();
    for s in 0..strips {
        let is = i0 + s * mr;
        let h = mr.min(i0 + mcb - is);
        // SAFETY: every read is inside the block, every write inside the
        // strip.
        unsafe {
            let strip = dst.add(s * mr * kcb);
            if row_panels {
                for r in 0..mr {
                    let out = strip.add(r * kcb);
                    if r >= h {
                        for p in 0..kcb {
                            *out.add(p) = 0;
                        }
                        continue;
                    }
                    let row = a.at(is + r, 0);
                    // Words wholly inside k.
                    let full = (k / per).saturating_sub(p0).min(kcb);
                    if per == 4 {
                        let src = row.add(4 * p0);
                        let f = E::FLIP_A * 0x0101_0101;
                        for p in 0..full {
                            let q = src.add(4 * p);
                            *out.add(p) = (q.read().lane8() as u32
                                | (q.add(1).read().lane8() as u32) << 8
                                | (q.add(2).read().lane8() as u32) << 16
                                | (q.add(3).read().lane8() as u32) << 24)
                                ^ f;
                        }
                    } else if per == 2 {
                        let src = row.add(2 * p0);
                        for p in 0..full {
                            *out.add(p) = src.add(2 * p).read().lane16() as u32
                                | (src.add(2 * p + 1).read().lane16() as u32) << 16;
                        }
                    } else {
                        let src = row.add(p0);
                        for p in 0..full {
                            *out.add(p) = src.add(p).read().lane32();
                        }
                    }
                    for p in full..kcb {
                        *out.add(p) = word(kind, row, 1, p0 + p, k, E::FLIP_A);
                    }
                }
            } else {
                for p in 0..kcb {
                    let out = strip.add(p * mr);
                    for r in 0..h {
                        *out.add(r) = word(kind, a.at(is + r, 0), a.cs, p0 + p, k, E::FLIP_A);
                    }
                    for r in h..mr {
                        *out.add(r) = 0;
                    }
                }
            }
        }
    }
}

/// Per-row and per-column terms added to a tile's first k slice: null, or
/// `MR` row values and `NR` column values (zero-padded past C's edges).
#[derive(Clone, Copy)]
struct Bias {
    row: *const u32,
    col: *const u32,
}

/// Widest tile row, in words.
const MAX_NR: usize = 64;

/// `C[0..m_eff, 0..n_eff] (+)= A·B` for one register tile.
///
/// # Safety
/// `a` valid for `W::MR` rows at stride `ars` and `kc` words at stride
/// `aps`; `b` for `kc` runs of `W::NR` words; `c` for `m_eff × n_eff`
/// elements at strides `rsc`, `csc`; `bias` as [`Bias`] says. The
/// instruction set of `W` is available.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tile<W: WordIsa>(
    kc: usize,
    a: *const u32,
    ars: usize,
    aps: usize,
    b: *const u32,
    c: *mut u32,
    rsc: isize,
    csc: isize,
    m_eff: usize,
    n_eff: usize,
    accumulate: bool,
    bias: Bias,
) {
    // The accumulators must be an array of exactly the tile's size to stay
    // in registers: one instance per tile shape.
    macro_rules! go {
        ($mr:literal, $nv:literal) => {
            // SAFETY: forwarded.
            unsafe {
                tile_fixed::<W, $mr, $nv>(
                    kc, a, ars, aps, b, c, rsc, csc, m_eff, n_eff, accumulate, bias,
                )
            }
        };
    }
    match (W::MR, W::NV) {
        (6, 4) => go!(6, 4),
        (6, 2) => go!(6, 2),
        (12, 1) => go!(12, 1),
        (8, 2) => go!(8, 2),
        _ => go!(4, 2),
    }
}

/// [`tile`] for an `MR × NV`-vector tile (`W::MR`, `W::NV`).
///
/// # Safety
/// As [`tile`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tile_fixed<W: WordIsa, const MR: usize, const NV: usize>(
    kc: usize,
    a: *const u32,
    ars: usize,
    aps: usize,
    b: *const u32,
    c: *mut u32,
    rsc: isize,
    csc: isize,
    m_eff: usize,
    n_eff: usize,
    accumulate: bool,
    bias: Bias,
) {
    debug_assert!(MR == W::MR && NV == W::NV && W::NR <= MAX_NR);
    // SAFETY (whole body): the caller guarantees every access is in bounds
    // and that the instruction set is available.
    unsafe {
        if csc == 1 {
            for i in 0..m_eff {
                let row = c.offset(i as isize * rsc).cast::<u8>();
                crate::kernels::prefetch_l1(row);
                crate::kernels::prefetch_l1(row.wrapping_add(4 * n_eff - 1));
            }
        }
        let mut acc = [[W::zero(); NV]; MR];
        let mut ap = a;
        let mut bp = b;
        for _ in 0..kc {
            let mut bv = [W::zero(); NV];
            for (v, slot) in bv.iter_mut().enumerate() {
                *slot = W::load(bp.add(v * W::LANES));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let av = W::splat(ap.add(i * ars));
                for (v, x) in row.iter_mut().enumerate() {
                    *x = W::step(*x, av, bv[v]);
                }
            }
            ap = ap.add(aps);
            bp = bp.add(NV * W::LANES);
        }
        // Corrections go in once, with the first k slice (which overwrites).
        if !accumulate && !bias.col.is_null() {
            for row in acc.iter_mut() {
                for (v, x) in row.iter_mut().enumerate() {
                    *x = W::add(*x, W::load(bias.col.add(v * W::LANES)));
                }
            }
        }
        if !accumulate && !bias.row.is_null() {
            for (i, row) in acc.iter_mut().enumerate() {
                let r = W::splat(bias.row.add(i));
                for x in row.iter_mut() {
                    *x = W::add(*x, r);
                }
            }
        }
        if csc == 1 && n_eff == NV * W::LANES {
            for (i, row) in acc.iter().enumerate().take(m_eff) {
                let out = c.offset(i as isize * rsc);
                for (v, x) in row.iter().enumerate() {
                    let p = out.add(v * W::LANES);
                    let val = if accumulate {
                        W::add(W::load(p), *x)
                    } else {
                        *x
                    };
                    W::store(p, val);
                }
            }
        } else {
            let mut buf = [0u32; MAX_NR];
            for (i, row) in acc.iter().enumerate().take(m_eff) {
                for (v, x) in row.iter().enumerate() {
                    W::store(buf.as_mut_ptr().add(v * W::LANES), *x);
                }
                let out = c.offset(i as isize * rsc);
                for (j, &x) in buf.iter().take(n_eff).enumerate() {
                    let p = out.offset(j as isize * csc);
                    *p = if accumulate { W::add_scalar(*p, x) } else { x };
                }
            }
        }
    }
}

/// A growable, 64-byte aligned buffer of words.
#[derive(Default)]
struct WordBuf {
    lines: Vec<Line>,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u32; 16]);

impl WordBuf {
    fn get(&mut self, n: usize) -> *mut u32 {
        let lines = n.div_ceil(16);
        if self.lines.len() < lines {
            self.lines.resize(lines, Line([0; 16]));
        }
        self.lines.as_mut_ptr().cast()
    }
}

#[derive(Default)]
struct Buffers {
    a: WordBuf,
    b: WordBuf,
}

thread_local! {
    static BUFFERS: Cell<Option<Box<Buffers>>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's packing buffers (taken out of the slot while
/// in use, so a nested product gets fresh ones).
fn with_buffers<R>(f: impl FnOnce(&mut Buffers) -> R) -> R {
    let mut bufs = BUFFERS.with(|slot| slot.take()).unwrap_or_default();
    let r = f(&mut bufs);
    BUFFERS.with(|slot| slot.set(Some(bufs)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    /// Deterministic pseudo-random values.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as u32
        }
    }

    fn levels() -> Vec<WordLevel> {
        let mut v = vec![WordLevel::Portable];
        let detected = crate::vmath::detected_level();
        if detected >= Level::Avx2 {
            v.push(WordLevel::Avx2);
        }
        if detected >= Level::Avx512 {
            v.push(WordLevel::Avx512);
            v.push(WordLevel::Avx512Ext);
            if super::super::amx::usable() {
                v.push(WordLevel::Amx);
            }
        }
        v
    }

    /// Odd sizes, k = 1 and 2, tails of every tile dimension, and products
    /// large enough to be blocked in k and split over threads.
    const SHAPES: &[(usize, usize, usize)] = &[
        (1, 1, 1),
        (1, 1, 7),
        (3, 5, 1),
        (4, 4, 2),
        (7, 1, 9),
        (1, 33, 17),
        (6, 64, 2),
        (13, 70, 31),
        (37, 129, 300),
        (65, 17, 513),
        (50, 200, 130),
        (70, 1, 33),
        (1, 90, 17),
        (40, 150, 300),
        // Narrow tiles (`narrow_shape`): exactly one and two vectors wide,
        // tall enough to be split over threads.
        (29, 16, 40),
        (100, 32, 70),
        (301, 16, 600),
        (203, 8, 1030),
    ];

    /// (lhs transposed, rhs transposed, C column-major).
    const LAYOUTS: &[(bool, bool, bool)] = &[
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (true, true, true),
    ];

    /// Runs every shape and layout at every level the processor has and
    /// compares each element with `want(row of A, column of B)`.
    fn check<E: WordSource, R: std::fmt::Debug>(
        gen: impl Fn(&mut Rng) -> E,
        want: impl Fn(&[E], &[E]) -> R,
        close: impl Fn(u32, &R) -> bool,
    ) {
        let mut rng = Rng(7);
        for &level in &levels() {
            if !supported(E::KIND, level) {
                continue;
            }
            for &(m, n, k) in SHAPES {
                for &(ta, tb, tc) in LAYOUTS {
                    let a: Vec<E> = (0..m * k).map(|_| gen(&mut rng)).collect();
                    let b: Vec<E> = (0..k * n).map(|_| gen(&mut rng)).collect();
                    // Physical buffers for the layout.
                    let pa: Vec<E> = if ta {
                        (0..m * k).map(|x| a[(x % m) * k + x / m]).collect()
                    } else {
                        a.clone()
                    };
                    let pb: Vec<E> = if tb {
                        (0..k * n).map(|x| b[(x % k) * n + x / k]).collect()
                    } else {
                        b.clone()
                    };
                    let (ars, acs) = if ta { (1, m) } else { (k, 1) };
                    let (brs, bcs) = if tb { (1, k) } else { (n, 1) };
                    let (crs, ccs) = if tc { (1, m) } else { (n, 1) };
                    let mut c = vec![0xdead_beef_u32; m * n];
                    // SAFETY: the views cover their buffers exactly.
                    unsafe {
                        word_gemm(
                            level,
                            m,
                            n,
                            k,
                            Strided {
                                ptr: pa.as_ptr(),
                                rs: ars as isize,
                                cs: acs as isize,
                            },
                            Strided {
                                ptr: pb.as_ptr(),
                                rs: brs as isize,
                                cs: bcs as isize,
                            },
                            StridedMut {
                                ptr: c.as_mut_ptr(),
                                rs: crs as isize,
                                cs: ccs as isize,
                            },
                            true,
                        )
                    };
                    let bt: Vec<E> = (0..n * k).map(|x| b[(x % k) * n + x / k]).collect();
                    for i in 0..m {
                        let row = &a[i * k..(i + 1) * k];
                        for j in 0..n {
                            let col = &bt[j * k..(j + 1) * k];
                            let (got, exp) = (c[i * crs + j * ccs], want(row, col));
                            assert!(
                                close(got, &exp),
                                "{level:?} {m}x{n}x{k} {:?}: C[{i}][{j}] = {got:#x}, want {exp:?}",
                                (ta, tb, tc)
                            );
                        }
                    }
                }
            }
        }
    }

    fn wrapping_dot<E: Copy>(to: impl Fn(E) -> i32) -> impl Fn(&[E], &[E]) -> u32 {
        move |a, b| {
            a.iter().zip(b).fold(0i32, |s, (&x, &y)| {
                s.wrapping_add(to(x).wrapping_mul(to(y)))
            }) as u32
        }
    }

    #[test]
    fn s8_exact() {
        check::<i8, _>(
            |r| r.next() as i8,
            wrapping_dot(|x: i8| x as i32),
            |g, w| g == *w,
        );
    }

    #[test]
    fn u8_exact() {
        check::<u8, _>(
            |r| r.next() as u8,
            wrapping_dot(|x: u8| x as i32),
            |g, w| g == *w,
        );
    }

    /// A byte product large enough for the AMX tiles, against the exact
    /// sums, with the rhs row-major and column-major, at the AMX level
    /// (where the processor has it; elsewhere there is nothing to run).
    ///
    /// The shapes reach both of the AMX product's forms: B streamed a pass
    /// of panels at a time (few rows; one pass and several, a narrow last
    /// panel, k ending inside a tile) and B packed whole first (A over
    /// `STREAM_A_BYTES` packed).
    fn amx_bytes_exact<E: WordSource>(gen: impl Fn(&mut Rng) -> E, value: impl Fn(E) -> i32) {
        if !super::super::amx::support().int8 {
            eprintln!("no AMX-INT8 here: the byte tile products are not run");
            return;
        }
        for (m, n, k) in [(70, 130, 470), (40, 600, 300), (1100, 37, 1000)] {
            amx_bytes_exact_at(m, n, k, &gen, &value);
        }
    }

    /// An exact-sum integer check of one AMX byte product shape.
    fn amx_bytes_exact_at<E: WordSource>(
        m: usize,
        n: usize,
        k: usize,
        gen: impl Fn(&mut Rng) -> E,
        value: impl Fn(E) -> i32,
    ) {
        assert!(m * n * k >= AMX_INT8_MIN_MACS);
        let mut rng = Rng(11);
        let a: Vec<E> = (0..m * k).map(|_| gen(&mut rng)).collect();
        let b: Vec<E> = (0..k * n).map(|_| gen(&mut rng)).collect();
        let bt: Vec<E> = (0..k * n).map(|x| b[(x % k) * n + x / k]).collect();
        for (pb, brs, bcs) in [(&b, n, 1), (&bt, 1, k)] {
            let mut c = vec![0xdead_beef_u32; m * n];
            // SAFETY: the views cover their buffers exactly.
            unsafe {
                word_gemm(
                    WordLevel::Amx,
                    m,
                    n,
                    k,
                    Strided {
                        ptr: a.as_ptr(),
                        rs: k as isize,
                        cs: 1,
                    },
                    Strided {
                        ptr: pb.as_ptr(),
                        rs: brs as isize,
                        cs: bcs as isize,
                    },
                    StridedMut {
                        ptr: c.as_mut_ptr(),
                        rs: n as isize,
                        cs: 1,
                    },
                    true,
                )
            };
            for i in 0..m {
                for j in 0..n {
                    let want = (0..k).fold(0i32, |s, p| {
                        s.wrapping_add(value(a[i * k + p]).wrapping_mul(value(b[p * n + j])))
                    });
                    assert_eq!(
                        c[i * n + j] as i32,
                        want,
                        "{m}x{n}x{k} C[{i},{j}] (rhs strides {brs}, {bcs})"
                    );
                }
            }
        }
    }

    #[test]
    fn amx_byte_products_are_exact() {
        amx_bytes_exact(|r| r.next() as i8, |x| x as i32);
        amx_bytes_exact(|r| r.next() as u8, |x| x as i32);
    }

    #[test]
    fn s16_wraps_exactly() {
        // Extremes often, so pairs of (-2^15)² overflow i32 and must wrap.
        check::<i16, _>(
            |r| match r.next() % 4 {
                0 => i16::MIN,
                1 => i16::MAX,
                _ => r.next() as i16,
            },
            wrapping_dot(|x: i16| x as i32),
            |g, w| g == *w,
        );
    }

    #[test]
    fn s32_wraps_exactly() {
        check::<i32, _>(
            |r| (r.next() as i32).wrapping_mul(7919),
            wrapping_dot(|x: i32| x),
            |g, w| g == *w,
        );
    }

    #[test]
    fn f16_converts_exactly_and_accumulates_in_f32() {
        // Every f16 bit pattern converts as the `half` crate does.
        for h in 0..=u16::MAX {
            let (got, want) = (f16_to_f32_bits(h), half::f16::from_bits(h).to_f32());
            assert!(
                got == want.to_bits() || (want.is_nan() && f32::from_bits(got).is_nan()),
                "{h:#x}"
            );
        }
        check::<half::f16, _>(
            |r| match r.next() % 8 {
                // Subnormal f16 values stay (normal f32s).
                0 => half::f16::from_bits((r.next() % 1024) as u16),
                _ => half::f16::from_f32((r.next() % 2001) as f32 / 1000.0 - 1.0),
            },
            |a, b| {
                let s: f64 = a.iter().zip(b).map(|(x, y)| x.to_f64() * y.to_f64()).sum();
                let mag: f64 = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| (x.to_f64() * y.to_f64()).abs())
                    .sum();
                (s, mag)
            },
            |got, &(s, mag)| (f32::from_bits(got) as f64 - s).abs() <= mag * 1e-4 + 1e-30,
        );
    }

    /// `A·B` of row-major `m × k` and `k × n` operands at `level`, as C's
    /// lanes (row-major, threads allowed).
    fn row_major_product<E: WordSource>(
        level: WordLevel,
        m: usize,
        n: usize,
        k: usize,
        a: &[E],
        b: &[E],
    ) -> Vec<u32> {
        assert_eq!((a.len(), b.len()), (m * k, k * n));
        let mut c = vec![0u32; m * n];
        // SAFETY: row-major views of the buffers.
        unsafe {
            word_gemm(
                level,
                m,
                n,
                k,
                Strided {
                    ptr: a.as_ptr(),
                    rs: k as isize,
                    cs: 1,
                },
                Strided {
                    ptr: b.as_ptr(),
                    rs: n as isize,
                    cs: 1,
                },
                StridedMut {
                    ptr: c.as_mut_ptr(),
                    rs: n as isize,
                    cs: 1,
                },
                true,
            )
        };
        c
    }

    #[test]
    fn bf16_subnormals_read_in_place_count_as_zero() {
        // A tall product against one rhs panel reads the bf16 lhs in place,
        // unflushed: `vdpbf16ps` must treat its subnormals as zero, as the
        // packing's flush does. A subnormal times 2^100 would show as 1e-9.
        let (m, n, k) = (40, 16, 8);
        let mut a: Vec<bf16> = (0..m * k)
            .map(|i| bf16::from_f32((i % 5) as f32 - 2.0))
            .collect();
        // Row 17 is zero but for the subnormal, so nothing hides it.
        a[17 * k..18 * k].fill(bf16::ZERO);
        a[17 * k + 3] = bf16::from_bits(0x0001);
        let b = vec![bf16::from_f32(2f32.powi(100)); k * n];
        for &level in &levels() {
            if !supported(WordKind::Bf16Pairs, level) {
                continue;
            }
            let c = row_major_product(level, m, n, k, &a, &b);
            for i in 0..m {
                let exact: f64 = a[i * k..(i + 1) * k]
                    .iter()
                    .map(|x| {
                        2f64.powi(100)
                            * if x.to_f32().is_subnormal() {
                                0.0
                            } else {
                                x.to_f64()
                            }
                    })
                    .sum();
                for j in 0..n {
                    assert_eq!(
                        f32::from_bits(c[i * n + j]) as f64,
                        exact,
                        "{level:?} C[{i},{j}]"
                    );
                }
            }
        }
    }

    #[test]
    fn bf16_subnormals_in_the_rhs_count_as_zero() {
        // Whole 16-column panels and a panel's tail, an even and an odd k:
        // every way the rhs is packed, streamed (few rows) and packed whole
        // (600 rows of k = 1000: over a MiB of packed A). A subnormal times
        // 2^100 would show.
        for (m, n, k) in [(32, 48, 40), (20, 37, 41), (600, 40, 1000)] {
            let a = vec![bf16::from_f32(2f32.powi(100)); m * k];
            let b: Vec<bf16> = (0..k * n)
                .map(|i| match i % 7 {
                    0 => bf16::from_bits(0x0001 + (i % 100) as u16),
                    1 => bf16::from_bits(0x8003),
                    2 => bf16::from_f32(-0.5),
                    3 => bf16::from_f32(1.0),
                    _ => bf16::ZERO,
                })
                .collect();
            for &level in &levels() {
                if !supported(WordKind::Bf16Pairs, level) {
                    continue;
                }
                let c = row_major_product(level, m, n, k, &a, &b);
                for j in 0..n {
                    let exact: f64 = (0..k)
                        .map(|p| b[p * n + j])
                        .filter(|x| !x.to_f32().is_subnormal())
                        .map(|x| 2f64.powi(100) * x.to_f64())
                        .sum();
                    for i in 0..m {
                        assert_eq!(
                            f32::from_bits(c[i * n + j]) as f64,
                            exact,
                            "{level:?} {m}x{n}x{k} C[{i},{j}]"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bf16_accumulates_in_f32() {
        // Only where AVX512-BF16 exists; elsewhere bf16 dots take the f32 GEMM.
        check::<bf16, _>(
            |r| bf16::from_f32((r.next() % 2001) as f32 / 1000.0 - 1.0),
            |a, b| {
                let s: f64 = a.iter().zip(b).map(|(x, y)| x.to_f64() * y.to_f64()).sum();
                let mag: f64 = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| (x.to_f64() * y.to_f64()).abs())
                    .sum();
                (s, mag)
            },
            |got, &(s, mag)| {
                // k·2⁻²⁴·Σ|ab| for the largest k tested, with room to spare.
                (f32::from_bits(got) as f64 - s).abs() <= mag * 1e-4 + 1e-30
            },
        );
    }
}
