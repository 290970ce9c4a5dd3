//! Complex numbers (`c64`, `c128`) as pairs of real arrays (`f32`, `f64`).
//!
//! A complex value is rewritten where it is made and where it is used, so
//! that in the end only real parts flow:
//!
//! * Complex ops (`add`, `subtract`, `multiply`, `negate`, `abs`, `fft`)
//!   read their operands' parts with `real`/`imag` and return
//!   `complex(re, im)` (or a real result).
//! * `real`/`imag` look through what made their operand: `complex(a, b)` gives
//!   `a`/`b`; a complex constant its part as a real constant; a `convert`
//!   from a real type the converted value (or zeros); data movement
//!   (`broadcast`, `reshape`, `transpose`, `slice`, `concatenate`) the same
//!   movement of the operands' parts. Complex ops whose operands do not come
//!   from those (a complex parameter, say) are left as written, and the error
//!   names them.
//! * `complex(a, b)` is never expanded itself: once every use is rewritten it
//!   is dead and disappears (its plan is empty so the ops above count as
//!   legalizable; where a complex value reaches a parameter or the result, it
//!   stays and is reported).
//!
//! Exactness: `add`, `subtract`, `negate`, `multiply` (`ac - bd`, `ad + bc`)
//! and `abs` (`max * sqrt(1 + (min/max)^2)`, `min` where that is NaN) are the
//! evaluator's formulas in the part type, op for op: exact. `fft` (1 to 3
//! dimensions; `FFT`, `IFFT`, `RFFT`, `IRFFT`, lengths up to 1024) is a direct
//! DFT per transformed dimension (moved last with `transpose`; `RFFT`'s real
//! one on the last dimension first, `IRFFT`'s with the Hermitian half folded
//! in on the last dimension last): the parts in `f64` times constant
//! `cos`/`sin` matrices (the evaluator's twiddles, angles from `jk mod n`) with
//! `dot`, inverse transforms divided by `n` per dimension, rounded once to the
//! part type. The evaluator also transforms in `f64` and rounds
//! once, by another summation order, so for finite inputs results agree to 1
//! ulp or an absolute `2^-40` times the row's magnitude (bins that cancel to
//! near zero); with infinities or NaN in a row, which bins are NaN may differ.

use super::{all_of_type, tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::{ComparisonDirection as Dir, DotDimensionNumbers, FftType};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::{BinaryOp, UnaryOp};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode, Scalar};

/// The part type of a complex type.
fn part_of(c: ElementType) -> Option<ElementType> {
    match c {
        ElementType::C64 => Some(ElementType::F32),
        ElementType::C128 => Some(ElementType::F64),
        _ => None,
    }
}

/// `(part, complex)` if `types` are exactly a complex type and its part type.
fn part_and_complex(types: &[ElementType]) -> Option<(ElementType, ElementType)> {
    let c = types.iter().copied().find(|t| t.is_complex())?;
    let p = part_of(c)?;
    (types == tys(&[p, c]).as_slice()).then_some((p, c))
}

/// `real`/`imag` of `x` (complex), as a new instruction.
fn part(b: &mut Emitter<'_, '_>, x: InstrId, imag: bool) -> Result<InstrId> {
    let (c, dims) = b.array(x)?;
    let p = part_of(c).ok_or_else(|| Error::invalid_argument("not a complex value"))?;
    let op = if imag { UnaryOp::Imag } else { UnaryOp::Real };
    Ok(b.add(Shape::array(p, dims), Op::Unary(op), vec![x]))
}

/// `complex(re, im)` with the result shape of `like` (a complex array).
fn join(b: &mut Emitter<'_, '_>, like: InstrId, re: InstrId, im: InstrId) -> Result<InstrId> {
    let shape = b.instr(like).shape.clone();
    Ok(b.add(shape, Op::Binary(BinaryOp::Complex), vec![re, im]))
}

/// Data movement that `real`/`imag` commute with.
fn moves_data(op: &Op) -> bool {
    matches!(
        op,
        Op::Broadcast { .. } | Op::Reshape | Op::Transpose { .. } | Op::Slice { .. }
    ) || matches!(op, Op::Concatenate { .. })
}

/// How deep [`decomposable`] follows producers.
const MAX_DEPTH: usize = 64;

/// Whether the parts of `x` can be had: it is real, or made (through data
/// movement and complex ops this file expands) from `complex`, constants and
/// converted reals. Complex ops on anything else (a parameter) are left
/// alone, so the error names them rather than a `real` they would leave.
fn decomposable(b: &Emitter<'_, '_>, x: InstrId, depth: usize) -> bool {
    let instr = b.instr(x);
    let complex = b.array(x).is_ok_and(|(t, _)| t.is_complex());
    if !complex {
        return b.array(x).is_ok();
    }
    if depth >= MAX_DEPTH {
        return false;
    }
    match &instr.op {
        Op::Binary(BinaryOp::Complex) | Op::Constant { .. } => true,
        Op::Convert
        | Op::Binary(BinaryOp::Add | BinaryOp::Subtract | BinaryOp::Multiply)
        | Op::Unary(UnaryOp::Negate)
        | Op::Fft { .. } => instr
            .operands
            .iter()
            .all(|&o| decomposable(b, o, depth + 1)),
        op if moves_data(op) => instr
            .operands
            .iter()
            .all(|&o| decomposable(b, o, depth + 1)),
        _ => false,
    }
}

/// Whether every operand of `id` is [`decomposable`].
fn operands_decomposable(b: &Emitter<'_, '_>, id: InstrId) -> bool {
    b.instr(id).operands.iter().all(|&o| decomposable(b, o, 0))
}

/// `real`/`imag`: see the module docs.
pub struct ComplexPartExpander;

impl Expander for ComplexPartExpander {
    fn name(&self) -> &'static str {
        "real/imag"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if !matches!(op, Opcode::Real | Opcode::Imag) {
            return None;
        }
        let (p, _) = part_and_complex(types)?;
        // The `real`/`imag` of a moved operand have this same key, which a
        // plan cannot name; they are legal exactly when this one is.
        Some(all_of_type(
            p,
            &[
                Opcode::Broadcast,
                Opcode::Reshape,
                Opcode::Transpose,
                Opcode::Slice,
                Opcode::Concatenate,
                Opcode::Convert,
            ],
        ))
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let Some(&src) = b.instr(id).operands.first() else {
            return false;
        };
        let src = b.instr(src);
        match &src.op {
            Op::Binary(BinaryOp::Complex) | Op::Convert => src.operands.len() <= 2,
            Op::Constant { .. } => true,
            op => moves_data(op),
        }
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let imag = b.instr(id).op == Op::Unary(UnaryOp::Imag);
        let (p, dims) = b.array(id)?;
        let src_id = b.operand(0)?;
        let src = b.instr(src_id).clone();
        match &src.op {
            Op::Binary(BinaryOp::Complex) => {
                let k = usize::from(imag);
                src.operands
                    .get(k)
                    .copied()
                    .ok_or_else(|| Error::invalid_argument("complex with too few operands"))
            }
            Op::Constant { literal } => {
                let mut bytes = Vec::new();
                for s in literal.scalars()? {
                    let (re, im) = match s {
                        Scalar::C64(z) => (f64::from(z.re), f64::from(z.im)),
                        Scalar::C128(z) => (z.re, z.im),
                        other => {
                            return Err(Error::invalid_argument(format!(
                                "a complex constant holds {}",
                                other.element_type()
                            )))
                        }
                    };
                    let v = if imag { im } else { re };
                    let mut out = vec![0u8; p.byte_size()];
                    super::scalar_of(p, v)?.write_bytes(&mut out);
                    bytes.extend(out);
                }
                let literal = Literal::from_bytes(Shape::array(p, dims.clone()), &bytes)?;
                Ok(b.add(Shape::array(p, dims), Op::Constant { literal }, vec![]))
            }
            Op::Convert => {
                let inner = *src
                    .operands
                    .first()
                    .ok_or_else(|| Error::invalid_argument("convert without an operand"))?;
                let (t, _) = b.array(inner)?;
                let value = if t.is_complex() {
                    part(b, inner, imag)?
                } else if imag {
                    let zero = super::scalar_of(p, 0.0)?;
                    return b.splat(id, zero);
                } else {
                    inner
                };
                if b.array(value)?.0 == p {
                    return Ok(value);
                }
                Ok(b.add(Shape::array(p, dims), Op::Convert, vec![value]))
            }
            op if moves_data(op) => {
                let mut parts = Vec::with_capacity(src.operands.len());
                for &o in &src.operands {
                    parts.push(part(b, o, imag)?);
                }
                Ok(b.add(Shape::array(p, dims), op.clone(), parts))
            }
            _ => Err(Error::unimplemented("real/imag of this operand")),
        }
    }
}

/// `complex(a, b)`: a bridge that disappears when its uses are rewritten (see
/// the module docs); never expanded.
pub struct ComplexBridge;

impl Expander for ComplexBridge {
    fn name(&self) -> &'static str {
        "complex"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        (op == Opcode::Complex && part_and_complex(types).is_some()).then(Vec::new)
    }
    fn applies(&self, _b: &Emitter<'_, '_>, _id: InstrId) -> bool {
        false
    }
    fn expand(&self, _b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        Err(Error::internal("complex is never expanded"))
    }
}

/// The plan of an expansion on the parts of `c`: `real`/`imag`, `complex`,
/// and `ops` on the part type.
fn parts_plan(c: ElementType, ops: &[Opcode]) -> Option<Vec<Emitted>> {
    let p = part_of(c)?;
    let mut plan = all_of_type(p, ops);
    plan.extend([
        (Opcode::Real, tys(&[p, c])),
        (Opcode::Imag, tys(&[p, c])),
        (Opcode::Complex, tys(&[p, c])),
    ]);
    Some(plan)
}

/// Complex `add`, `subtract`, `multiply`, `negate` on the parts.
pub struct ComplexArithmeticExpander;

impl Expander for ComplexArithmeticExpander {
    fn name(&self) -> &'static str {
        "complex arithmetic"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let c = super::single(types)?;
        let ops: &[Opcode] = match op {
            Opcode::Add => &[Opcode::Add],
            Opcode::Subtract => &[Opcode::Subtract],
            Opcode::Negate => &[Opcode::Negate],
            Opcode::Multiply => &[Opcode::Multiply, Opcode::Add, Opcode::Subtract],
            _ => return None,
        };
        parts_plan(c, ops)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        operands_decomposable(b, id)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let op = b.instr(id).op.clone();
        let x = b.operand(0)?;
        let (xr, xi) = (part(b, x, false)?, part(b, x, true)?);
        let (re, im) = if op == Op::Unary(UnaryOp::Negate) {
            (b.unary(UnaryOp::Negate, xr)?, b.unary(UnaryOp::Negate, xi)?)
        } else {
            let y = b.operand(1)?;
            let (yr, yi) = (part(b, y, false)?, part(b, y, true)?);
            match op {
                Op::Binary(BinaryOp::Multiply) => {
                    // The evaluator's `(ac - bd) + (ad + bc) i`, in this order.
                    let ac = b.binary(BinaryOp::Multiply, xr, yr)?;
                    let bd = b.binary(BinaryOp::Multiply, xi, yi)?;
                    let ad = b.binary(BinaryOp::Multiply, xr, yi)?;
                    let bc = b.binary(BinaryOp::Multiply, xi, yr)?;
                    (
                        b.binary(BinaryOp::Subtract, ac, bd)?,
                        b.binary(BinaryOp::Add, ad, bc)?,
                    )
                }
                Op::Binary(o @ (BinaryOp::Add | BinaryOp::Subtract)) => {
                    (b.binary(o, xr, yr)?, b.binary(o, xi, yi)?)
                }
                _ => return Err(Error::invalid_argument("not complex arithmetic")),
            }
        };
        join(b, id, re, im)
    }
}

/// Complex `abs`: the evaluator's overflow-free `max * sqrt(1 + (min/max)^2)`.
pub struct ComplexAbsExpander;

impl Expander for ComplexAbsExpander {
    fn name(&self) -> &'static str {
        "complex abs"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::Abs {
            return None;
        }
        let (p, c) = part_and_complex(types)?;
        let mut plan = parts_plan(
            c,
            &[
                Opcode::Abs,
                Opcode::Maximum,
                Opcode::Minimum,
                Opcode::Divide,
                Opcode::Multiply,
                Opcode::Add,
                Opcode::Sqrt,
                Opcode::Broadcast,
            ],
        )?;
        plan.extend([
            (Opcode::Compare, tys(&[p, ElementType::Pred])),
            (Opcode::Select, tys(&[p, ElementType::Pred])),
        ]);
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        operands_decomposable(b, id)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, _id: InstrId) -> Result<InstrId> {
        let z = b.operand(0)?;
        let (re, im) = (part(b, z, false)?, part(b, z, true)?);
        let x = b.unary(UnaryOp::Abs, re)?;
        let y = b.unary(UnaryOp::Abs, im)?;
        let max = b.binary(BinaryOp::Maximum, x, y)?;
        let min = b.binary(BinaryOp::Minimum, x, y)?;
        let ratio = b.binary(BinaryOp::Divide, min, max)?;
        let sq = b.binary(BinaryOp::Multiply, ratio, ratio)?;
        let one = b.constant_like(sq, 1.0)?;
        let one_plus = b.binary(BinaryOp::Add, one, sq)?;
        let root = b.unary(UnaryOp::Sqrt, one_plus)?;
        let r = b.binary(BinaryOp::Multiply, max, root)?;
        let nan = b.compare(r, r, Dir::Ne, false)?;
        b.select(nan, min, r)
    }
}

/// The longest transform expanded (its matrices hold `n^2` entries).
const MAX_FFT: usize = 1024;

/// One-dimensional `fft` as a DFT with `dot`s; see the module docs.
pub struct FftExpander;

impl Expander for FftExpander {
    fn name(&self) -> &'static str {
        "fft"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::Fft {
            return None;
        }
        let c = types.iter().copied().find(|t| t.is_complex())?;
        let p = part_of(c)?;
        if !types.iter().all(|&t| t == c || t == p) {
            return None;
        }
        let mut plan = parts_plan(c, &[Opcode::Convert])?;
        plan.extend(all_of_type(
            ElementType::F64,
            &[
                Opcode::Dot,
                Opcode::Add,
                Opcode::Subtract,
                Opcode::Divide,
                Opcode::Broadcast,
                Opcode::Transpose,
            ],
        ));
        plan.push((Opcode::Convert, tys(&[p, ElementType::F64])));
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::Fft {
            fft_type,
            fft_length,
        } = &instr.op
        else {
            return false;
        };
        let Some(&x) = instr.operands.first() else {
            return false;
        };
        let (Ok((it, idims)), Ok((ot, odims))) = (b.array(x), b.array(id)) else {
            return false;
        };
        let r = fft_length.len();
        let rank = idims.len();
        if !(1..=3).contains(&r) || rank < r || odims.len() != rank {
            return false;
        }
        // An empty operand or result: the result is a constant (empty, or
        // the transform of nothing, zeros), whatever fft_length says (XLA
        // CPU transforms an empty operand to an empty result).
        if idims.contains(&0) || odims.contains(&0) {
            return true;
        }
        let lead = rank - r;
        let last = fft_length[r - 1];
        let half = last / 2 + 1;
        let (in_tail, out_tail) = (&idims[lead..], &odims[lead..]);
        let kind_ok = match fft_type {
            FftType::Fft | FftType::Ifft => {
                it.is_complex() && ot == it && in_tail == &fft_length[..] && out_tail == in_tail
            }
            FftType::Rfft => {
                part_of(ot) == Some(it)
                    && in_tail == &fft_length[..]
                    && out_tail[..r - 1] == fft_length[..r - 1]
                    && out_tail[r - 1] == half
            }
            FftType::Irfft => {
                part_of(it) == Some(ot)
                    && out_tail == &fft_length[..]
                    && in_tail[..r - 1] == fft_length[..r - 1]
                    && in_tail[r - 1] == half
            }
        };
        idims[..lead] == odims[..lead]
            && fft_length.iter().all(|n| (1..=MAX_FFT).contains(n))
            && kind_ok
            && operands_decomposable(b, id)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let Op::Fft {
            fft_type,
            fft_length,
        } = b.instr(id).op.clone()
        else {
            return Err(Error::invalid_argument("not an fft"));
        };
        let x = b.operand(0)?;
        let (_, dims) = b.array(x)?;
        let (out_type, _) = b.array(id)?;
        if dims.contains(&0) || b.array(id)?.1.contains(&0) {
            let shape = b.instr(id).shape.clone();
            let literal = Literal::zeros(&shape.without_layout());
            return Ok(b.add(shape, Op::Constant { literal }, vec![]));
        }
        let r = fft_length.len();
        let lead = dims
            .len()
            .checked_sub(r)
            .filter(|_| r > 0)
            .ok_or_else(|| Error::invalid_argument("fft lengths do not fit the operand"))?;
        let last = dims.len() - 1;
        let n_last = fft_length[r - 1];
        let (re, im) = match fft_type {
            FftType::Fft | FftType::Ifft => {
                let inverse = fft_type == FftType::Ifft;
                let (xr, xi) = (part(b, x, false)?, part(b, x, true)?);
                let (mut re, mut im) = (wide(b, xr)?, wide(b, xi)?);
                for (axis, &n) in (lead..).zip(&fft_length) {
                    (re, im) = complex_axis(b, re, Some(im), axis, n, inverse)?;
                }
                (re, Some(im))
            }
            FftType::Rfft => {
                let xr = wide(b, x)?;
                let (cos, sin) = twiddles(n_last, n_last / 2 + 1, -1.0)?;
                let (cos, sin) = (matrix(b, cos), matrix(b, sin));
                let (mut re, mut im) = (dft(b, xr, cos)?, dft(b, xr, sin)?);
                for (axis, &n) in (lead..last).zip(&fft_length) {
                    (re, im) = complex_axis(b, re, Some(im), axis, n, false)?;
                }
                (re, Some(im))
            }
            FftType::Irfft => {
                let (xr, xi) = (part(b, x, false)?, part(b, x, true)?);
                let (mut re, mut im) = (wide(b, xr)?, wide(b, xi)?);
                for (axis, &n) in (lead..last).zip(&fft_length) {
                    (re, im) = complex_axis(b, re, Some(im), axis, n, true)?;
                }
                (irfft_last(b, re, im, n_last)?, None)
            }
        };
        let p = part_of(out_type).unwrap_or(out_type);
        let narrow = |b: &mut Emitter<'_, '_>, v: InstrId| -> Result<InstrId> {
            if p == ElementType::F64 {
                return Ok(v);
            }
            b.like(v, p, Op::Convert, vec![v])
        };
        let re = narrow(b, re)?;
        match im {
            Some(im) => {
                let im = narrow(b, im)?;
                join(b, id, re, im)
            }
            None => Ok(re),
        }
    }
}

/// `v` in `f64`.
fn wide(b: &mut Emitter<'_, '_>, v: InstrId) -> Result<InstrId> {
    if b.array(v)?.0 == ElementType::F64 {
        return Ok(v);
    }
    b.like(v, ElementType::F64, Op::Convert, vec![v])
}

/// A constant matrix.
fn matrix(b: &mut Emitter<'_, '_>, literal: Literal) -> InstrId {
    b.add(literal.shape().clone(), Op::Constant { literal }, vec![])
}

/// `x` with dimension `axis` moved last (`back`: the inverse move).
fn move_axis(b: &mut Emitter<'_, '_>, x: InstrId, axis: usize, back: bool) -> Result<InstrId> {
    let (t, dims) = b.array(x)?;
    let rank = dims.len();
    if axis + 1 == rank {
        return Ok(x);
    }
    let mut perm: Vec<usize> = (0..rank).filter(|&d| d != axis).collect();
    perm.push(axis);
    if back {
        let mut inverse = vec![0; rank];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        perm = inverse;
    }
    let out: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    Ok(b.add(
        Shape::array(t, out),
        Op::Transpose { dimensions: perm },
        vec![x],
    ))
}

/// The complex DFT (`inverse`: with `+` and divided by `n`) of `re + i im`
/// (`f64` parts) along `axis`: `X = x W`, `W = C + i S`.
fn complex_axis(
    b: &mut Emitter<'_, '_>,
    re: InstrId,
    im: Option<InstrId>,
    axis: usize,
    n: usize,
    inverse: bool,
) -> Result<(InstrId, InstrId)> {
    let sign = if inverse { 1.0 } else { -1.0 };
    let (cos, sin) = twiddles(n, n, sign)?;
    let (cos, sin) = (matrix(b, cos), matrix(b, sin));
    let xr = move_axis(b, re, axis, false)?;
    let rc = dft(b, xr, cos)?;
    let rs = dft(b, xr, sin)?;
    let (mut out_re, mut out_im) = (rc, rs);
    if let Some(im) = im {
        let xi = move_axis(b, im, axis, false)?;
        let is = dft(b, xi, sin)?;
        let ic = dft(b, xi, cos)?;
        out_re = b.binary(BinaryOp::Subtract, rc, is)?;
        out_im = b.binary(BinaryOp::Add, rs, ic)?;
    }
    if inverse {
        let nn = b.constant_like(out_re, n as f64)?;
        out_re = b.binary(BinaryOp::Divide, out_re, nn)?;
        out_im = b.binary(BinaryOp::Divide, out_im, nn)?;
    }
    Ok((
        move_axis(b, out_re, axis, true)?,
        move_axis(b, out_im, axis, true)?,
    ))
}

/// IRFFT along the last dimension: `(Xr C + Xi S) / n` over the `n/2 + 1`
/// bins, with the Hermitian bins above `n/2` folded in (weight 2) and the
/// imaginary parts of the DC and (even `n`) Nyquist bins ignored, as the
/// evaluator's full inverse does.
fn irfft_last(b: &mut Emitter<'_, '_>, re: InstrId, im: InstrId, n: usize) -> Result<InstrId> {
    let m = n / 2 + 1;
    let mut cos = Vec::with_capacity(n * m * 8);
    let mut sin = Vec::with_capacity(n * m * 8);
    for k in 0..m {
        let pair = k != 0 && 2 * k != n;
        let w = if pair { 2.0 } else { 1.0 };
        for t in 0..n {
            let r = (k * t) % n;
            let angle = 2.0 * std::f64::consts::PI * (r as f64) / (n as f64);
            cos.extend((w * angle.cos()).to_le_bytes());
            let s = if pair { -w * angle.sin() } else { 0.0 };
            sin.extend(s.to_le_bytes());
        }
    }
    let shape = Shape::array(ElementType::F64, vec![m, n]);
    let cos = matrix(b, Literal::from_bytes(shape.clone(), &cos)?);
    let sin = matrix(b, Literal::from_bytes(shape, &sin)?);
    let rc = dft(b, re, cos)?;
    let is = dft(b, im, sin)?;
    let sum = b.binary(BinaryOp::Add, rc, is)?;
    let nn = b.constant_like(sum, n as f64)?;
    b.binary(BinaryOp::Divide, sum, nn)
}

/// `x [..., n]` times `w [n, m]`.
fn dft(b: &mut Emitter<'_, '_>, x: InstrId, w: InstrId) -> Result<InstrId> {
    let (t, mut dims) = b.array(x)?;
    let (_, wd) = b.array(w)?;
    let last = dims.len() - 1;
    dims[last] = wd[1];
    Ok(b.add(
        Shape::array(t, dims),
        Op::Dot {
            dnums: DotDimensionNumbers {
                lhs_batch_dims: vec![],
                rhs_batch_dims: vec![],
                lhs_contracting_dims: vec![last],
                rhs_contracting_dims: vec![0],
            },
            precision: vec![],
            algorithm: None,
        },
        vec![x, w],
    ))
}

/// `cos` and `sign * sin` of `2 pi jk / n` (angle from `jk mod n`, as the
/// evaluator's twiddles) as `f64[n, m]` literals.
fn twiddles(n: usize, m: usize, sign: f64) -> Result<(Literal, Literal)> {
    let mut cos = Vec::with_capacity(n * m * 8);
    let mut sin = Vec::with_capacity(n * m * 8);
    for j in 0..n {
        for k in 0..m {
            let r = (j * k) % n;
            let angle = sign * 2.0 * std::f64::consts::PI * (r as f64) / (n as f64);
            cos.extend(angle.cos().to_le_bytes());
            sin.extend(angle.sin().to_le_bytes());
        }
    }
    let shape = Shape::array(ElementType::F64, vec![n, m]);
    Ok((
        Literal::from_bytes(shape.clone(), &cos)?,
        Literal::from_bytes(shape, &sin)?,
    ))
}
