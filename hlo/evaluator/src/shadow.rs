//! Shadow evaluation: a reference that knows how exact it is.
//!
//! [`shadow_evaluate`] runs a module with every `f32`/`f16`/`bf16` value
//! carried in `f64` (the *shadow value*, far closer to the exact result than
//! any `f32` evaluation) and, beside every floating value, a per-element
//! *error scale* `s` from first-order running error analysis. A backend that
//! computes the same function correctly, in any summation order, with or
//! without FMA, differs from the shadow value by a small multiple of the unit
//! roundoff times `s`; a bug (a dropped term, a wrong index, a transposed
//! operand) differs by far more. `service::compare` turns this into a rule
//! measured in ULPs of the scale.
//!
//! # Why an evaluator mode and not an HLO-to-HLO transform
//! A transform would have to thread a scale companion through every calling
//! convention of HLO (while-loop carries, conditional branches, variadic
//! reducers, sort payloads, scatter combiners) by building new computations.
//! Here the walker evaluates the module itself, instruction by instruction, on
//! pairs (value, scale): values come from the ordinary evaluator run on a
//! copy of the module whose float types are widened to `f64` ([`promote_module`]),
//! so every op (reducers, comparators, gathers, ...) keeps its one definition;
//! scales come from a rule per op, and the ops that only move data compute
//! their scale by running *the same instruction* on the scales (index operands
//! untouched), so gather, slice, pad, concatenate, dynamic-update-slice, select,
//! ... move scales exactly as they move values. Control flow (`while`,
//! `conditional`, `call`, `fusion`) is walked here with pairs as its values.
//!
//! # The scale
//! Scales are in units of the `f32` unit roundoff: a result of type `T`
//! rounded once contributes `w(T)·|y|` with `w(T) = 2^(24 - p(T))` (`p` the
//! significand bits: f32 1, bf16 2^16, f16 2^13, f64 2^-29), so a bf16 rounding
//! inside an f32 program weighs what it costs. Then, for `y = f(x_1..x_k)`,
//! `s_y = w·|y| + Σ |∂f/∂x_i|·s_i` (arguments and constants are exact: `s = 0`).
//! * `dot`, `convolution`, `reduce`/`reduce-window` with an add reducer, a sum
//!   of `n` terms `t`: `w·sqrt(n)·(|y| + sqrt(Σ t²)) + sqrt(Σ (∂y/∂x·s_x)²)`.
//!   Each of the `n` roundings costs `u` times a partial sum, and the partial
//!   sums of any natural order (sequential, blocked, pairwise, SIMD lanes, FMA)
//!   are about `|y|` plus a random walk of the terms, `sqrt(Σ t²)`; the roundings
//!   add up like `sqrt(n)` (like `n` only when every one goes the same way). The
//!   operands' own errors are independent roundings and combine in quadrature
//!   (`sqrt(dot(s_a², b²) + dot(a², s_b²))`): the linear first-order bound made
//!   a two-layer MLP's scale a thousand times its observed error. With the
//!   growth carried in the scale, the comparison's threshold is a constant.
//! * max/min reducers and `maximum`/`minimum`/`clamp`: the largest scale among
//!   the candidates (the chosen one's is no larger).
//! * ops that only move data: the same op on the scales.
//! * elementwise math: the derivative rule (see [`unary_scale`], [`binary_scale`]).
//! * integer and `pred` results have no scale (zeros): they are compared exactly.
//!
//! # The fallback
//! An op without a rule (sort, custom calls, rng, fft, triangular-solve,
//! cholesky, batch-norm, variadic reduces, reducers other than add/max/min,
//! ...) gets `w·|y| + max s` of its operands — the scale of a well-conditioned
//! op (`|∂f/∂x| ≤ 1`). It is named in [`ShadowOutput::fallbacks`] so a report
//! can say that part of the judgement rests on it.
//!
//! The shadow runs in `f64` throughout, so where a program's control depends
//! on rounding (a loop until an `f32` sum stops changing, an argmax between
//! ties) the shadow may take the other branch; that is the reference being
//! better, not the backend being wrong, and is rare.

use crate::plan::ModulePlan;
use crate::value::Value;
use crate::{scalar_of, Evaluator, RunContext};
use hlo_ir::analysis::combiner::{binary_combiner, returned_parameter};
use hlo_ir::{
    BinaryOp, CompId, ElementType, Error, HloComputation, HloInstruction, HloModule, InstrId,
    Literal, Op, Result, Scalar, Shape, UnaryOp,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What [`shadow_evaluate`] returns: the result and its scale, both with the
/// module's result structure; float leaves are `f64`, other leaves keep their
/// type in `value` and are `f64` zeros in `scale`.
#[derive(Clone, Debug)]
pub struct ShadowOutput {
    pub value: Literal,
    /// Per element, in units of the f32 unit roundoff (see the module docs):
    /// `scale · 2^(p - 24)` is the natural magnitude for a leaf of `p`
    /// significand bits.
    pub scale: Literal,
    /// Opcodes whose scale came from the conservative fallback, with counts
    /// (dynamic: a fallback in a loop body counts once per iteration).
    pub fallbacks: BTreeMap<String, usize>,
    /// Per output leaf (a tuple flattened in preorder): the instruction
    /// (`%name (opcode)`) whose error scale first reached the range of its
    /// type on the way to that output, if any did. An element whose scale is
    /// at least [`unbounded_magnitude`] has no useful error bound.
    pub unbounded_origin: Vec<Option<String>>,
    /// Per output leaf: why XLA leaves the value undefined, if it does (the
    /// leaf depends on a Cholesky factorization of a matrix that is not
    /// positive definite, say); such a leaf cannot be judged.
    pub undefined: Vec<Option<String>>,
}

/// The magnitude (in a type's own units, `scale · 2^(p - 24)`) at which an
/// error scale covers the whole range of the type: a bound that says nothing.
/// Scales saturate here (see [`shadow_evaluate`]), so they stay finite while
/// the values are.
pub fn unbounded_magnitude(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 65504.0,
        ElementType::BF16 => 3.3895313892515355e38,
        ElementType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}

/// The largest scale (f32-roundoff units) a value of type `ty` carries: an
/// error as large as the type's range.
fn scale_cap(ty: ElementType) -> f64 {
    let p = significand_bits(ty).unwrap_or(53);
    unbounded_magnitude(ty) * 2f64.powi(24 - p)
}

/// The smallest magnitude that rounds to infinity in `ty` (the largest
/// finite value plus half its ULP).
fn overflow_threshold(ty: ElementType) -> f64 {
    let p = significand_bits(ty).unwrap_or(53);
    let max = unbounded_magnitude(ty);
    let e = max.log2().floor() as i32;
    max + 2f64.powi(e - p)
}

/// Half the smallest subnormal of `ty`: magnitudes at or below it round to zero.
fn underflow_threshold(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 2f64.powi(-25),
        ElementType::BF16 => 2f64.powi(-134),
        ElementType::F32 => 2f64.powi(-150),
        _ => 0.0,
    }
}

/// Brings one result in line with its program type after an instruction:
/// values beyond the range of their original narrower type become infinite
/// (and values below its smallest subnormal zero), as the program's own
/// rounding makes them, so the shadow does not carry a finite number where
/// every implementation has an infinity; a non-finite value's scale is 0
/// (an exact infinity chosen by a select is no error of infinite size, and
/// such values are judged by their class); a finite value's scale saturates
/// at [`scale_cap`]. An infinite scale stays: it marks an element whose very
/// class rounding decides (see [`straddles`]). Returns the new value and scale and the count of
/// finite elements whose scale is at the cap.
fn settle(v: Value, s: Value, shape: &Shape, marks: bool) -> Result<(Value, Value, usize)> {
    match (v, s, shape) {
        (Value::Tuple(vs), Value::Tuple(ss), Shape::Tuple(shapes)) => {
            let (mut nv, mut ns, mut count) = (Vec::new(), Vec::new(), 0);
            for ((v, s), shape) in vs.into_iter().zip(ss).zip(shapes) {
                let (v, s, c) = settle(v, s, shape, marks)?;
                nv.push(v);
                ns.push(s);
                count += c;
            }
            Ok((Value::Tuple(nv), Value::Tuple(ns), count))
        }
        (Value::Array(va), Value::Array(sa), Shape::Array(a))
            if (promotable(a.element_type) || a.element_type == ElementType::F64)
                && va.element_type() == Some(ElementType::F64)
                && sa.element_type() == Some(ElementType::F64)
                && va.element_count() == sa.element_count() =>
        {
            let ty = a.element_type;
            let (over, under) = if promotable(ty) {
                (overflow_threshold(ty), underflow_threshold(ty))
            } else {
                (f64::INFINITY, 0.0)
            };
            let cap = scale_cap(ty);
            let (vd, sd) = (va.data::<f64>()?, sa.data::<f64>()?);
            let value_changes = vd.iter().any(|x| {
                let m = x.abs();
                m.is_finite() && (m >= over || (m > 0.0 && m <= under))
            });
            // An infinite scale is a mark (see `straddles`) only where the
            // op moves or maps marks elementwise; a sum or a fallback with an
            // infinite value just computed an infinite size.
            let mark = |x: f64, s: f64| s == f64::INFINITY && (marks || x.is_finite());
            let unbounded = |x: f64, s: f64| mark(x, s) || (x.is_finite() && s >= cap);
            let scale_changes = vd.iter().zip(sd).any(|(x, s)| {
                !mark(*x, *s) && ((!x.is_finite() && *s != 0.0) || s.is_nan() || *s > cap)
            });
            if !value_changes && !scale_changes {
                let count = vd
                    .iter()
                    .zip(sd)
                    .filter(|(x, s)| unbounded(**x, **s))
                    .count();
                return Ok((Value::Array(va), Value::Array(sa), count));
            }
            let mut new_v = vd.to_vec();
            for x in &mut new_v {
                let m = x.abs();
                if m.is_finite() && m >= over {
                    *x = x.signum() * f64::INFINITY;
                } else if m > 0.0 && m <= under {
                    *x = 0.0f64.copysign(*x);
                }
            }
            let mut count = 0;
            let new_s: Vec<f64> = new_v
                .iter()
                .zip(sd)
                .map(|(x, &s)| {
                    if mark(*x, s) {
                        count += 1;
                        s
                    } else if !x.is_finite() {
                        0.0
                    } else if s >= cap || s.is_nan() {
                        count += 1;
                        cap
                    } else {
                        s
                    }
                })
                .collect();
            let v = if value_changes {
                Value::from_literal(like(&va, &new_v)?)
            } else {
                Value::Array(va)
            };
            Ok((v, Value::from_literal(like(&sa, &new_s)?), count))
        }
        (v, s, _) => Ok((v, s, 0)),
    }
}

/// Whether any element of an f64 value is NaN or infinite.
fn has_nonfinite(v: &Value) -> bool {
    match v {
        Value::Array(a) => a
            .data::<f64>()
            .map(|d| d.iter().any(|x| !x.is_finite()))
            .unwrap_or(false),
        Value::Tuple(t) => t.iter().any(has_nonfinite),
        Value::Token => false,
    }
}

/// Whether a batch of square matrices (the last two dimensions) holds a
/// non-finite value in the triangle a triangular solve reads.
fn nonfinite_in_triangle(v: &Value, lower: bool, unit_diagonal: bool) -> bool {
    let Ok(a) = v.array() else { return false };
    let Ok(d) = a.data::<f64>() else { return false };
    let dims = a.dims();
    let Some(&n) = dims.last() else { return false };
    if n == 0 {
        return false;
    }
    d.iter().enumerate().any(|(k, x)| {
        let (i, j) = ((k / n) % n, k % n);
        let read = if i == j {
            !unit_diagonal
        } else {
            (i > j) == lower
        };
        read && !x.is_finite()
    })
}

/// Whether any element of an f64 value is NaN.
fn has_nan(v: &Value) -> bool {
    match v {
        Value::Array(a) => a
            .data::<f64>()
            .map(|d| d.iter().any(|x| x.is_nan()))
            .unwrap_or(false),
        Value::Tuple(t) => t.iter().any(has_nan),
        Value::Token => false,
    }
}

/// Significand bits (with the implicit one) of a float type.
pub fn significand_bits(ty: ElementType) -> Option<i32> {
    ty.float_bits().map(|(_, m)| m as i32 + 1)
}

/// The weight of one rounding to `ty` in units of the f32 unit roundoff.
pub fn rounding_weight(ty: ElementType) -> f64 {
    significand_bits(ty).map_or(0.0, |p| 2f64.powi(24 - p))
}

/// The type of a complex type's parts (a real type is its own).
pub fn component_type(ty: ElementType) -> ElementType {
    match ty {
        ElementType::C64 => ElementType::F32,
        ElementType::C128 => ElementType::F64,
        other => other,
    }
}

/// Whether the shadow carries values of this type in f64.
fn promotable(ty: ElementType) -> bool {
    matches!(ty, ElementType::F16 | ElementType::BF16 | ElementType::F32)
}

fn promote_shape(shape: &mut Shape) {
    match shape {
        Shape::Array(a) if promotable(a.element_type) => a.element_type = ElementType::F64,
        Shape::Tuple(elements) => elements.iter_mut().for_each(promote_shape),
        _ => {}
    }
}

/// A literal with its f32/f16/bf16 leaves converted (exactly) to f64.
pub fn promote_literal(l: &Literal) -> Result<Literal> {
    if l.is_tuple() {
        return Ok(Literal::tuple(
            l.tuple_elements()
                .iter()
                .map(promote_literal)
                .collect::<Result<_>>()?,
        ));
    }
    match l.element_type() {
        Some(ty) if promotable(ty) => hlo_semantics::convert(l, ElementType::F64),
        _ => Ok(l.clone()),
    }
}

/// `l` (promoted) converted back to the leaf types of `shape`.
fn demote_literal(l: &Literal, shape: &Shape) -> Result<Literal> {
    match shape {
        Shape::Tuple(shapes) => Ok(Literal::tuple(
            l.tuple_elements()
                .iter()
                .zip(shapes)
                .map(|(e, s)| demote_literal(e, s))
                .collect::<Result<_>>()?,
        )),
        Shape::Array(a) if l.element_type() != Some(a.element_type) => {
            hlo_semantics::convert(l, a.element_type)
        }
        _ => Ok(l.clone()),
    }
}

/// The module with every f32/f16/bf16 element type widened to f64 (shapes of
/// every instruction in every computation, constants converted exactly).
/// Instruction and computation ids are unchanged, so the walker can read the
/// original types beside the promoted ones. `convert`s between float types
/// become no-ops, which is the point: the shadow does not round.
pub fn promote_module(module: &HloModule) -> Result<HloModule> {
    let walked = walked_computations(module);
    let mut out = module.clone();
    for (c, comp) in out.computations.iter_mut().enumerate() {
        for instr in &mut comp.instructions {
            promote_shape(&mut instr.shape);
            if let Op::Constant { literal } = &mut instr.op {
                *literal = promote_literal(literal)?;
            }
        }
        if !walked[c] {
            keep_bit_width(comp, &module.computations[c]);
        }
    }
    Ok(out)
}

/// The computations the walker evaluates itself (the entry and what it
/// reaches through `while`, `conditional`, `call` and `fusion`); the others
/// (reducers, comparators, scatter combiners, map bodies) run inside the
/// evaluator's kernels.
fn walked_computations(module: &HloModule) -> Vec<bool> {
    let mut walked = vec![false; module.computations.len()];
    let mut stack = vec![module.entry];
    while let Some(c) = stack.pop() {
        if walked.get(c.index()).copied().unwrap_or(true) {
            continue;
        }
        walked[c.index()] = true;
        for instr in &module.computation(c).instructions {
            match &instr.op {
                Op::While { condition, body } => stack.extend([*condition, *body]),
                Op::Conditional { branches } => stack.extend(branches.iter().copied()),
                Op::Call { to_apply, .. } => stack.push(*to_apply),
                Op::Fusion { calls, .. } => stack.push(*calls),
                _ => {}
            }
        }
    }
    walked
}

/// In a computation the evaluator runs inside a kernel (a sort comparator
/// comparing floats by their bits, say), a `bitcast`/`bitcast-convert` whose
/// operand or result was f32/f16/bf16 must see its original bit width: its
/// operand is converted back to the original type first, and a float result
/// is computed in its original type and widened after. The walker handles the
/// same ops in the computations it walks itself, where ids must not move.
fn keep_bit_width(comp: &mut HloComputation, original: &HloComputation) {
    let needs = |i: &HloInstruction| {
        matches!(i.op, Op::Bitcast | Op::BitcastConvert)
            && (i
                .operands
                .first()
                .and_then(|o| original.instr(*o).shape.as_array())
                .is_some_and(|a| promotable(a.element_type))
                || i.shape
                    .as_array()
                    .is_some_and(|a| promotable(a.element_type)))
    };
    if !original.instructions.iter().any(needs) {
        return;
    }
    let old = std::mem::take(&mut comp.instructions);
    let mut map: Vec<InstrId> = Vec::with_capacity(old.len());
    let mut new: Vec<HloInstruction> = Vec::with_capacity(old.len() + 4);
    for (i, mut instr) in old.into_iter().enumerate() {
        instr.operands = instr.operands.iter().map(|o| map[o.index()]).collect();
        instr.control_predecessors = instr
            .control_predecessors
            .iter()
            .map(|o| map[o.index()])
            .collect();
        let orig = &original.instructions[i];
        if !needs(orig) {
            map.push(InstrId(new.len() as u32));
            new.push(instr);
            continue;
        }
        if let (Some(&operand), Some(&orig_operand)) =
            (instr.operands.first(), orig.operands.first())
        {
            let orig_shape = original.instr(orig_operand).shape.clone();
            if orig_shape
                .as_array()
                .is_some_and(|a| promotable(a.element_type))
            {
                let mut convert = instr.clone();
                convert.name = format!("{}.shadow_narrow", instr.name);
                convert.op = Op::Convert;
                convert.shape = orig_shape;
                convert.operands = vec![operand];
                convert.control_predecessors.clear();
                instr.operands[0] = InstrId(new.len() as u32);
                new.push(convert);
            }
        }
        if orig
            .shape
            .as_array()
            .is_some_and(|a| promotable(a.element_type))
        {
            instr.shape = orig.shape.clone();
            let mut widen = instr.clone();
            widen.name = format!("{}.shadow_widen", instr.name);
            widen.op = Op::Convert;
            promote_shape(&mut widen.shape);
            widen.operands = vec![InstrId(new.len() as u32)];
            widen.control_predecessors.clear();
            new.push(instr);
            map.push(InstrId(new.len() as u32));
            new.push(widen);
        } else {
            map.push(InstrId(new.len() as u32));
            new.push(instr);
        }
    }
    comp.root = map[comp.root.index()];
    comp.instructions = new;
}

/// Whether an instruction's element type differs from its first operand's
/// (a `bitcast` that reinterprets bits).
fn changes_type(module: &HloModule, comp: CompId, id: InstrId) -> bool {
    let c = module.computation(comp);
    let i = c.instr(id);
    let from = i
        .operands
        .first()
        .and_then(|o| c.instr(*o).shape.element_type());
    from.is_some() && from != i.shape.element_type()
}

/// Whether an instruction reads or produces complex values (`real`, `imag`,
/// `complex`, `abs` of complex, `fft`): those mix a complex type, which the
/// shadow does not widen, with a float one, which it does, so they run in the
/// program's own types.
fn touches_complex(module: &HloModule, comp: CompId, id: InstrId) -> bool {
    let c = module.computation(comp);
    let i = c.instr(id);
    let complex = |s: &Shape| s.leaves().iter().any(|(_, a)| a.element_type.is_complex());
    complex(&i.shape) || i.operands.iter().any(|o| complex(&c.instr(*o).shape))
}

/// A value and its scale, with what the walker learned about them: which
/// instruction first made a scale unbounded, and which made the value
/// undefined (see [`Note`]).
#[derive(Clone)]
struct Pair {
    v: Value,
    s: Value,
    /// The instruction whose scale first reached the type's range on the way
    /// to this value.
    origin: Note,
    /// Why the value is not defined by XLA (a Cholesky factor of a matrix
    /// that is not positive definite), per leaf.
    undefined: Note,
}

impl Pair {
    fn new(v: Value, s: Value) -> Pair {
        Pair {
            v,
            s,
            origin: Note::none(),
            undefined: Note::none(),
        }
    }
}

/// A remark about a value, kept per leaf where a `tuple` built the value
/// (`get-tuple-element` takes its element's) and for the value as a whole
/// otherwise.
#[derive(Clone, Debug)]
enum Note {
    All(Option<Arc<str>>),
    Tuple(Vec<Note>),
}

impl Note {
    fn none() -> Note {
        Note::All(None)
    }

    /// The first remark anywhere in the note.
    fn any(&self) -> Option<Arc<str>> {
        match self {
            Note::All(x) => x.clone(),
            Note::Tuple(t) => t.iter().find_map(Note::any),
        }
    }

    fn element(&self, index: usize) -> Note {
        match self {
            Note::All(x) => Note::All(x.clone()),
            Note::Tuple(t) => t.get(index).cloned().unwrap_or_else(Note::none),
        }
    }

    /// One remark per leaf of `shape`, in preorder.
    fn leaves(&self, shape: &Shape, out: &mut Vec<Option<String>>) {
        match shape {
            Shape::Tuple(shapes) => {
                for (i, s) in shapes.iter().enumerate() {
                    self.element(i).leaves(s, out);
                }
            }
            Shape::Array(_) => out.push(self.any().map(|x| x.to_string())),
            Shape::Token => {}
        }
    }
}

/// Zeros of type f64 with the structure of `v` (the scale of exact values).
fn zero_scale(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Array(a) => Value::from_literal(Literal::zeros(&Shape::array(
            ElementType::F64,
            a.dims().to_vec(),
        ))),
        Value::Tuple(t) => Value::Tuple(t.iter().map(zero_scale).collect::<Result<_>>()?),
        Value::Token => Value::Token,
    })
}

fn f64s(v: &Value) -> Result<&[f64]> {
    v.array()?.data::<f64>()
}

/// A literal shaped (and laid out) like `like`, holding `data`.
fn like(like: &Literal, data: &[f64]) -> Result<Literal> {
    let mut out = if like.element_type() == Some(ElementType::F64) {
        like.clone()
    } else {
        Literal::zeros(&Shape::array(ElementType::F64, like.dims().to_vec()))
    };
    let slot = out.data_mut::<f64>()?;
    if slot.len() != data.len() {
        return Err(Error::internal(format!(
            "a scale of {} elements for a value of {}",
            data.len(),
            slot.len()
        )));
    }
    slot.copy_from_slice(data);
    Ok(out)
}

fn all_zero(v: &Value) -> bool {
    f64s(v)
        .map(|d| d.iter().all(|&x| x == 0.0))
        .unwrap_or(false)
}

/// The largest finite scale anywhere in `v`.
fn max_scale(v: &Value) -> f64 {
    match v {
        Value::Array(a) => a
            .data::<f64>()
            .map(|d| d.iter().copied().fold(0.0, f64::max))
            .unwrap_or(0.0),
        Value::Tuple(t) => t.iter().map(max_scale).fold(0.0, f64::max),
        Value::Token => 0.0,
    }
}

/// The largest finite magnitude among the f64 leaves of `v`, for tracing.
fn max_abs(v: &Value) -> f64 {
    match v {
        Value::Array(a) => a
            .data::<f64>()
            .map(|d| {
                d.iter()
                    .filter(|x| x.is_finite())
                    .fold(0.0f64, |m, x| m.max(x.abs()))
            })
            .unwrap_or(0.0),
        Value::Tuple(t) => t.iter().map(max_abs).fold(0.0, f64::max),
        Value::Token => 0.0,
    }
}

/// Element `i` of an operand that may be a scalar broadcast (clamp's bounds).
fn at(d: &[f64], i: usize) -> f64 {
    if d.len() == 1 {
        d[0]
    } else {
        d[i]
    }
}

/// Replaces non-finite derivative terms (a pole, `0·inf`) by the fallback's
/// well-conditioned term, rather than accepting anything there.
fn finite_or(x: f64, fallback: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        fallback
    }
}

/// How far (in f32-roundoff units times the scale) a correct implementation's
/// operand may lie from the shadow's: the default threshold of the judge, 16
/// ULPs of the scale, is about 32 units.
const REACH: f64 = 32.0;

/// Whether rounding decides on which side of `edge` an operand with value
/// `x` and scale `s` lies: then an op with a pole or a domain edge there can
/// give a NaN or an infinity in one correct implementation and a number in
/// another, and the result has no bound at all.
fn straddles(x: f64, s: f64, edge: f64) -> bool {
    s > 0.0 && (x - edge).abs() <= REACH * s * 2f64.powi(-24)
}

/// The scale of a unary elementwise op: `w|y| + |f'(x)|·s_x`; infinite where
/// rounding decides whether the result is defined (an operand within its
/// error of the edge of the domain of `log`, `sqrt`, `rsqrt`, `log1p`).
fn unary_scale(op: UnaryOp, w: f64, x: f64, y: f64, s: f64) -> f64 {
    use UnaryOp::*;
    if s.is_infinite() {
        return s;
    }
    let edge = match op {
        Log | Sqrt | Rsqrt => Some(0.0),
        Log1p => Some(-1.0),
        _ => None,
    };
    if edge.is_some_and(|e| straddles(x, s, e)) {
        return f64::INFINITY;
    }
    let own = if y.is_finite() { w * y.abs() } else { 0.0 };
    let d = match op {
        // Exact ops: the error moves with the value.
        Abs | Negate | Real | Imag => return s,
        Sign | Floor | Ceil | RoundNearestAfz | RoundNearestEven => return s,
        Exp => y.abs() * s,
        Expm1 => (y + 1.0).abs() * s,
        Log => s / x.abs(),
        Log1p => s / (1.0 + x).abs(),
        // Near zero, |sqrt(x+e) - sqrt(x)| <= sqrt(e), in units of u = 2^-24.
        Sqrt => (s / (2.0 * y.abs())).min((s * 2f64.powi(24)).sqrt()),
        Rsqrt => y.abs() / (2.0 * x.abs()) * s,
        Cbrt => (y.abs() / (3.0 * x.abs()) * s).min((s * 2f64.powi(24)).cbrt()),
        // Ops with a bounded range: whatever the operand's error, the
        // result's cannot exceed the width of that range (2, or 1 for
        // logistic), 2^24 units of the f32 roundoff per unit of width.
        Tanh => ((1.0 - y * y).abs() * s).min(2.0 * 2f64.powi(24)),
        Logistic => ((y * (1.0 - y)).abs() * s).min(2f64.powi(24)),
        Sin | Cos => s.min(2.0 * 2f64.powi(24)),
        Tan => (1.0 + y * y) * s,
        Erf => (2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * s).min(2.0 * 2f64.powi(24)),
        _ => s,
    };
    own + finite_or(d, s)
}

/// The scale of a binary elementwise op; infinite for a division whose
/// divisor is within its error of zero.
fn binary_scale(op: BinaryOp, w: f64, a: f64, b: f64, y: f64, sa: f64, sb: f64) -> f64 {
    use BinaryOp::*;
    if sa.is_infinite() || sb.is_infinite() {
        return f64::INFINITY;
    }
    if matches!(op, Divide | Remainder | Atan2) && straddles(b, sb, 0.0) {
        return f64::INFINITY;
    }
    let own = if y.is_finite() { w * y.abs() } else { 0.0 };
    let plain = sa + sb;
    let d = match op {
        Add | Subtract => plain,
        Multiply => b.abs() * sa + a.abs() * sb,
        Divide => (sa + y.abs() * sb) / b.abs(),
        Maximum | Minimum => return sa.max(sb),
        Power => (b * y / a).abs() * sa + (y * a.abs().ln()).abs() * sb,
        Atan2 => (b.abs() * sa + a.abs() * sb) / (a * a + b * b),
        Remainder => sa + (a / b).trunc().abs() * sb,
        _ => plain,
    };
    own + finite_or(d, plain)
}

/// Walks a module on (value, scale) pairs.
struct Walker<'a> {
    original: &'a HloModule,
    promoted: &'a HloModule,
    /// Evaluates instructions of the promoted module (values in f64).
    wide: Evaluator<'a>,
    /// Evaluates the instructions whose meaning depends on the bit width
    /// (bitcast-convert, rng, custom calls) in the original types.
    narrow: Evaluator<'a>,
    step_limit: Option<u64>,
    fallbacks: BTreeMap<String, usize>,
}

/// Evaluates `module`'s entry computation on `args` in f64 with error scales.
/// See the module documentation for the method.
pub fn shadow_evaluate(
    module: &HloModule,
    args: &[Literal],
    ctx: &RunContext,
) -> Result<ShadowOutput> {
    let params = module.entry_program_shape().parameters;
    if params.len() != args.len() {
        return Err(Error::invalid_argument(format!(
            "the entry computation takes {} arguments; {} were given",
            params.len(),
            args.len()
        )));
    }
    let promoted = promote_module(module)?;
    // No FMA contraction: the shadow is in f64, where it changes nothing that matters.
    let wide_plan = ModulePlan::new(&promoted, false)?;
    let narrow_plan = ModulePlan::new(module, false)?;
    let mut walker = Walker {
        original: module,
        promoted: &promoted,
        wide: Evaluator::new(&promoted, &wide_plan, ctx),
        narrow: Evaluator::new(module, &narrow_plan, ctx),
        step_limit: ctx.while_step_limit,
        fallbacks: BTreeMap::new(),
    };
    let mut pairs = Vec::with_capacity(args.len());
    for a in args {
        let v = Value::from_literal(promote_literal(a)?);
        let s = zero_scale(&v)?;
        pairs.push(Pair::new(v, s));
    }
    let out = walker.walk(module.entry, pairs)?;
    let root = &module.computation(module.entry).root_instr().shape;
    let (mut unbounded_origin, mut undefined) = (Vec::new(), Vec::new());
    out.origin.leaves(root, &mut unbounded_origin);
    out.undefined.leaves(root, &mut undefined);
    Ok(ShadowOutput {
        value: out.v.into_literal(),
        scale: out.s.into_literal(),
        fallbacks: walker.fallbacks,
        unbounded_origin,
        undefined,
    })
}

impl Walker<'_> {
    fn walk(&mut self, comp_id: CompId, args: Vec<Pair>) -> Result<Pair> {
        hlo_ir::stack::deep(|| self.walk_on_this_stack(comp_id, args))
    }

    fn walk_on_this_stack(&mut self, comp_id: CompId, args: Vec<Pair>) -> Result<Pair> {
        let original = self.original;
        let comp = original.computation(comp_id);
        let live = self.wide.plan.computation(comp_id).live.clone();
        let mut args: Vec<Option<Pair>> = args.into_iter().map(Some).collect();
        let mut slots: Vec<Option<Pair>> = vec![None; comp.instructions.len()];
        // `HLO_SHADOW_TRACE=1` prints each instruction's largest value and
        // scale: where a scale grows out of proportion, this shows which op.
        let trace = std::env::var_os("HLO_SHADOW_TRACE").is_some();
        for (i, instr) in comp.instructions.iter().enumerate() {
            if !live[i] {
                continue;
            }
            let operands = instr
                .operands
                .iter()
                .map(|k| {
                    slots[k.index()].clone().ok_or_else(|| {
                        Error::internal(format!("%{} is used before it has a value", instr.name))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            // The shadow holds an f64 value and an f64 scale per element and
            // computes a scale from temporaries of the same size: a result
            // too large for that is an error, never an abort.
            let need = self.wide.plan.computation(comp_id).probe_bytes[i];
            if need > 0 {
                let total = need.saturating_mul(3);
                hlo_ir::literal::AlignedBytes::try_zeroed(total).map_err(|_| {
                    Error::resource_exhausted(format!(
                        "%{} ({}) needs about {total} bytes for its f64 value and error scale \
                         ({}), more than can be allocated",
                        instr.name,
                        instr.opcode(),
                        instr.shape
                    ))
                })?;
            }
            let inherited_origin = operands.iter().find_map(|p| p.origin.any());
            let inherited_undefined = operands.iter().find_map(|p| p.undefined.any());
            // XLA leaves a Cholesky factor of a matrix that is not positive
            // definite implementation-defined; the evaluator's NaNs there are
            // one choice among many.
            let not_positive_definite = matches!(instr.op, Op::Cholesky { .. })
                && !operands.first().is_some_and(|p| has_nan(&p.v));
            // A triangular matrix with an infinity or NaN in the triangle it
            // reads: where that reaches the result, which elements come out
            // NaN depends on the solve's order and blocking (XLA CPU's own
            // blocked solve gives NaN where substitution gives a number).
            let nonfinite_triangle = match &instr.op {
                Op::TriangularSolve { options } => operands.first().is_some_and(|p| {
                    nonfinite_in_triangle(&p.v, options.lower, options.unit_diagonal)
                }),
                _ => false,
            };
            let mut pair = self
                .step(comp_id, InstrId(i as u32), operands, &mut args)
                .map_err(|e| e.context(format!("%{} ({})", instr.name, instr.opcode())))?;
            let marks = !matches!(
                instr.op,
                Op::Dot { .. }
                    | Op::Convolution { .. }
                    | Op::Reduce { .. }
                    | Op::ReduceWindow { .. }
                    | Op::Scatter { .. }
            );
            let (v, s, unbounded) = settle(pair.v, pair.s, &instr.shape, marks)?;
            (pair.v, pair.s) = (v, s);
            let this = || -> Arc<str> { format!("%{} ({})", instr.name, instr.opcode()).into() };
            if unbounded > 0 && pair.origin.any().is_none() {
                pair.origin = Note::All(Some(inherited_origin.unwrap_or_else(this)));
            }
            if nonfinite_triangle && has_nonfinite(&pair.v) {
                pair.undefined = Note::All(Some(
                    format!(
                        "%{} (triangular-solve) reads an infinity or NaN in its matrix, and \
                         where non-finite values land then depends on the order of the solve",
                        instr.name
                    )
                    .into(),
                ));
            } else if not_positive_definite && has_nan(&pair.v) {
                pair.undefined = Note::All(Some(
                    format!(
                        "%{} (cholesky) factors a matrix that is not positive definite, \
                         which XLA leaves implementation-defined",
                        instr.name
                    )
                    .into(),
                ));
            } else if pair.undefined.any().is_none() {
                if let Some(why) = inherited_undefined.filter(|_| {
                    !matches!(
                        instr.op,
                        Op::Tuple | Op::GetTupleElement { .. } | Op::Parameter { .. }
                    )
                }) {
                    pair.undefined = Note::All(Some(why));
                }
            }
            if trace {
                eprintln!(
                    "shadow %{}: max|v| {:.3e}, max s {:.3e}",
                    instr.name,
                    max_abs(&pair.v),
                    max_scale(&pair.s)
                );
            }
            slots[i] = Some(pair);
        }
        slots[comp.root.index()]
            .take()
            .ok_or_else(|| Error::internal(format!("the root of {} produced no value", comp.name)))
    }

    fn step(
        &mut self,
        comp_id: CompId,
        id: InstrId,
        operands: Vec<Pair>,
        args: &mut [Option<Pair>],
    ) -> Result<Pair> {
        let original = self.original;
        let oi = original.computation(comp_id).instr(id);
        let first = |ops: &[Pair]| -> Result<Pair> {
            ops.first()
                .cloned()
                .ok_or_else(|| Error::invalid_argument("missing operand"))
        };
        match &oi.op {
            Op::Parameter { number } => args
                .get_mut(*number)
                .and_then(Option::take)
                .ok_or_else(|| Error::invalid_argument(format!("parameter {number} missing"))),
            Op::Tuple => {
                let (mut v, mut s, mut origin, mut undefined) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for p in operands {
                    v.push(p.v);
                    s.push(p.s);
                    origin.push(p.origin);
                    undefined.push(p.undefined);
                }
                Ok(Pair {
                    v: Value::Tuple(v),
                    s: Value::Tuple(s),
                    origin: Note::Tuple(origin),
                    undefined: Note::Tuple(undefined),
                })
            }
            Op::GetTupleElement { index } => {
                let p = first(&operands)?;
                let pick = |t: &Value| -> Result<Value> {
                    t.tuple()?.get(*index).cloned().ok_or_else(|| {
                        Error::invalid_argument(format!("tuple index {index} out of range"))
                    })
                };
                Ok(Pair {
                    v: pick(&p.v)?,
                    s: pick(&p.s)?,
                    origin: p.origin.element(*index),
                    undefined: p.undefined.element(*index),
                })
            }
            Op::Copy | Op::OptimizationBarrier | Op::AddDependency => first(&operands),
            Op::Call { to_apply, .. } => self.walk(*to_apply, operands),
            Op::Fusion { calls, .. } => self.walk(*calls, operands),
            Op::While { condition, body } => {
                let mut state = first(&operands)?;
                let mut steps = 0u64;
                loop {
                    let go = self.walk(*condition, vec![state.clone()])?;
                    match scalar_of(&go.v, "the while condition")? {
                        Scalar::Pred(true) => {}
                        Scalar::Pred(false) => return Ok(state),
                        other => {
                            return Err(Error::invalid_argument(format!(
                                "the while condition returned {other}, not a pred"
                            )))
                        }
                    }
                    if self.step_limit.is_some_and(|limit| steps >= limit) {
                        return Err(Error::resource_exhausted(format!(
                            "the while loop ran past its step limit of {steps}"
                        )));
                    }
                    state = self.walk(*body, vec![state])?;
                    steps += 1;
                }
            }
            Op::Conditional { branches } => {
                let selector = scalar_of(&first(&operands)?.v, "the branch selector")?;
                let k = match selector {
                    Scalar::Pred(p) => usize::from(!p),
                    other => {
                        let i = other.to_i64().unwrap_or(-1);
                        if i < 0 || i as usize >= branches.len() {
                            branches.len().saturating_sub(1)
                        } else {
                            i as usize
                        }
                    }
                };
                let branch = *branches
                    .get(k)
                    .ok_or_else(|| Error::invalid_argument("a conditional without branches"))?;
                let arg = operands
                    .get(k + 1)
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("a branch operand is missing"))?;
                self.walk(branch, vec![arg])
            }
            op if matches!(
                op,
                Op::BitcastConvert
                    | Op::Bitcast
                    | Op::Rng { .. }
                    | Op::RngBitGenerator { .. }
                    | Op::StochasticConvert
                    | Op::CustomCall(_)
            ) && (!matches!(op, Op::Bitcast) || changes_type(original, comp_id, id))
                || touches_complex(original, comp_id, id) =>
            {
                // Their meaning depends on the bit width: evaluated in the original types.
                let comp = original.computation(comp_id);
                let mut vals = Vec::with_capacity(operands.len());
                for (p, k) in operands.iter().zip(&oi.operands) {
                    let shape = &comp.instr(*k).shape;
                    vals.push(Value::from_literal(demote_literal(
                        &p.v.to_literal(),
                        shape,
                    )?));
                }
                let v = self
                    .narrow
                    .eval_instruction(comp_id, id, oi, vals, &mut [])?;
                let v = Value::from_literal(promote_literal(&v.into_literal())?);
                let s = if matches!(oi.op, Op::BitcastConvert) {
                    // Bits reinterpreted: exact.
                    zero_scale(&v)?
                } else if matches!(oi.op, Op::CustomCall(_)) {
                    // Mostly linear algebra (XLA's LAPACK targets): normwise.
                    self.fallback_of(
                        Fallback::Normwise,
                        oi.opcode().name(),
                        &v,
                        &operands,
                        &oi.shape,
                    )?
                } else {
                    let s = self.fallback(oi.opcode().name(), &v, &operands, &oi.shape)?;
                    if touches_complex(original, comp_id, id) {
                        // Complex values carry no scale of their own; an op on
                        // them (fft above all) mixes every element, so its
                        // rounding is charged as a sum over all of them:
                        // w·sqrt(N)·max|x| (w of f32, N the operand elements).
                        let (mut big, mut n) = (0.0f64, 0usize);
                        for p in &operands {
                            if let Ok(l) = p.v.array() {
                                big = big.max(max_magnitude(l)?);
                                n = n.max(l.element_count());
                            }
                        }
                        // Rounded in the precision of the complex parts
                        // (f64 for c128), the largest of the result's.
                        let w = oi
                            .shape
                            .leaves()
                            .iter()
                            .map(|(_, a)| rounding_weight(component_type(a.element_type)))
                            .fold(0.0, f64::max);
                        add_everywhere(s, w * (n.max(1) as f64).sqrt() * big)?
                    } else {
                        s
                    }
                };
                Ok(Pair::new(v, s))
            }
            _ => {
                let pi = self.promoted.computation(comp_id).instr(id);
                let mut vals: Vec<Value> = operands.iter().map(|p| p.v.clone()).collect();
                if let (Op::Convert, Some(&k)) = (&oi.op, oi.operands.first()) {
                    // A float converted to an integer: the program converts
                    // a value of its own float type, so the shadow converts
                    // its value rounded to that type (an exact product such
                    // as a * 1e10 then gives the program's integer, not
                    // the f64 one hundreds away).
                    let from = original.computation(comp_id).instr(k).shape.clone();
                    let to_integer = oi
                        .shape
                        .element_type()
                        .is_some_and(|t| t.is_integer() || t.is_pred());
                    if to_integer && from.element_type().is_some_and(promotable) {
                        if let Some(v) = vals.first_mut() {
                            let narrow = demote_literal(&v.to_literal(), &from)?;
                            *v = Value::from_literal(promote_literal(&narrow)?);
                        }
                    }
                }
                let v = self.wide.eval_instruction(comp_id, id, pi, vals, &mut [])?;
                let s = self.scale(comp_id, id, &operands, &v)?;
                Ok(Pair::new(v, s))
            }
        }
    }

    /// `w|y| + max s` over the operands, for every float leaf of `v`.
    fn fallback(
        &mut self,
        opcode: &str,
        v: &Value,
        operands: &[Pair],
        shape: &Shape,
    ) -> Result<Value> {
        self.fallback_of(Fallback::Elementwise, opcode, v, operands, shape)
    }

    /// The fallback scale of kind `kind` for every float leaf of `v`, plus
    /// the operands' largest scale; counts the op in [`ShadowOutput::fallbacks`].
    fn fallback_of(
        &mut self,
        kind: Fallback,
        opcode: &str,
        v: &Value,
        operands: &[Pair],
        shape: &Shape,
    ) -> Result<Value> {
        *self.fallbacks.entry(opcode.to_string()).or_insert(0) += 1;
        let m = operands.iter().map(|p| max_scale(&p.s)).fold(0.0, f64::max);
        fallback_leaf(v, shape, m, kind)
    }

    /// Runs the promoted instruction on substituted operands.
    fn same_op(&mut self, comp_id: CompId, id: InstrId, operands: Vec<Value>) -> Result<Value> {
        let pi = self.promoted.computation(comp_id).instr(id);
        self.wide
            .eval_instruction(comp_id, id, pi, operands, &mut [])
    }

    fn scale(&mut self, comp_id: CompId, id: InstrId, ops: &[Pair], v: &Value) -> Result<Value> {
        let original = self.original;
        let comp = original.computation(comp_id);
        let oi = comp.instr(id);
        let ty = match oi.shape.as_array().map(|a| a.element_type) {
            Some(ty) if promotable(ty) || ty == ElementType::F64 => ty,
            Some(_) => return indeterminate_elementwise(oi, ops, v),
            None => return self.fallback(oi.opcode().name(), v, ops, &oi.shape),
        };
        let w = rounding_weight(ty);
        let is_float_operand = |k: usize| {
            oi.operands
                .get(k)
                .and_then(|o| comp.instr(*o).shape.as_array())
                .is_some_and(|a| promotable(a.element_type) || a.element_type == ElementType::F64)
        };
        let arg = |k: usize| -> Result<&Pair> {
            ops.get(k)
                .ok_or_else(|| Error::invalid_argument(format!("operand {k} is missing")))
        };
        let y = v.array()?;
        let yd = y.data::<f64>()?;
        let out = |d: Vec<f64>| -> Result<Value> { Ok(Value::from_literal(like(y, &d)?)) };
        match &oi.op {
            Op::Constant { .. } | Op::Iota { .. } => zero_scale(v),
            Op::Unary(u) => {
                let (x, s) = (f64s(&arg(0)?.v)?, f64s(&arg(0)?.s)?);
                out((0..yd.len())
                    .map(|i| unary_scale(*u, w, x[i], yd[i], s[i]))
                    .collect())
            }
            Op::Binary(b) => {
                let (a, sa) = (f64s(&arg(0)?.v)?, f64s(&arg(0)?.s)?);
                let (bb, sb) = (f64s(&arg(1)?.v)?, f64s(&arg(1)?.s)?);
                out((0..yd.len())
                    .map(|i| binary_scale(*b, w, a[i], bb[i], yd[i], sa[i], sb[i]))
                    .collect())
            }
            Op::Clamp => {
                let s: Vec<&[f64]> = (0..3).map(|k| f64s(&arg(k)?.s)).collect::<Result<_>>()?;
                out((0..yd.len())
                    .map(|i| at(s[0], i).max(at(s[1], i)).max(at(s[2], i)))
                    .collect())
            }
            Op::Convert => {
                let from = comp
                    .instr(oi.operands[0])
                    .shape
                    .as_array()
                    .map(|a| a.element_type);
                let p_out = significand_bits(ty).unwrap_or(53);
                match from {
                    Some(f) if significand_bits(f).is_some() => {
                        let narrowing = significand_bits(f).is_some_and(|p| p > p_out);
                        let s = f64s(&arg(0)?.s)?;
                        // A non-finite result adds no rounding (and must not
                        // turn an infinite scale into NaN).
                        out((0..yd.len())
                            .map(|i| {
                                let own = if narrowing && yd[i].is_finite() {
                                    w * yd[i].abs()
                                } else {
                                    0.0
                                };
                                s[i] + own
                            })
                            .collect())
                    }
                    _ => {
                        // From an integer: exact below 2^p.
                        let limit = 2f64.powi(p_out);
                        out(yd
                            .iter()
                            .map(|y| if y.abs() < limit { 0.0 } else { w * y.abs() })
                            .collect())
                    }
                }
            }
            Op::ReducePrecision { mantissa_bits, .. } => {
                let s = f64s(&arg(0)?.s)?;
                let wr = 2f64.powi(24 - (*mantissa_bits as i32 + 1));
                out((0..yd.len()).map(|i| s[i] + wr * yd[i].abs()).collect())
            }
            Op::Reshape
            | Op::Transpose { .. }
            | Op::Slice { .. }
            | Op::Broadcast { .. }
            | Op::Concatenate { .. }
            | Op::Pad { .. }
            | Op::Reverse { .. }
            | Op::Gather { .. }
            | Op::DynamicSlice { .. }
            | Op::DynamicUpdateSlice
            | Op::Select
            | Op::Bitcast => {
                // Data movement: the same op moves the scales (index and
                // predicate operands stay as they are).
                let subs = (0..ops.len())
                    .map(|k| {
                        let p = arg(k)?;
                        Ok(if is_float_operand(k) {
                            p.s.clone()
                        } else {
                            p.v.clone()
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let moved = self.same_op(comp_id, id, subs)?;
                if !matches!(oi.op, Op::Select) {
                    return Ok(moved);
                }
                // A predicate whose value rounding decides picks either side.
                let pred_scale = f64s(&arg(0)?.s)?;
                if !pred_scale.iter().any(|x| x.is_infinite()) {
                    return Ok(moved);
                }
                let mut d = f64s(&moved)?.to_vec();
                for (i, x) in d.iter_mut().enumerate() {
                    if at(pred_scale, i).is_infinite() {
                        *x = f64::INFINITY;
                    }
                }
                out(d)
            }
            Op::Dot { dnums, .. } => {
                let (a, b) = (arg(0)?, arg(1)?);
                let a_dims = comp.instr(oi.operands[0]).shape.dims().to_vec();
                let n: f64 = dnums
                    .lhs_contracting_dims
                    .iter()
                    .map(|&d| a_dims.get(d).copied().unwrap_or(1) as f64)
                    .product();
                self.sum_scale(comp_id, id, w, (a, b), Some(n), yd)
            }
            Op::Convolution { .. } => {
                let (a, b) = (arg(0)?, arg(1)?);
                self.sum_scale(comp_id, id, w, (a, b), None, yd)
            }
            Op::Reduce { to_apply, .. } | Op::ReduceWindow { to_apply, .. } if ops.len() == 2 => {
                let (x, init) = (arg(0)?, arg(1)?);
                match binary_combiner(original.computation(*to_apply)).map(|c| c.op) {
                    Some(BinaryOp::Add) => {
                        // As for dot (`sum_scale`): partial sums about |y| + sqrt(Σ x²).
                        let abs =
                            self.same_op(comp_id, id, vec![square_of(&x.v)?, square_of(&init.v)?])?;
                        let ones = ones_like(&x.v)?;
                        let count =
                            self.same_op(comp_id, id, vec![ones.clone(), ones_like(&init.v)?])?;
                        let (abs, count) = (f64s(&abs)?.to_vec(), f64s(&count)?.to_vec());
                        // Operand scales in quadrature, as for dot (`sum_scale`).
                        let moved = if all_zero(&x.s) && all_zero(&init.s) {
                            vec![0.0; yd.len()]
                        } else {
                            let (sx, si) = (square_of(&x.s)?, square_of(&init.s)?);
                            f64s(&self.same_op(comp_id, id, vec![sx, si])?)?
                                .iter()
                                .map(|v| v.sqrt())
                                .collect()
                        };
                        out((0..yd.len())
                            .map(|i| {
                                w * count[i].max(1.0).sqrt() * (yd[i].abs() + abs[i].sqrt())
                                    + moved[i]
                            })
                            .collect())
                    }
                    Some(BinaryOp::Maximum) => {
                        self.same_op(comp_id, id, vec![x.s.clone(), init.s.clone()])
                    }
                    Some(BinaryOp::Minimum) => {
                        // min(-s) = -max(s): the largest candidate scale.
                        let neg = |v: &Value| -> Result<Value> {
                            let l = v.array()?;
                            let d: Vec<f64> = l.data::<f64>()?.iter().map(|x| -x).collect();
                            Ok(Value::from_literal(like(l, &d)?))
                        };
                        let r = self.same_op(comp_id, id, vec![neg(&x.s)?, neg(&init.s)?])?;
                        neg(&r)
                    }
                    _ => self.fallback(oi.opcode().name(), v, ops, &oi.shape),
                }
            }
            Op::Scatter { to_apply, .. } if ops.len() == 3 => {
                let combiner = original.computation(*to_apply);
                let (target, indices, updates) = (arg(0)?, arg(1)?, arg(2)?);
                if binary_combiner(combiner).map(|c| c.op) == Some(BinaryOp::Add) {
                    // Each element is a sum of the target and the updates that
                    // land on it: the add-reduce rule, with the terms' squares
                    // and their count scattered the same way.
                    let sq = |v: &Value| square_of(v);
                    let squares = self.same_op(
                        comp_id,
                        id,
                        vec![sq(&target.v)?, indices.v.clone(), sq(&updates.v)?],
                    )?;
                    let count = self.same_op(
                        comp_id,
                        id,
                        vec![
                            ones_like(&target.v)?,
                            indices.v.clone(),
                            ones_like(&updates.v)?,
                        ],
                    )?;
                    let moved = self.same_op(
                        comp_id,
                        id,
                        vec![sq(&target.s)?, indices.v.clone(), sq(&updates.s)?],
                    )?;
                    let (squares, count, moved) = (f64s(&squares)?, f64s(&count)?, f64s(&moved)?);
                    out((0..yd.len())
                        .map(|i| {
                            w * count[i].max(1.0).sqrt() * (yd[i].abs() + squares[i].sqrt())
                                + moved[i].sqrt()
                        })
                        .collect())
                } else if returned_parameter(combiner) == Some(1) {
                    // Overwrite: the scales move with the values.
                    let subs = vec![target.s.clone(), indices.v.clone(), updates.s.clone()];
                    self.same_op(comp_id, id, subs)
                } else {
                    self.fallback(oi.opcode().name(), v, ops, &oi.shape)
                }
            }
            _ => self.fallback(oi.opcode().name(), v, ops, &oi.shape),
        }
    }

    /// The scale of a sum of products (dot, convolution):
    /// `w·sqrt(n)·(|y| + sqrt(op(a²,b²))) + sqrt(op(s_a²,b²) + op(a²,s_b²))`, with `n` the number
    /// of terms per element (given, or counted by running the op on ones).
    fn sum_scale(
        &mut self,
        comp_id: CompId,
        id: InstrId,
        w: f64,
        (a, b): (&Pair, &Pair),
        n: Option<f64>,
        y: &[f64],
    ) -> Result<Value> {
        // The partial sums of a sum in any natural order (sequential, blocked,
        // SIMD lanes) are about |y| plus a random walk of the terms,
        // sqrt(Σ t²): each of the n roundings costs u times that, and they
        // add up like sqrt(n).
        let squares = self.same_op(comp_id, id, vec![square_of(&a.v)?, square_of(&b.v)?])?;
        let m = squares.array()?;
        let mut total: Vec<f64> = m
            .data::<f64>()?
            .iter()
            .zip(y)
            .map(|(q, y)| y.abs() + q.sqrt())
            .collect();
        match n {
            Some(n) => {
                let k = w * n.max(1.0).sqrt();
                total.iter_mut().for_each(|x| *x *= k);
            }
            None => {
                let count = self.same_op(comp_id, id, vec![ones_like(&a.v)?, ones_like(&b.v)?])?;
                for (x, c) in total.iter_mut().zip(f64s(&count)?) {
                    *x *= w * c.max(1.0).sqrt();
                }
            }
        }
        // Operand errors combine in quadrature: the errors of different
        // elements are independent roundings, so through a sum of n terms
        // they grow like sqrt(n), not n (the linear bound made a two-layer
        // MLP's scale a thousand times its observed error).
        let square = square_of;
        let mut variance = vec![0.0; total.len()];
        for (sa, bb, a_first) in [(&a.s, &b.v, true), (&b.s, &a.v, false)] {
            if all_zero(sa) {
                continue;
            }
            let (s2, v2) = (square(sa)?, square(bb)?);
            let pair = if a_first { vec![s2, v2] } else { vec![v2, s2] };
            let moved = self.same_op(comp_id, id, pair)?;
            for (x, m) in variance.iter_mut().zip(f64s(&moved)?) {
                *x += m;
            }
        }
        for (x, v) in total.iter_mut().zip(&variance) {
            *x += v.sqrt();
        }
        Ok(Value::from_literal(like(m, &total)?))
    }
}

/// The scale of a non-float result: zeros (integers and predicates are
/// exact), but infinite where an elementwise op (`compare`, `is-finite`,
/// `convert`) read an operand whose class rounding decides.
fn indeterminate_elementwise(oi: &HloInstruction, ops: &[Pair], v: &Value) -> Result<Value> {
    let zeros = zero_scale(v)?;
    if !matches!(oi.op, Op::Compare { .. } | Op::Unary(_) | Op::Convert) {
        return Ok(zeros);
    }
    let Ok(z) = zeros.array() else {
        return Ok(zeros);
    };
    let n = z.element_count();
    let mut out: Option<Vec<f64>> = None;
    for p in ops {
        let Ok(s) = f64s(&p.s) else { continue };
        if s.len() != n {
            continue;
        }
        for (i, x) in s.iter().enumerate() {
            if x.is_infinite() {
                out.get_or_insert_with(|| vec![0.0; n])[i] = f64::INFINITY;
            }
        }
    }
    match out {
        Some(d) => Ok(Value::from_literal(like(z, &d)?)),
        None => Ok(zeros),
    }
}

fn square_of(v: &Value) -> Result<Value> {
    let l = v.array()?;
    let d: Vec<f64> = l.data::<f64>()?.iter().map(|x| x * x).collect();
    Ok(Value::from_literal(like(l, &d)?))
}

fn ones_like(v: &Value) -> Result<Value> {
    let l = v.array()?;
    Ok(Value::from_literal(like(l, &vec![1.0; l.element_count()])?))
}

/// The largest magnitude of a literal's elements (complex: the modulus).
fn max_magnitude(l: &Literal) -> Result<f64> {
    let mut m = 0.0f64;
    for i in 0..l.element_count() {
        let x = match l.get(i)? {
            Scalar::C64(c) => f64::from(c.norm()),
            Scalar::C128(c) => c.norm(),
            other => other.to_f64_lossy().abs(),
        };
        if x.is_finite() {
            m = m.max(x);
        }
    }
    Ok(m)
}

/// `v` (a scale) plus `extra` in every element; a complex leaf's scale, zeros
/// until now, becomes `extra`.
fn add_everywhere(v: Value, extra: f64) -> Result<Value> {
    Ok(match v {
        Value::Array(a) => {
            let d: Vec<f64> = a.data::<f64>()?.iter().map(|x| x + extra).collect();
            Value::from_literal(like(&a, &d)?)
        }
        Value::Tuple(t) => Value::Tuple(
            t.into_iter()
                .map(|e| add_everywhere(e, extra))
                .collect::<Result<_>>()?,
        ),
        Value::Token => Value::Token,
    })
}

/// How the fallback scales an op without a rule of its own.
#[derive(Clone, Copy)]
enum Fallback {
    /// `w|y|` per element: a well-conditioned op (`|∂f/∂x| ≤ 1`).
    Elementwise,
    /// `w·n·max|y|` per leaf, `n` the larger of its two minor dimensions: a
    /// factorization or solve (custom calls, mostly LAPACK). A
    /// backward-stable algorithm's error in an element is a multiple of the
    /// unit roundoff times the matrix dimension and the *largest* element,
    /// not the element itself: two correct LAPACKs differ in a small entry
    /// of Q by many of its own ULPs.
    Normwise,
}

/// The fallback scale of `kind` for each leaf of `v` (shape `shape`,
/// original types) plus `m`; zeros for non-float leaves.
fn fallback_leaf(v: &Value, shape: &Shape, m: f64, kind: Fallback) -> Result<Value> {
    match (v, shape) {
        (Value::Tuple(t), Shape::Tuple(shapes)) => Ok(Value::Tuple(
            t.iter()
                .zip(shapes)
                .map(|(v, s)| fallback_leaf(v, s, m, kind))
                .collect::<Result<_>>()?,
        )),
        (Value::Array(a), Shape::Array(s))
            if promotable(s.element_type)
                || s.element_type == ElementType::F64
                || (matches!(kind, Fallback::Normwise) && s.element_type.is_complex()) =>
        {
            // A complex leaf (a complex factorization's) is rounded in its
            // parts' precision.
            let w = rounding_weight(component_type(s.element_type));
            let d: Vec<f64> = match kind {
                Fallback::Elementwise => a
                    .data::<f64>()?
                    .iter()
                    .map(|y| if y.is_finite() { w * y.abs() } else { 0.0 } + m)
                    .collect(),
                Fallback::Normwise => {
                    let n = s
                        .dims
                        .iter()
                        .rev()
                        .take(2)
                        .copied()
                        .max()
                        .unwrap_or(1)
                        .max(1);
                    vec![w * n as f64 * max_magnitude(a)? + m; a.element_count()]
                }
            };
            Ok(Value::from_literal(like(a, &d)?))
        }
        (other, _) => zero_scale(other),
    }
}
