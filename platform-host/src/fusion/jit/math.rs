//! Element functions as sequences of a run's simple operations.
//!
//! A transcendental step in a run (`exponential`, `tanh`, `logistic`, `log`,
//! `rsqrt`) is written out here as the operations its slice kernel performs
//! ([`crate::vmath::math32`]'s function, and for `exponential` the kernel's
//! own handling of subnormal results), in their order, with their
//! constants: the same range reduction, the same Horner steps as fused
//! multiply-adds, the same selects for the special ranges. Every one of those
//! operations rounds as the slice kernel's instruction does, so the generated
//! code gives the kernel's bits (NaN payloads aside, as for every op of a
//! run) while the value stays in a register between the function and the
//! arithmetic around it. Where a cheaper instruction gives the same value
//! on every argument it can see, it stands in for the kernel's, each said
//! where it is: a clamp as one `vmaxps`/`vminps` (the same comparison), the
//! rounding to an integer as a conversion, and `2^k p` as `k` added to `p`'s
//! exponent field over the range where the kernel's product is exact.
//!
//! The functions below mirror their originals line by line; a change to one
//! must be made to both (`fusion_diff`'s comparison of generated code with
//! the steps catches a difference).

use super::{Function, JitOp, Order};
use crate::elementwise_ops::EXP_F32_NORMAL_FROM;
use crate::vmath::math32::{
    EXP_HIGH, EXP_LOW, LN2_HI, LN2_LO, LOG2E, LOGISTIC_HIGH, SQRT_HALF_BITS, TANH_ONE,
};
use crate::vmath::poly::{EXP_F32, LOG_F32, TANH_F32_DEN, TANH_F32_NUM};
use platform_api::hlo::ComparisonDirection as Dir;
use platform_api::semantics::contraction::Contraction;

/// A value while a run is written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Val {
    /// The run's `k`th input.
    In(usize),
    /// The `k`th constant (its bits in every lane).
    Const(usize),
    /// The `k`th operation's result.
    Op(usize),
}

/// The operations of a run, in order, and the constants they read.
#[derive(Default)]
pub(super) struct Builder {
    pub consts: Vec<u32>,
    pub ops: Vec<(JitOp, Vec<Val>)>,
}

impl Builder {
    pub fn op(&mut self, op: JitOp, args: &[Val]) -> Val {
        debug_assert!(!matches!(op, JitOp::Func(_)), "{op:?} must be written out");
        self.ops.push((op, args.to_vec()));
        Val::Op(self.ops.len() - 1)
    }

    /// `op` applied to `args`: a function written out, or the op itself.
    pub fn apply(&mut self, op: JitOp, args: &[Val]) -> Val {
        let JitOp::Func(f) = op else {
            return self.op(op, args);
        };
        let x = args[0];
        match f {
            Function::Exp => self.exp_kernel(x),
            Function::Tanh => self.tanh(x),
            Function::Logistic => self.logistic(x),
            Function::Log => self.log(x),
            Function::Rsqrt => {
                let s = self.op(JitOp::Sqrt, &[x]);
                let one = self.f(1.0);
                self.op(JitOp::FDiv, &[one, s])
            }
            Function::Clamp(order) => {
                let (max, min) = match order {
                    Order::Float => (JitOp::FMax, JitOp::FMin),
                    Order::Signed => (JitOp::SMax, JitOp::SMin),
                    Order::Unsigned => (JitOp::UMax, JitOp::UMin),
                };
                let m = self.op(max, &[args[0], args[1]]);
                self.op(min, &[args[2], m])
            }
            Function::F32ToS32 => {
                // The instruction truncates and gives `i32::MIN` for NaN and
                // every out-of-range value: right below the range only.
                let t = self.op(JitOp::TruncToS32, &[x]);
                let limit = self.f(2_147_483_648.0);
                let big = self.op(JitOp::Cmp(Dir::Ge, Order::Float), &[x, limit]);
                let max = self.i(i32::MAX);
                let t = self.op(JitOp::Select, &[big, max, t]);
                let ordered = self.op(JitOp::FloatPredicate(0x07), &[x, x]);
                self.op(JitOp::And, &[t, ordered])
            }
            Function::FromPred(one) => {
                let one = self.bits(one);
                self.op(JitOp::And, &[x, one])
            }
        }
    }

    fn bits(&mut self, bits: u32) -> Val {
        let k = match self.consts.iter().position(|&b| b == bits) {
            Some(k) => k,
            None => {
                self.consts.push(bits);
                self.consts.len() - 1
            }
        };
        Val::Const(k)
    }

    fn f(&mut self, x: f32) -> Val {
        self.bits(x.to_bits())
    }

    fn i(&mut self, x: i32) -> Val {
        self.bits(x as u32)
    }

    fn add(&mut self, a: Val, b: Val) -> Val {
        self.op(JitOp::FAdd, &[a, b])
    }

    fn sub(&mut self, a: Val, b: Val) -> Val {
        self.op(JitOp::FSub, &[a, b])
    }

    fn mul(&mut self, a: Val, b: Val) -> Val {
        self.op(JitOp::FMul, &[a, b])
    }

    fn div(&mut self, a: Val, b: Val) -> Val {
        self.op(JitOp::FDiv, &[a, b])
    }

    /// `a * b + c`, rounded once. The product is exact whichever factor
    /// comes first, so a constant goes second, where the code reads it from
    /// memory.
    fn fma(&mut self, a: Val, b: Val, c: Val) -> Val {
        let (a, b) = match a {
            Val::Const(_) => (b, a),
            _ => (a, b),
        };
        self.op(JitOp::Fma(Contraction::Add), &[a, b, c])
    }

    /// `if test(a, b) { on_true } else { on_false }` with IEEE's ordered
    /// comparison (false on NaN).
    fn pick(&mut self, dir: Dir, a: Val, b: Val, on_true: Val, on_false: Val) -> Val {
        let mask = self.op(JitOp::Cmp(dir, Order::Float), &[a, b]);
        self.op(JitOp::Select, &[mask, on_true, on_false])
    }

    /// `c[0] + c[1] x + ...` by Horner's rule, as `math32::poly`.
    fn poly(&mut self, x: Val, c: &[f32]) -> Val {
        let mut p = self.f(c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let ci = self.f(ci);
            p = self.fma(p, x, ci);
        }
        p
    }

    /// `math32::exp_reduced`: `(e^r, k)` with `exp(x) = 2^k e^r`.
    fn exp_reduced(&mut self, x: Val) -> (Val, Val) {
        let log2e = self.f(LOG2E);
        let t = self.mul(x, log2e);
        // `round_small`'s sum with 1.5 * 2^23 rounds `|t| < 2^22` to the
        // nearest integer, ties to even, as the conversion does; for NaN the
        // conversion gives `i32::MIN`, whose shift into the exponent field
        // is zero (see `scale`).
        let k = self.op(JitOp::RoundToS32, &[t]);
        let kf = self.op(JitOp::S32ToF32, &[k]);
        let hi = self.f(-LN2_HI);
        let r = self.fma(kf, hi, x);
        let lo = self.f(-LN2_LO);
        let r = self.fma(kf, lo, r);
        let p = self.poly(r, &EXP_F32);
        let r2 = self.mul(r, r);
        let q = self.fma(r2, p, r);
        let one = self.f(1.0);
        (self.add(q, one), k)
    }

    /// `2^k p` for a `p` of exponent -1 or 0 and a result of at most
    /// exponent 127 or NaN: `k` added to `p`'s exponent field, the product
    /// `math32` computes where that is exact (the result is normal).
    fn scale(&mut self, p: Val, k: Val) -> Val {
        let shift = self.i(23);
        let field = self.op(JitOp::Shl, &[k, shift]);
        self.op(JitOp::IAdd, &[p, field])
    }

    /// The `exp` kernel: `math32::exp` of the argument clamped where the
    /// result is normal, then the kernel's fixup below that.
    fn exp_kernel(&mut self, x: Val) -> Val {
        let bound = self.f(EXP_F32_NORMAL_FROM);
        let xc = self.op(JitOp::PickGreater, &[bound, x]);
        let e = self.exp_normal(xc);
        self.op(JitOp::ExpBelowNormal, &[x, e, bound])
    }

    /// `math32::exp` of an `xc` at or above [`EXP_F32_NORMAL_FROM`] (or NaN),
    /// where its result is normal or infinite: there its two-step scaling is
    /// exact, and adding `k` to the exponent field gives the same bits.
    /// `k >= -126`, and `k = -126` only with `r > 0.33`, `p > 1`; at the top
    /// `k <= 128` (the clamp at 89), and the field overflows exactly when
    /// `p 2^128` does: those lanes (and a NaN's, positive or not) take
    /// `p * inf`.
    fn exp_normal(&mut self, xc: Val) -> Val {
        // `math32::exp`'s own lower clamp is below this range.
        const _: () = assert!(EXP_LOW < EXP_F32_NORMAL_FROM);
        let high = self.f(EXP_HIGH);
        let xc = self.op(JitOp::PickLess, &[high, xc]);
        let (p, k) = self.exp_reduced(xc);
        let bits = self.scale(p, k);
        let max = self.i(f32::MAX.to_bits() as i32);
        let over = self.op(JitOp::Cmp(Dir::Gt, Order::Signed), &[bits, max]);
        let inf = self.f(f32::INFINITY);
        let big = self.mul(p, inf);
        self.op(JitOp::Select, &[over, big, bits])
    }

    /// `math32::tanh`.
    fn tanh(&mut self, x: Val) -> Val {
        let a = self.op(JitOp::FAbs, &[x]);
        let saturate = self.f(TANH_ONE);
        let ac = self.op(JitOp::PickLess, &[saturate, a]);
        let z = self.mul(ac, ac);
        let p = self.poly(z, &TANH_F32_NUM);
        let q = self.poly(z, &TANH_F32_DEN);
        let n = self.mul(ac, p);
        let r = self.div(n, q);
        // `vminps` returns its second operand when either is NaN: a NaN `r`
        // passes, as in the kernel's comparison.
        let one = self.f(1.0);
        let capped = self.op(JitOp::PickLess, &[one, r]);
        let r = self.pick(Dir::Ge, a, saturate, one, capped);
        // `copysign(r, x)`: `r`'s sign bit is clear (a NaN comes from `a`'s),
        // so the magnitude needs no mask.
        let high = self.i(i32::MIN);
        let sign = self.op(JitOp::And, &[x, high]);
        self.op(JitOp::Or, &[r, sign])
    }

    /// `math32::logistic`.
    fn logistic(&mut self, x: Val) -> Val {
        let high = self.f(LOGISTIC_HIGH);
        let low = self.f(-LOGISTIC_HIGH);
        let nx = self.op(JitOp::FNeg, &[x]);
        let nx = self.pick(Dir::Gt, x, high, low, nx);
        // `nx >= -87`, where `exp`'s result is normal.
        const _: () = assert!(-LOGISTIC_HIGH >= EXP_F32_NORMAL_FROM);
        let e = self.exp_normal(nx);
        let one = self.f(1.0);
        let d = self.add(one, e);
        self.div(one, d)
    }

    /// `math32::log`.
    fn log(&mut self, x: Val) -> Val {
        let min = self.f(f32::MIN_POSITIVE);
        let tiny = self.op(JitOp::Cmp(Dir::Lt, Order::Float), &[x, min]);
        let scale = self.f(8_388_608.0);
        let scaled = self.mul(x, scale);
        let xs = self.op(JitOp::Select, &[tiny, scaled, x]);
        // split_log
        let half = self.i(SQRT_HALF_BITS);
        let biased = self.op(JitOp::ISub, &[xs, half]);
        let shift = self.i(23);
        let e = self.op(JitOp::ShrArithmetic, &[biased, shift]);
        let e_bits = self.op(JitOp::Shl, &[e, shift]);
        let m = self.op(JitOp::ISub, &[xs, e_bits]);
        let e = self.op(JitOp::S32ToF32, &[e]);
        let t23 = self.f(23.0);
        let e_tiny = self.sub(e, t23);
        let e = self.op(JitOp::Select, &[tiny, e_tiny, e]);
        // log1p_core
        let one = self.f(1.0);
        let f = self.sub(m, one);
        let p = self.poly(f, &LOG_F32);
        let minus_half = self.f(-0.5);
        let t = self.fma(f, p, minus_half);
        let f2 = self.mul(f, f);
        let r = self.fma(f2, t, f);
        let lo = self.f(LN2_LO);
        let r = self.fma(e, lo, r);
        let hi = self.f(LN2_HI);
        let result = self.fma(e, hi, r);
        // The special cases, the last test first so that the first wins.
        let inf = self.f(f32::INFINITY);
        let result = self.pick(Dir::Eq, x, inf, x, result);
        let zero = self.f(0.0);
        // `x < 0 || x.is_nan()`: not greater or equal, unordered.
        let negative = self.op(JitOp::FloatPredicate(0x09), &[x, zero]);
        let nan = self.f(f32::NAN);
        let result = self.op(JitOp::Select, &[negative, nan, result]);
        let minus_inf = self.f(f32::NEG_INFINITY);
        self.pick(Dir::Eq, x, zero, minus_inf, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`JitOp::weight`] bounds each function's length, which bounds a run's
    /// stack frame.
    #[test]
    fn weights_bound_the_written_out_functions() {
        let functions = [
            Function::Exp,
            Function::Tanh,
            Function::Logistic,
            Function::Log,
            Function::Rsqrt,
            Function::Clamp(Order::Float),
            Function::Clamp(Order::Signed),
            Function::Clamp(Order::Unsigned),
            Function::F32ToS32,
            Function::FromPred(1),
        ];
        for op in functions.map(JitOp::Func).into_iter().chain([JitOp::FAdd]) {
            let mut b = Builder::default();
            b.apply(op, &[Val::In(0), Val::In(1), Val::In(2)][..op.arity()]);
            assert!(b.ops.len() <= op.weight(), "{op:?}: {}", b.ops.len());
        }
    }
}
