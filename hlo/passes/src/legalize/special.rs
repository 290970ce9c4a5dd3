//! `f32` `atan2`, `cbrt`, `erf` and `power`, computed in `f64` and rounded once.
//!
//! The core ops (`exp`, `log`, `sin`, `cos`, `+ - * /`) in `f64` carry 29 more
//! bits than `f32`, so each function below is evaluated in `f64` to a relative
//! error far under `2^-40` and converted back: the result is the correctly
//! rounded `f32` value except where the exact value lies within that error of
//! a rounding boundary, where it is the neighbour — **within 1 ulp** (the tests
//! check 1 ulp over wide random ranges and every special value). `f16`/`bf16`
//! reach these through `f32` ([`super::half`]).
//!
//! `cbrt` and `atan2` also take `f64` operands, computed the same way in
//! `f64` itself: `cbrt` within 2 ulp (the Newton step's own rounding; tiny
//! operands are scaled by `2^600` so `r^3` does not underflow), `atan2` within
//! 4 ulp (the last Newton correction's rounding and the fix-ups' `pi/2 - a`,
//! `pi - a`). `f64` `erf` and `power` are not expanded: they would need a
//! wider type.
//!
//! * `cbrt(x)`: `r = exp(log|x| / 3)`, one Newton step `r -= (r^3 - |x|) /
//!   (3 r^2)` (the error of `exp`/`log` is about `2^-50` relative; Newton
//!   squares it), the sign of `x`; `±0`, `±inf` and NaN give `x` itself.
//! * `atan2(y, x)`: the first-octant angle `a = atan(min/max)` of `(|x|, |y|)`
//!   from a two-term guess (error < 0.002) and two Newton steps on `atan`
//!   through `sin`/`cos` (`a += (Y cos a - X sin a) / (X cos a + Y sin a)`,
//!   which cubes the error), then C's fix-ups: `pi/2 - a` when `|y| > |x|`,
//!   `pi - a` when `x` has its sign bit set (`-0` too), the sign of `y`. Both
//!   zeros give 0 (so `atan2(±0, -0) = ±pi`), both infinite `pi/4`, one
//!   infinite 0 or `pi/2` as C says; NaN in either gives NaN.
//! * `erf(x)`: `2/sqrt(pi) e^(-x^2) x sum_n (2x^2)^n / (1*3*...*(2n+1))`, a
//!   series of positive terms (no cancellation; `x^2` of an `f32` is exact in
//!   `f64`), 64 terms, enough to `2^-60` for `|x| <= 4`; beyond 4, `erf` is
//!   `±1` in `f32` (`1 - erf(3.92) < 2^-25`).
//! * `power(x, y)`: `exp(y log|x|)` in `f64`: `|y log|x||` stays under 800
//!   wherever the result is a finite nonzero `f32`, so its relative error is
//!   under `2^-40`, overflow gives `inf` and underflow 0 as rounding `f32`
//!   would. Then C `pow`'s special cases: `y = ±0`, `x = 1`, and `|x| = 1` with
//!   `y = ±inf` give 1 (even with NaN); a negative finite `x` with a
//!   non-integral finite `y` gives NaN; a negative `x` (`-0`, `-inf` too) with
//!   an odd integral `y` negates the result (`|y| >= 2^24` is even).

use super::{all_of_type, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::ElementType::{self, Pred, F32, F64, S32};
use hlo_ir::{InstrId, Op, Opcode};

/// What every expansion here emits: `f64` arithmetic, compares and selects,
/// conversions in and out of `f64`.
fn f64_plan(extra: &[Opcode]) -> Vec<Emitted> {
    let mut plan = all_of_type(
        F64,
        &[
            Opcode::Add,
            Opcode::Subtract,
            Opcode::Multiply,
            Opcode::Divide,
            Opcode::Negate,
            Opcode::Abs,
            Opcode::Broadcast,
        ],
    );
    plan.extend(all_of_type(F64, extra));
    plan.extend(all_of_type(Pred, &[Opcode::And, Opcode::Or, Opcode::Not]));
    plan.extend([
        (Opcode::Convert, tys(&[F32, F64])),
        (Opcode::Compare, tys(&[F64, Pred])),
        (Opcode::Select, tys(&[F64, Pred])),
    ]);
    plan
}

/// Which function an instruction is, if it is one of ours on `f32`.
fn f32_only(op: Opcode, types: &[ElementType], ours: Opcode) -> bool {
    op == ours && types == [F32]
}

/// Which function an instruction is, if it is one of ours on `f32` or `f64`.
fn f32_or_f64(op: Opcode, types: &[ElementType], ours: Opcode) -> bool {
    op == ours && (types == [F32] || types == [F64])
}

/// `f64` helpers over arrays shaped like the instruction's operands; `t` is
/// the instruction's type (`f32`, or `f64` where no conversion is needed).
struct Wide<'b, 'e, 'a> {
    b: &'b mut Emitter<'e, 'a>,
    t: ElementType,
}

impl Wide<'_, '_, '_> {
    fn widen(&mut self, x: InstrId) -> Result<InstrId> {
        if self.t == F64 {
            return Ok(x);
        }
        self.b.like(x, F64, Op::Convert, vec![x])
    }
    fn narrow(&mut self, x: InstrId) -> Result<InstrId> {
        if self.t == F64 {
            return Ok(x);
        }
        self.b.like(x, self.t, Op::Convert, vec![x])
    }
    fn c(&mut self, like: InstrId, v: f64) -> Result<InstrId> {
        self.b.constant_like(like, v)
    }
    fn bin(&mut self, op: BinaryOp, x: InstrId, y: InstrId) -> Result<InstrId> {
        self.b.binary(op, x, y)
    }
    fn add(&mut self, x: InstrId, y: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::Add, x, y)
    }
    fn sub(&mut self, x: InstrId, y: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::Subtract, x, y)
    }
    fn mul(&mut self, x: InstrId, y: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::Multiply, x, y)
    }
    fn div(&mut self, x: InstrId, y: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::Divide, x, y)
    }
    fn un(&mut self, op: UnaryOp, x: InstrId) -> Result<InstrId> {
        self.b.unary(op, x)
    }
    fn cmp(&mut self, x: InstrId, y: InstrId, d: Dir) -> Result<InstrId> {
        self.b.compare(x, y, d, false)
    }
    /// `x` compared with the constant `v`.
    fn cmp_c(&mut self, x: InstrId, v: f64, d: Dir) -> Result<InstrId> {
        let c = self.c(x, v)?;
        self.cmp(x, c, d)
    }
    /// Whether `x` has its sign bit set (`-0` included; `x` not NaN): total
    /// order puts `-0` below `+0`.
    fn signbit(&mut self, x: InstrId) -> Result<InstrId> {
        let zero = self.c(x, 0.0)?;
        self.b.compare(x, zero, Dir::Lt, true)
    }
    fn sel(&mut self, p: InstrId, t: InstrId, f: InstrId) -> Result<InstrId> {
        self.b.select(p, t, f)
    }
    /// `select(p, v, f)` with the constant `v`.
    fn sel_c(&mut self, p: InstrId, v: f64, f: InstrId) -> Result<InstrId> {
        let c = self.c(f, v)?;
        self.sel(p, c, f)
    }
    fn or(&mut self, p: InstrId, q: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::Or, p, q)
    }
    fn and(&mut self, p: InstrId, q: InstrId) -> Result<InstrId> {
        self.bin(BinaryOp::And, p, q)
    }
    /// `-x` where `p`, else `x`.
    fn negate_where(&mut self, p: InstrId, x: InstrId) -> Result<InstrId> {
        let n = self.un(UnaryOp::Negate, x)?;
        self.sel(p, n, x)
    }
}

/// Below this, `cbrt` scales its operand up (see [`CbrtExpander`]).
const TINY: f64 = 1.0e-180;

/// `cbrt` on `f32` and `f64`; see the module docs.
pub struct CbrtExpander;

impl Expander for CbrtExpander {
    fn name(&self) -> &'static str {
        "f32 cbrt"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        f32_or_f64(op, types, Opcode::Cbrt).then(|| f64_plan(&[Opcode::Exp, Opcode::Log]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let mut w = Wide { b, t };
        let xw = w.widen(x)?;
        let a = w.un(UnaryOp::Abs, xw)?;
        // Tiny f64 values are scaled by 2^600 (their root by 2^200), so that
        // r^3 below does not lose bits to underflow; exact scalings.
        let tiny = w.cmp_c(a, TINY, Dir::Lt)?;
        let up = w.mul_c(a, 2f64.powi(600))?;
        let a_s = w.sel(tiny, up, a)?;
        let l = w.un(UnaryOp::Log, a_s)?;
        let three = w.c(xw, 3.0)?;
        let l3 = w.div(l, three)?;
        let r = w.un(UnaryOp::Exp, l3)?;
        // Newton on r^3 = a.
        let r2 = w.mul(r, r)?;
        let r3 = w.mul(r2, r)?;
        let num = w.sub(r3, a_s)?;
        let den = w.mul(r2, three)?;
        let step = w.div(num, den)?;
        let r = w.sub(r, step)?;
        let down = w.mul_c(r, 2f64.powi(-200))?;
        let r = w.sel(tiny, down, r)?;
        let neg = w.signbit(xw)?;
        let signed = w.negate_where(neg, r)?;
        // Zeros, infinities and NaN are their own cube roots (the Newton step
        // would give NaN for them).
        let zero = w.cmp_c(a, 0.0, Dir::Eq)?;
        let inf = w.cmp_c(a, f64::INFINITY, Dir::Eq)?;
        let nan = w.cmp(xw, xw, Dir::Ne)?;
        let keep = w.or(zero, inf)?;
        let keep = w.or(keep, nan)?;
        let out = w.sel(keep, xw, signed)?;
        w.narrow(out)
    }
}

/// `atan2` on `f32` and `f64`; see the module docs.
pub struct Atan2Expander;

impl Expander for Atan2Expander {
    fn name(&self) -> &'static str {
        "f32 atan2"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        f32_or_f64(op, types, Opcode::Atan2).then(|| f64_plan(&[Opcode::Sin, Opcode::Cos]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (y, x) = (b.operand(0)?, b.operand(1)?);
        let (t, _) = b.array(x)?;
        let mut w = Wide { b, t };
        let (yw, xw) = (w.widen(y)?, w.widen(x)?);
        let (ay, ax) = (w.un(UnaryOp::Abs, yw)?, w.un(UnaryOp::Abs, xw)?);
        let swap = w.cmp(ay, ax, Dir::Gt)?;
        let big = w.sel(swap, ay, ax)?;
        let small = w.sel(swap, ax, ay)?;
        // Both zero, or an infinity: no Newton (0/0, inf/inf); the angle is
        // 0, or pi/4 when both are infinite.
        let zero = w.cmp_c(big, 0.0, Dir::Eq)?;
        let big_inf = w.cmp_c(big, f64::INFINITY, Dir::Eq)?;
        let small_inf = w.cmp_c(small, f64::INFINITY, Dir::Eq)?;
        let special = w.or(zero, big_inf)?;
        let one = w.c(big, 1.0)?;
        let zero_c = w.c(big, 0.0)?;
        let bx = w.sel(special, one, big)?;
        let by = w.sel(special, zero_c, small)?;
        // Guess: atan(t) ~ pi/4 t + 0.273 t (1 - t) on [0, 1] (error < 0.0015).
        let t = w.div(by, bx)?;
        let lin = w.mul_c(t, std::f64::consts::FRAC_PI_4)?;
        let one_minus = w.sub(one, t)?;
        let quad = w.mul(t, one_minus)?;
        let quad = w.mul_c(quad, 0.273)?;
        let mut a = w.add(lin, quad)?;
        for _ in 0..2 {
            let (s, c) = (w.un(UnaryOp::Sin, a)?, w.un(UnaryOp::Cos, a)?);
            let yc = w.mul(by, c)?;
            let xs = w.mul(bx, s)?;
            let num = w.sub(yc, xs)?;
            let xc = w.mul(bx, c)?;
            let ys = w.mul(by, s)?;
            let den = w.add(xc, ys)?;
            let step = w.div(num, den)?;
            a = w.add(a, step)?;
        }
        let both_inf = w.and(big_inf, small_inf)?;
        let a = w.sel(special, zero_c, a)?;
        let a = w.sel_c(both_inf, std::f64::consts::FRAC_PI_4, a)?;
        // Octant fix-ups.
        let half_pi = w.c(a, std::f64::consts::FRAC_PI_2)?;
        let comp = w.sub(half_pi, a)?;
        let a = w.sel(swap, comp, a)?;
        let pi = w.c(a, std::f64::consts::PI)?;
        let back = w.sub(pi, a)?;
        let x_neg = w.signbit(xw)?;
        let a = w.sel(x_neg, back, a)?;
        let y_neg = w.signbit(yw)?;
        let a = w.negate_where(y_neg, a)?;
        let x_nan = w.cmp(xw, xw, Dir::Ne)?;
        let y_nan = w.cmp(yw, yw, Dir::Ne)?;
        let nan = w.or(x_nan, y_nan)?;
        let a = w.sel_c(nan, f64::NAN, a)?;
        w.narrow(a)
    }
}

impl Wide<'_, '_, '_> {
    fn mul_c(&mut self, x: InstrId, v: f64) -> Result<InstrId> {
        let c = self.c(x, v)?;
        self.mul(x, c)
    }
}

/// Terms of the `erf` series (see the module docs).
const ERF_TERMS: usize = 64;

/// `erf` on `f32`; see the module docs.
pub struct ErfExpander;

impl Expander for ErfExpander {
    fn name(&self) -> &'static str {
        "f32 erf"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        f32_only(op, types, Opcode::Erf).then(|| f64_plan(&[Opcode::Exp]))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let x = b.operand(0)?;
        let (t, _) = b.array(x)?;
        let mut w = Wide { b, t };
        let xw = w.widen(x)?;
        let ax = w.un(UnaryOp::Abs, xw)?;
        let far = w.cmp_c(ax, 4.0, Dir::Gt)?;
        // Far lanes run the series on 0 (no overflow); NaN is not far.
        let xs = w.sel_c(far, 0.0, xw)?;
        let x2 = w.mul(xs, xs)?;
        let z = w.mul_c(x2, 2.0)?;
        // Horner from the innermost term: acc = 1 + acc z / (2k + 1).
        let one = w.c(xw, 1.0)?;
        let mut acc = one;
        for k in (1..=ERF_TERMS).rev() {
            let t = w.mul(acc, z)?;
            let d = w.c(xw, (2 * k + 1) as f64)?;
            let t = w.div(t, d)?;
            acc = w.add(one, t)?;
        }
        let nx2 = w.un(UnaryOp::Negate, x2)?;
        let e = w.un(UnaryOp::Exp, nx2)?;
        let s = w.mul(acc, xs)?;
        let s = w.mul(s, e)?;
        let s = w.mul_c(s, std::f64::consts::FRAC_2_SQRT_PI)?;
        let neg = w.signbit(xw)?;
        let unit = w.negate_where(neg, one)?;
        let out = w.sel(far, unit, s)?;
        w.narrow(out)
    }
}

/// `power` on `f32`; see the module docs.
pub struct PowerExpander;

/// From this magnitude on, every `f32` is an even integer.
const F32_ALL_EVEN: f64 = 16_777_216.0;

impl Expander for PowerExpander {
    fn name(&self) -> &'static str {
        "f32 power"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        f32_only(op, types, Opcode::Power).then(|| {
            let mut plan = f64_plan(&[Opcode::Exp, Opcode::Log]);
            plan.extend([
                (Opcode::Convert, tys(&[F64, S32])),
                (Opcode::And, vec![S32]),
                (Opcode::Broadcast, vec![S32]),
                (Opcode::Compare, tys(&[S32, Pred])),
            ]);
            plan
        })
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let (x, y) = (b.operand(0)?, b.operand(1)?);
        let (t, _) = b.array(x)?;
        let mut w = Wide { b, t };
        let (xw, yw) = (w.widen(x)?, w.widen(y)?);
        let ax = w.un(UnaryOp::Abs, xw)?;
        let ay = w.un(UnaryOp::Abs, yw)?;
        let l = w.un(UnaryOp::Log, ax)?;
        let e = w.mul(yw, l)?;
        let m = w.un(UnaryOp::Exp, e)?;
        // Integral and odd y: below 2^24 through s32 (exact truncation; other
        // lanes convert 0), at or above it (infinity too) even.
        let huge = w.cmp_c(ay, F32_ALL_EVEN, Dir::Ge)?;
        let small = w.cmp_c(ay, F32_ALL_EVEN, Dir::Lt)?;
        let zero = w.c(yw, 0.0)?;
        let yi = w.sel(small, yw, zero)?;
        let n = w.b.like(yi, S32, Op::Convert, vec![yi])?;
        let back = w.b.like(n, F64, Op::Convert, vec![n])?;
        let whole = w.cmp(back, yi, Dir::Eq)?;
        let whole = w.and(whole, small)?;
        let integral = w.or(whole, huge)?;
        let one_i = w.c(n, 1.0)?;
        let low = w.bin(BinaryOp::And, n, one_i)?;
        let odd = w.b.compare(low, one_i, Dir::Eq, false)?;
        let odd = w.and(odd, whole)?;
        let x_neg = w.signbit(xw)?;
        let flip = w.and(x_neg, odd)?;
        let r = w.negate_where(flip, m)?;
        // A negative finite base with a non-integral finite exponent.
        let below = w.cmp_c(xw, 0.0, Dir::Lt)?;
        let finite = w.cmp_c(xw, f64::NEG_INFINITY, Dir::Ne)?;
        let not_integral = w.un(UnaryOp::Not, integral)?;
        let bad = w.and(below, finite)?;
        let bad = w.and(bad, not_integral)?;
        let r = w.sel_c(bad, f64::NAN, r)?;
        // The ones: y = ±0, x = 1, |x| = 1 with y = ±inf.
        let y0 = w.cmp_c(yw, 0.0, Dir::Eq)?;
        let x1 = w.cmp_c(xw, 1.0, Dir::Eq)?;
        let ax1 = w.cmp_c(ax, 1.0, Dir::Eq)?;
        let y_inf = w.cmp_c(ay, f64::INFINITY, Dir::Eq)?;
        let unit_inf = w.and(ax1, y_inf)?;
        let ones = w.or(y0, x1)?;
        let ones = w.or(ones, unit_inf)?;
        let r = w.sel_c(ones, 1.0, r)?;
        w.narrow(r)
    }
}
