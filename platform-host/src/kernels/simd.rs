//! SIMD dispatch for kernel loops.
//!
//! The crate is built for the baseline x86-64 (SSE2). [`multiversion!`] wraps
//! a generic loop so it runs compiled for AVX2+FMA when the processor has them
//! (detected once) and for the baseline otherwise: the hot loops of kernels
//! (elementwise, reductions, transposes) vectorize 8-wide without building the
//! crate for a specific CPU. (`crate::vmath` has its own three-level dispatch
//! for its math kernels.)

/// Whether AVX2 and FMA are available (checked once).
#[inline]
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Declares `$name`, which runs the generic `$body` function compiled for
/// AVX2+FMA when the processor has them and for the baseline otherwise. The
/// wrapper has the same signature as the body (an `unsafe fn`).
#[macro_export]
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident <$($g:ident $(: $b:path)?),*> ($($v:ident : $t:ty),* $(,)?) => $body:path) => {
        $crate::multiversion!($(#[$m])* $vis unsafe fn $name<$($g $(: $b)?),*>($($v: $t),*) -> () => $body);
    };
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident <$($g:ident $(: $b:path)?),*> ($($v:ident : $t:ty),* $(,)?) -> $ret:ty => $body:path) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($g $(: $b)?),*>($($v: $t),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn avx2<$($g $(: $b)?),*>($($v: $t),*) -> $ret {
                // SAFETY: forwarded from the wrapper's caller.
                unsafe { $body($($v),*) }
            }
            #[cfg(target_arch = "x86_64")]
            if $crate::kernels::simd::has_avx2_fma() {
                // SAFETY: the processor has AVX2 and FMA (checked above); the
                // rest is the caller's contract.
                return unsafe { avx2($($v),*) };
            }
            // SAFETY: the caller's contract.
            unsafe { $body($($v),*) }
        }
    };
}
