//! Float `remainder` (C's `fmod`) by exact long division in two loops.
//!
//! `fmod(x, y)` is exactly representable, but `x - trunc(x / y) * y` is not
//! computed exactly, so the expansion divides the way a person would, with
//! `r = |x|`, `d = |y|`:
//! 1. `t = d`, doubled (exactly) while `2t <= r`, per element;
//! 2. while `t >= d`: `r -= t` where `r >= t`, then `t /= 2`.
//!
//! Invariant: `t <= r < 2t` whenever `r -= t` runs, so the subtraction is exact
//! (Sterbenz), and halving `t >= d` is exact down to `d` itself. Each loop runs
//! at most the exponent range's number of times (about 280 for `f32`, 2100
//! for `f64`) and stops when no element needs another step. The sign is `x`'s
//! (`-0` included). Special cases as `fmod`: NaN operands, `x = ±inf` or
//! `y = 0` give NaN (those lanes run the loops on `r = 0, d = 1`), `y = ±inf`
//! gives `x`. Exact, up to NaN payload.
//!
//! The loops live in a new computation (built with `HloBuilder`) that the
//! expansion `call`s; the call is inlined and its contents legalized in the
//! next round.

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::Result;
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode};

/// See the module docs.
pub struct FloatRemainderExpander;

impl Expander for FloatRemainderExpander {
    fn name(&self) -> &'static str {
        "float remainder"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = super::single(types)?;
        if op != Opcode::Remainder || !matches!(t, ElementType::F32 | ElementType::F64) {
            return None;
        }
        let mut plan = super::all_of_type(
            t,
            &[
                Opcode::Multiply,
                Opcode::Subtract,
                Opcode::Divide,
                Opcode::Abs,
                Opcode::Negate,
                Opcode::Broadcast,
            ],
        );
        plan.extend(super::all_of_type(
            ElementType::Pred,
            &[Opcode::And, Opcode::Or, Opcode::Reduce],
        ));
        plan.extend([
            (Opcode::Compare, tys(&[t, ElementType::Pred])),
            (Opcode::Select, tys(&[t, ElementType::Pred])),
            (Opcode::While, vec![]),
            (Opcode::Call, vec![]),
        ]);
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let (x, y) = (b.operand(0)?, b.operand(1)?);
        let (t, dims) = b.array(x)?;
        let fmod = build_fmod(t, &dims)?;
        let callee = b.attach(&fmod)?;
        let shape = b.instr(id).shape.clone();
        Ok(b.add(
            shape,
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            vec![x, y],
        ))
    }
}

/// A constant of type `t` broadcast to `dims`.
fn splat(bb: &mut HloBuilder, t: ElementType, dims: &[usize], v: f64) -> Result<Value> {
    let c = bb.constant(Literal::from_scalar(super::scalar_of(t, v)?))?;
    bb.broadcast(c, dims)
}

/// `any(p)` of a pred array: a `reduce` with `or`.
fn any(bb: &mut HloBuilder, p: Value, rank: usize) -> Result<Value> {
    let or = Computation::scalar_binary("any", BinaryOp::Or, ElementType::Pred)?;
    let f = bb.constant(Literal::from_scalar(hlo_ir::Scalar::Pred(false)))?;
    let all: Vec<usize> = (0..rank).collect();
    bb.reduce(&[p], &[f], &or, &all)
}

/// A loop over `(r, t, d)`: the condition and body see the three arrays.
fn state_loop(
    name: &str,
    t: ElementType,
    dims: &[usize],
    cond: impl Fn(&mut HloBuilder, [Value; 3]) -> Result<Value>,
    body: impl Fn(&mut HloBuilder, [Value; 3]) -> Result<[Value; 3]>,
) -> Result<(Computation, Computation)> {
    let arr = Shape::array(t, dims.to_vec());
    let state = Shape::tuple(vec![arr.clone(), arr.clone(), arr]);
    let open = |bb: &mut HloBuilder| -> Result<[Value; 3]> {
        let p = bb.parameter(0, state.clone(), "state")?;
        Ok([
            bb.get_tuple_element(p, 0)?,
            bb.get_tuple_element(p, 1)?,
            bb.get_tuple_element(p, 2)?,
        ])
    };
    let mut cb = HloBuilder::new(format!("{name}_cond"));
    let vals = open(&mut cb)?;
    let c = cond(&mut cb, vals)?;
    let condition = cb.build_computation(c)?;
    let mut bb = HloBuilder::new(format!("{name}_body"));
    let vals = open(&mut bb)?;
    let next = body(&mut bb, vals)?;
    let out = bb.tuple(&next)?;
    Ok((condition, bb.build_computation(out)?))
}

fn build_fmod(t: ElementType, dims: &[usize]) -> Result<Computation> {
    let rank = dims.len();
    let arr = Shape::array(t, dims.to_vec());
    let mut f = HloBuilder::new("fmod");
    let x = f.parameter(0, arr.clone(), "x")?;
    let y = f.parameter(1, arr, "y")?;
    let zero = splat(&mut f, t, dims, 0.0)?;
    let one = splat(&mut f, t, dims, 1.0)?;
    let inf = splat(&mut f, t, dims, f64::INFINITY)?;
    let ax = f.unary(UnaryOp::Abs, x)?;
    let ay = f.unary(UnaryOp::Abs, y)?;
    // NaN lanes: x NaN or ±inf (|x| == inf or x != x), y NaN or 0.
    let x_nan = f.compare(x, x, Dir::Ne)?;
    let x_inf = f.compare(ax, inf, Dir::Eq)?;
    let y_nan = f.compare(y, y, Dir::Ne)?;
    let y_zero = f.compare(ay, zero, Dir::Eq)?;
    let nan_x = f.binary(BinaryOp::Or, x_nan, x_inf)?;
    let nan_y = f.binary(BinaryOp::Or, y_nan, y_zero)?;
    let nan = f.binary(BinaryOp::Or, nan_x, nan_y)?;
    let y_inf = f.compare(ay, inf, Dir::Eq)?;
    let idle = f.binary(BinaryOp::Or, nan, y_inf)?;
    let r0 = f.select(idle, zero, ax)?;
    let d0 = f.select(idle, one, ay)?;
    // 1. t doubles while 2t <= r.
    let grow = |bb: &mut HloBuilder, [r, tt, _]: [Value; 3]| -> Result<Value> {
        let two = splat(bb, t, dims, 2.0)?;
        let t2 = bb.binary(BinaryOp::Multiply, tt, two)?;
        bb.compare(t2, r, Dir::Le)
    };
    let (c1, b1) = state_loop(
        "fmod_up",
        t,
        dims,
        |bb, v| {
            let g = grow(bb, v)?;
            any(bb, g, rank)
        },
        |bb, [r, tt, d]| {
            let g = grow(bb, [r, tt, d])?;
            let two = splat(bb, t, dims, 2.0)?;
            let t2 = bb.binary(BinaryOp::Multiply, tt, two)?;
            Ok([r, bb.select(g, t2, tt)?, d])
        },
    )?;
    let init = f.tuple(&[r0, d0, d0])?;
    let up = f.while_loop(&c1, &b1, init)?;
    // 2. Subtract t where it fits, halve t, while t >= d.
    let (c2, b2) = state_loop(
        "fmod_down",
        t,
        dims,
        |bb, [_, tt, d]| {
            let active = bb.compare(tt, d, Dir::Ge)?;
            any(bb, active, rank)
        },
        |bb, [r, tt, d]| {
            let active = bb.compare(tt, d, Dir::Ge)?;
            let fits = bb.compare(r, tt, Dir::Ge)?;
            let step = bb.binary(BinaryOp::And, active, fits)?;
            let less = bb.binary(BinaryOp::Subtract, r, tt)?;
            let r = bb.select(step, less, r)?;
            let half = splat(bb, t, dims, 0.5)?;
            let tt = bb.binary(BinaryOp::Multiply, tt, half)?;
            Ok([r, tt, d])
        },
    )?;
    let down = f.while_loop(&c2, &b2, up)?;
    let r = f.get_tuple_element(down, 0)?;
    // The sign of x, -0 included (1 / -0 = -inf).
    let below = f.compare(x, zero, Dir::Lt)?;
    let is_zero = f.compare(x, zero, Dir::Eq)?;
    let recip = f.binary(BinaryOp::Divide, one, x)?;
    let neg_recip = f.compare(recip, zero, Dir::Lt)?;
    let neg_zero = f.binary(BinaryOp::And, is_zero, neg_recip)?;
    let negative = f.binary(BinaryOp::Or, below, neg_zero)?;
    let nr = f.unary(UnaryOp::Negate, r)?;
    let signed = f.select(negative, nr, r)?;
    let nan_value = splat(&mut f, t, dims, f64::NAN)?;
    let with_inf = f.select(y_inf, x, signed)?;
    let out = f.select(nan, nan_value, with_inf)?;
    f.build_computation(out)
}
