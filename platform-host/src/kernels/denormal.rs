//! Subnormal operands of matrix products.
//!
//! x86 cores take a microcode assist for every arithmetic operation on a
//! subnormal number, about a hundred times the normal cost. XLA CPU runs with
//! the processor's flush-to-zero modes on, so a GEMM that meets subnormals (an
//! attention matrix after `exp` of masked scores is full of them) runs at full
//! speed there. This project keeps subnormals in elementwise arithmetic (the
//! shared semantics define them), so the Host cannot switch the modes on; and
//! changing the floating-point environment under compiled Rust code is not
//! sound anyway. Instead, GEMM-based kernels (dot, convolution) check their f32
//! and f64 operands for subnormals with one vectorized pass and, if there are
//! any, multiply a copy in which they are replaced by zero of the same sign —
//! what the flush-to-zero modes would do. The products differ from the exact
//! ones by less than the smallest normal number per term.

/// Float types whose subnormals can be detected and flushed.
pub trait Flushable: Copy + Send + Sync {
    fn is_subnormal(self) -> bool;
    fn flushed(self) -> Self;
}

impl Flushable for f32 {
    #[inline(always)]
    fn is_subnormal(self) -> bool {
        let b = self.to_bits();
        b & 0x7f80_0000 == 0 && b & 0x007f_ffff != 0
    }
    #[inline(always)]
    fn flushed(self) -> Self {
        // A zero exponent field keeps only the sign (a subnormal becomes zero,
        // a zero stays itself). Written as a mask, not a branch: in place, a
        // branch is vectorised as a masked store, slow on AMD processors.
        let b = self.to_bits();
        let keep = ((b & 0x7f80_0000 != 0) as u32).wrapping_neg() | 0x8000_0000;
        f32::from_bits(b & keep)
    }
}

impl Flushable for f64 {
    #[inline(always)]
    fn is_subnormal(self) -> bool {
        let b = self.to_bits();
        b & 0x7ff0_0000_0000_0000 == 0 && b & 0x000f_ffff_ffff_ffff != 0
    }
    #[inline(always)]
    fn flushed(self) -> Self {
        // As for f32.
        let b = self.to_bits();
        let keep = ((b & 0x7ff0_0000_0000_0000 != 0) as u64).wrapping_neg() | 0x8000_0000_0000_0000;
        f64::from_bits(b & keep)
    }
}

/// # Safety
/// None beyond the slice's validity.
unsafe fn any_subnormal_body<T: Flushable>(xs: &[T]) -> bool {
    // Branch-free within a chunk so the loop vectorizes; stop between chunks.
    xs.chunks(1024)
        .any(|c| c.iter().fold(false, |acc, &v| acc | v.is_subnormal()))
}

/// # Safety
/// None beyond the slice's validity.
unsafe fn flush_body<T: Flushable>(xs: &mut [T]) {
    for v in xs.iter_mut() {
        *v = v.flushed();
    }
}

crate::multiversion!(unsafe fn any_subnormal_simd<T: Flushable>(xs: &[T]) -> bool => any_subnormal_body);
crate::multiversion!(unsafe fn flush_simd<T: Flushable>(xs: &mut [T]) => flush_body);

/// Whether any element is subnormal.
pub fn any_subnormal<T: Flushable>(xs: &[T]) -> bool {
    // SAFETY: the bodies only read the slice.
    unsafe { any_subnormal_simd(xs) }
}

/// Replaces every subnormal by zero of its sign.
pub fn flush<T: Flushable>(xs: &mut [T]) {
    // SAFETY: the bodies only touch the slice.
    unsafe { flush_simd(xs) }
}

/// Type-erased versions for GEMM element types: only f32 and f64 have work
/// to do.
pub trait MaybeFlushable: bytemuck::Pod {
    /// Whether the type has subnormals worth flushing.
    const FLOAT: bool;
    fn any_subnormal(xs: &[Self]) -> bool;
    fn flush(xs: &mut [Self]);
}

macro_rules! float {
    ($t:ty) => {
        impl MaybeFlushable for $t {
            const FLOAT: bool = true;
            fn any_subnormal(xs: &[Self]) -> bool {
                any_subnormal(xs)
            }
            fn flush(xs: &mut [Self]) {
                flush(xs)
            }
        }
    };
}
float!(f32);
float!(f64);

macro_rules! other {
    ($($t:ty),*) => {$(
        impl MaybeFlushable for $t {
            const FLOAT: bool = false;
            fn any_subnormal(_: &[Self]) -> bool {
                false
            }
            fn flush(_: &mut [Self]) {}
        }
    )*};
}
other!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    num_complex::Complex32,
    num_complex::Complex64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_flushes_subnormals_keeping_sign() {
        let mut xs = vec![1.0f32; 5000];
        assert!(!any_subnormal(&xs));
        xs[4321] = -1e-40;
        xs[7] = f32::MIN_POSITIVE; // the smallest normal stays
        assert!(any_subnormal(&xs));
        flush(&mut xs);
        assert!(xs[4321] == 0.0 && xs[4321].is_sign_negative());
        assert_eq!(xs[7], f32::MIN_POSITIVE);
        assert!(!any_subnormal(&xs));
        let ys = [4e-320f64, 1.0];
        assert!(any_subnormal(&ys));
    }
}
