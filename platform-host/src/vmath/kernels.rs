//! The loop skeletons every slice kernel is built from.
//!
//! An [`Operand`] is resolved once per call into a [`Lane`] reader (a slice, a
//! splatted scalar, or the destination's own contents), and the loop is
//! monomorphised for that combination, so the inner loop has no per-element
//! branch on how its inputs are stored. All slices are re-sliced to the
//! destination's length before the loop so LLVM drops the bounds checks.

use super::Operand;
use platform_api::{Error, Result};

/// A one-argument element function. Closures and fn items implement it
/// through the blanket impl; large element functions implement it on a
/// zero-sized type whose `call` is `#[inline(always)]`, because LLVM may leave
/// a large closure (or a fn item's call shim) out of line when several loop
/// forms call it, and an out-of-line body is compiled without the level's
/// target features.
pub(crate) trait Fn1<S, D>: Copy {
    fn call(self, x: S) -> D;
}
/// A two-argument element function (see [`Fn1`]).
pub(crate) trait Fn2<T, U>: Copy {
    fn call(self, a: T, b: T) -> U;
}
/// A three-argument element function (see [`Fn1`]).
pub(crate) trait Fn3<T>: Copy {
    fn call(self, a: T, b: T, c: T) -> T;
}
impl<S, D, F: Fn(S) -> D + Copy> Fn1<S, D> for F {
    #[inline(always)]
    fn call(self, x: S) -> D {
        self(x)
    }
}
impl<T, U, F: Fn(T, T) -> U + Copy> Fn2<T, U> for F {
    #[inline(always)]
    fn call(self, a: T, b: T) -> U {
        self(a, b)
    }
}
impl<T, F: Fn(T, T, T) -> T + Copy> Fn3<T> for F {
    #[inline(always)]
    fn call(self, a: T, b: T, c: T) -> T {
        self(a, b, c)
    }
}

/// Reads element `i` of one input of a loop.
pub(crate) trait Lane<T: Copy>: Copy {
    fn at(self, i: usize, dst: &[T]) -> T;
    /// The lane of elements `start..start + len`, read against a destination
    /// cut the same way.
    fn window(self, start: usize, len: usize) -> Self;
}

#[derive(Clone, Copy)]
pub(crate) struct FromSlice<'a, T>(pub &'a [T]);
#[derive(Clone, Copy)]
pub(crate) struct Splat<T>(pub T);
#[derive(Clone, Copy)]
pub(crate) struct FromDst;

impl<T: Copy> Lane<T> for FromSlice<'_, T> {
    #[inline(always)]
    fn at(self, i: usize, _: &[T]) -> T {
        self.0[i]
    }
    #[inline(always)]
    fn window(self, start: usize, len: usize) -> Self {
        FromSlice(&self.0[start..start + len])
    }
}
impl<T: Copy> Lane<T> for Splat<T> {
    #[inline(always)]
    fn at(self, _: usize, _: &[T]) -> T {
        self.0
    }
    #[inline(always)]
    fn window(self, _: usize, _: usize) -> Self {
        self
    }
}
impl<T: Copy> Lane<T> for FromDst {
    #[inline(always)]
    fn at(self, i: usize, dst: &[T]) -> T {
        dst[i]
    }
    #[inline(always)]
    fn window(self, _: usize, _: usize) -> Self {
        self
    }
}

/// Checks that every slice operand has the destination's length.
pub(crate) fn check_lengths<T>(what: &str, operands: &[&Operand<'_, T>], n: usize) -> Result<()> {
    for (k, op) in operands.iter().enumerate() {
        if let Operand::Slice(s) = op {
            if s.len() != n {
                return Err(Error::invalid_argument(format!(
                    "vmath {what}: operand {k} has {} elements but the destination has {n}",
                    s.len()
                )));
            }
        }
    }
    Ok(())
}

/// Rejects [`Operand::Dst`] where the destination has another element type.
pub(crate) fn no_dst<T>(what: &str, operands: &[&Operand<'_, T>]) -> Result<()> {
    if operands.iter().any(|o| matches!(o, Operand::Dst)) {
        return Err(Error::invalid_argument(format!(
            "vmath {what}: the destination has another element type, so no operand can be \
             Operand::Dst"
        )));
    }
    Ok(())
}

pub(crate) fn length_error(what: &str, src: usize, dst: usize) -> Error {
    Error::invalid_argument(format!(
        "vmath {what}: source has {src} elements but the destination has {dst}"
    ))
}

/// `dst[i] = f(src[i])`.
#[inline(always)]
pub(crate) fn map1<S: Copy, D: Copy>(src: &[S], dst: &mut [D], f: impl Fn1<S, D>) {
    let n = dst.len().min(src.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    for i in 0..n {
        dst[i] = f.call(src[i]);
    }
}

/// [`map1`] for element functions with a long dependency chain (a
/// transcendental's range reduction, polynomial and scaling): one loop walks
/// the two halves of the slice side by side, so LLVM vectorises it into two
/// independent chains per iteration and the CPU overlaps them. With one
/// vector per iteration the scheduler can fill with the waiting tail of each
/// chain while the vector units idle. LLVM sometimes interleaves a plain
/// loop itself, so the gain varies by call site; in `cargo bench -p
/// platform-host --bench vmath -- f32` (AVX-512, best of 6 alternating runs)
/// `exp` went 0.325 → 0.317 ns/element, `tanh` 0.461 → 0.446, `log` 0.446 →
/// 0.430. The trip count is not a constant, so nothing unrolls the scalar
/// body before it is vectorised (a constant-size inner loop did, and the
/// closure holding it was then too big to inline into the level's
/// trampoline).
#[inline(always)]
pub(crate) fn map1_paired<T: Copy>(src: &[T], dst: &mut [T], f: impl Fn1<T, T>) {
    let n = dst.len().min(src.len());
    let half = n / 2;
    let (s1, rest) = src[..n].split_at(half);
    let (s2, s_odd) = rest.split_at(half);
    let (d1, rest) = dst[..n].split_at_mut(half);
    let (d2, d_odd) = rest.split_at_mut(half);
    for i in 0..half {
        d1[i] = f.call(s1[i]);
        d2[i] = f.call(s2[i]);
    }
    map1(s_odd, d_odd, f);
}

/// [`map1_paired`] in place.
#[inline(always)]
pub(crate) fn map1_paired_inplace<T: Copy>(buf: &mut [T], f: impl Fn1<T, T>) {
    let half = buf.len() / 2;
    let (b1, rest) = buf.split_at_mut(half);
    let (b2, odd) = rest.split_at_mut(half);
    for i in 0..half {
        b1[i] = f.call(b1[i]);
        b2[i] = f.call(b2[i]);
    }
    map1_inplace(odd, f);
}

/// `buf[i] = f(buf[i])`.
#[inline(always)]
pub(crate) fn map1_inplace<T: Copy>(buf: &mut [T], f: impl Fn1<T, T>) {
    for x in buf.iter_mut() {
        *x = f.call(*x);
    }
}

/// [`map1`], then the elements `needs_slow` picks recomputed with `slow`.
#[inline(always)]
pub(crate) fn map1_fixup<T: Copy>(
    src: &[T],
    dst: &mut [T],
    f: impl Fn1<T, T>,
    needs_slow: impl Fn1<T, bool>,
    slow: impl Fn1<T, T>,
) {
    map1_paired(src, dst, f);
    let n = dst.len().min(src.len());
    let mut any = false;
    for &x in &src[..n] {
        any |= needs_slow.call(x);
    }
    if any {
        for (d, &x) in dst[..n].iter_mut().zip(&src[..n]) {
            if needs_slow.call(x) {
                *d = slow.call(x);
            }
        }
    }
}

/// In-place [`map1_fixup`]: chunks are copied aside so the slow path still
/// sees the original arguments.
#[inline(always)]
pub(crate) fn map1_fixup_inplace<T: Copy + Default>(
    buf: &mut [T],
    f: impl Fn1<T, T>,
    needs_slow: impl Fn1<T, bool>,
    slow: impl Fn1<T, T>,
) {
    const CHUNK: usize = 256;
    let mut copy = [T::default(); CHUNK];
    for chunk in buf.chunks_mut(CHUNK) {
        let saved = &mut copy[..chunk.len()];
        saved.copy_from_slice(chunk);
        map1_fixup(saved, chunk, f, needs_slow, slow);
    }
}

#[inline(always)]
fn same<T>(d: &[T]) -> &[T] {
    d
}

#[inline(always)]
fn nothing<U, T>(_: &[U]) -> &[T] {
    &[]
}

/// `dst[i] = f(a[i], b[i])` for resolved inputs.
#[inline(always)]
pub(crate) fn run2<T: Copy, U: Copy, A: Lane<T>, B: Lane<T>>(
    a: A,
    b: B,
    dst: &mut [U],
    f: impl Fn2<T, U>,
    dst_as_t: impl Fn(&[U]) -> &[T] + Copy,
) {
    for i in 0..dst.len() {
        let (x, y) = {
            let d = dst_as_t(dst);
            (a.at(i, d), b.at(i, d))
        };
        dst[i] = f.call(x, y);
    }
}

/// `dst[i] = if p[i] != 0 { t[i] } else { f[i] }` for resolved branches.
///
/// The loop runs in chunks of a constant length, then over the remainder:
/// over the whole slice at once LLVM vectorised all but the last 1..=64
/// elements and left those to a scalar loop with bounds checks, which took
/// most of the time of a 1024-element block (`perf record` of a gather
/// followed by a row-masked select, AVX-512).
#[inline(always)]
pub(crate) fn select_lanes<T: Copy, A: Lane<T>, B: Lane<T>>(p: &[u8], t: A, f: B, dst: &mut [T]) {
    const CHUNK: usize = 64;
    let n = dst.len().min(p.len());
    let (p, dst) = (&p[..n], &mut dst[..n]);
    let mut chunks = dst.chunks_exact_mut(CHUNK);
    for (c, d) in chunks.by_ref().enumerate() {
        let base = c * CHUNK;
        let (pc, tc, fc) = (
            &p[base..base + CHUNK],
            t.window(base, CHUNK),
            f.window(base, CHUNK),
        );
        let d: &mut [T; CHUNK] = d.try_into().expect("a whole chunk");
        for i in 0..CHUNK {
            let (x, y) = (tc.at(i, d), fc.at(i, d));
            d[i] = if pc[i] != 0 { x } else { y };
        }
    }
    let full = n - n % CHUNK;
    let (pt, tt, ft) = (
        &p[full..],
        t.window(full, n - full),
        f.window(full, n - full),
    );
    let d = chunks.into_remainder();
    for i in 0..d.len().min(pt.len()) {
        let (x, y) = (tt.at(i, d), ft.at(i, d));
        d[i] = if pt[i] != 0 { x } else { y };
    }
}

/// Resolves an [`Operand`] into a [`Lane`] bound to `$v` for `$body`.
macro_rules! with_lane {
    ($op:expr, $n:expr, $v:ident => $body:expr) => {
        match $op {
            $crate::vmath::Operand::Slice(s) => {
                let $v = $crate::vmath::kernels::FromSlice(&s[..$n]);
                $body
            }
            $crate::vmath::Operand::Scalar(c) => {
                let $v = $crate::vmath::kernels::Splat(c);
                $body
            }
            $crate::vmath::Operand::Dst => {
                let $v = $crate::vmath::kernels::FromDst;
                $body
            }
        }
    };
}
pub(crate) use with_lane;

/// `dst[i] = f(a[i], b[i])` over same-typed operands and destination
/// (lengths already checked).
#[inline(always)]
pub(crate) fn map2<T: Copy>(
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [T],
    f: impl Fn2<T, T>,
) {
    let n = dst.len();
    with_lane!(a, n, la => with_lane!(b, n, lb => run2(la, lb, dst, f, same::<T>)))
}

/// `dst[i] = f(a[i], b[i])` into another element type (no [`Operand::Dst`]).
#[inline(always)]
pub(crate) fn map2_to<T: Copy, U: Copy>(
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    dst: &mut [U],
    f: impl Fn2<T, U>,
) {
    let n = dst.len();
    // `FromDst` never occurs (checked by the caller); the empty view keeps the
    // types straight.
    with_lane!(a, n, la => with_lane!(b, n, lb => run2(la, lb, dst, f, nothing::<U, T>)))
}

/// `dst[i] = f(a[i], b[i], c[i])` over same-typed operands and destination.
#[inline(always)]
pub(crate) fn map3<T: Copy>(
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    c: Operand<'_, T>,
    dst: &mut [T],
    f: impl Fn3<T>,
) {
    let n = dst.len();
    with_lane!(a, n, la => with_lane!(b, n, lb => with_lane!(c, n, lc => {
        for i in 0..n {
            let (x, y, z) = (la.at(i, dst), lb.at(i, dst), lc.at(i, dst));
            dst[i] = f.call(x, y, z);
        }
    })))
}
