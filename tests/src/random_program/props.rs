//! What the generator knows about each value ([`Props`]), and building
//! operations that keep it sound.
//!
//! Every method of [`Ctx`] adds one instruction and computes the props of its
//! result from its operands': interval arithmetic for the values, first-order
//! error propagation with one rounding term per inexact operation. A method
//! refuses (with an internal error naming the generator as at fault) a
//! combination whose props it could not make sound: a compare of inexact
//! values, a logarithm of a value that may be negative, an inexact value that
//! could overflow, and so on. See the parent module for why.

use super::*;
// ---------------------------------------------------------------------------
// Element types and their numeric facts

pub(super) fn is_float(ty: ElementType) -> bool {
    ty.is_float()
}

/// Unit roundoff (half an ULP at 1) of a float type; 0 for others.
pub(super) fn unit_roundoff(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 2f64.powi(-11),
        ElementType::BF16 => 2f64.powi(-8),
        ElementType::F32 => 2f64.powi(-24),
        ElementType::F64 => 2f64.powi(-53),
        _ => 0.0,
    }
}

/// ULPs (of the result's magnitude bound) a transcendental may be off by on one
/// backend. The vectorised host library documents at most 2 for f32/f64; f16
/// and bf16 go through f32 and may round a few steps.
pub(super) fn transcendental_ulps(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 | ElementType::BF16 => 6.0,
        _ => 4.0,
    }
}

/// The range of values a type holds (finite range for floats).
pub(super) fn type_range(ty: ElementType) -> (f64, f64) {
    match ty {
        ElementType::Pred => (0.0, 1.0),
        ElementType::S8 => (i8::MIN as f64, i8::MAX as f64),
        ElementType::S16 => (i16::MIN as f64, i16::MAX as f64),
        ElementType::S32 => (i32::MIN as f64, i32::MAX as f64),
        ElementType::S64 => (i64::MIN as f64, i64::MAX as f64),
        ElementType::U8 => (0.0, u8::MAX as f64),
        ElementType::U16 => (0.0, u16::MAX as f64),
        ElementType::U32 => (0.0, u32::MAX as f64),
        ElementType::U64 => (0.0, u64::MAX as f64),
        ElementType::F16 => (-65504.0, 65504.0),
        ElementType::BF16 => (-3.38e38, 3.38e38),
        ElementType::F32 => (f32::MIN as f64, f32::MAX as f64),
        _ => (f64::MIN, f64::MAX),
    }
}

/// Magnitude above which a float value is tamed (clamped) before arithmetic, so
/// that no inexact computation comes near overflow.
pub(super) fn tame_limit(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 64.0,
        _ => 1e4,
    }
}

/// One element of type `ty` with value `v` (floats rounded, integers wrapped
/// or saturated as `convert` does).
pub fn scalar_of(ty: ElementType, v: f64) -> Scalar {
    if is_float(ty) {
        convert_scalar(Scalar::F64(v), ty)
    } else {
        convert_scalar(Scalar::S64(v as i64), ty)
    }
}

// ---------------------------------------------------------------------------
// Values and what is known about them

/// What the generator knows about a value (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Props {
    /// Every finite element lies in `[lo, hi]`.
    pub lo: f64,
    pub hi: f64,
    /// Bound on the distance of each finite element from op-by-op evaluation, on
    /// any correct backend; 0: bit-identical everywhere.
    pub err: f64,
    /// No element can be NaN or infinite. When false, *where* the non-finite
    /// elements are (and which) is still the same on every correct backend.
    pub finite: bool,
    /// The value is a float `multiply` (a user add/subtract may absorb it into an
    /// FMA, one rounding fewer).
    pub fmul: bool,
}

impl Props {
    pub fn exact(lo: f64, hi: f64) -> Props {
        Props {
            lo,
            hi,
            err: 0.0,
            finite: true,
            fmul: false,
        }
    }
    pub fn bound(&self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }
    pub fn is_exact(&self) -> bool {
        self.err == 0.0
    }
    pub(super) fn union(&self, o: &Props) -> Props {
        Props {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            err: self.err.max(o.err),
            finite: self.finite && o.finite,
            fmul: false,
        }
    }
    /// The props of a value moved or copied (broadcast, reshape, slice, ...).
    /// Such a move keeps `fmul`: in a fused loop it is only index arithmetic, so
    /// the multiply still feeds its user directly and may be contracted.
    pub(super) fn moved(&self) -> Props {
        *self
    }
}

/// A value of the computation being built, with its type, dims and [`Props`].
#[derive(Clone, Debug)]
pub(super) struct Val {
    pub(super) v: Value,
    pub(super) ty: ElementType,
    pub(super) dims: Vec<usize>,
    pub(super) p: Props,
}

impl Val {
    pub(super) fn count(&self) -> usize {
        self.dims.iter().product()
    }
    pub(super) fn rank(&self) -> usize {
        self.dims.len()
    }
}

pub(super) fn bug(what: impl Into<String>) -> Error {
    Error::internal(format!("random program generator: {}", what.into()))
}

/// Makes a float result's props sound with respect to overflow: an exact value
/// may overflow (deterministically); an inexact one must stay far from it.
fn finish_float(ty: ElementType, mut p: Props, what: &str) -> Result<Props> {
    let (tlo, thi) = type_range(ty);
    let limit = thi * 0.25;
    if !(p.lo.is_finite() && p.hi.is_finite()) || p.bound() > limit {
        if p.err > 0.0 {
            return Err(bug(format!(
                "{what}: an inexact {ty} value bounded by {:e} could overflow",
                p.bound()
            )));
        }
        p.finite = false;
        p.lo = p.lo.max(tlo);
        p.hi = p.hi.min(thi);
        if p.lo > p.hi {
            p.lo = tlo;
            p.hi = thi;
        }
    }
    if !p.err.is_finite() {
        return Err(bug(format!("{what}: unbounded error")));
    }
    Ok(p)
}

/// Integer results wrap: an interval past the type's range becomes the range.
fn finish_int(ty: ElementType, lo: f64, hi: f64) -> Props {
    let (tlo, thi) = type_range(ty);
    if lo < tlo || hi > thi || lo.is_nan() || hi.is_nan() {
        Props::exact(tlo, thi)
    } else {
        Props::exact(lo, hi)
    }
}

fn interval_mul(a: &Props, b: &Props) -> (f64, f64) {
    let c = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
    (
        c.iter().cloned().fold(f64::INFINITY, f64::min),
        c.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    )
}

// ---------------------------------------------------------------------------
// Building with props: one method per operation, each computing the result's
// props from its operands' and refusing combinations that would make them unsound.

pub(super) struct Ctx {
    pub(super) b: HloBuilder,
    /// The opcodes this context may emit (`None`: any). Checked where every
    /// operation's result passes, [`Ctx::val`], so a step that needs another
    /// op fails with [`not_allowed`] and is skipped (see `generate_with_ops`).
    pub(super) allowed: Option<std::sync::Arc<std::collections::BTreeSet<&'static str>>>,
}

/// The message prefix of a step's failure to stay within the allowed opcodes:
/// not a generator bug, a step to skip.
pub(super) const NOT_ALLOWED: &str = "opcode outside the allowed set: ";

pub(super) fn not_allowed(e: &Error) -> bool {
    e.message().starts_with(NOT_ALLOWED)
}

impl Ctx {
    pub(super) fn new(name: &str) -> Ctx {
        Ctx {
            b: HloBuilder::new(name),
            allowed: None,
        }
    }

    pub(super) fn val(&self, v: Value, p: Props) -> Result<Val> {
        if let Some(allowed) = &self.allowed {
            let op = self.b.instruction(v)?.opcode().name();
            if !allowed.contains(op) {
                return Err(Error::failed_precondition(format!("{NOT_ALLOWED}{op}")));
            }
        }
        let shape = self.b.shape(v)?;
        let ty = shape
            .element_type()
            .ok_or_else(|| bug(format!("expected an array, got {shape}")))?;
        Ok(Val {
            v,
            ty,
            dims: shape.dims().to_vec(),
            p,
        })
    }

    pub(super) fn constant_scalar(&mut self, ty: ElementType, x: f64) -> Result<Val> {
        let s = scalar_of(ty, x);
        let exact = s.to_f64_lossy();
        let v = self.b.constant(Literal::from_scalar(s))?;
        self.val(v, Props::exact(exact, exact))
    }

    /// A constant scalar broadcast to `dims`.
    pub(super) fn splat(&mut self, ty: ElementType, x: f64, dims: &[usize]) -> Result<Val> {
        let c = self.constant_scalar(ty, x)?;
        if dims.is_empty() {
            return Ok(c);
        }
        let v = self.b.broadcast(c.v, dims)?;
        self.val(v, c.p)
    }

    pub(super) fn unary(&mut self, op: UnaryOp, x: &Val) -> Result<Val> {
        use UnaryOp::*;
        let ty = x.ty;
        let p = x.p;
        let name = op.name();
        let v = self.b.unary(op, x.v)?;
        if !is_float(ty) {
            let props = match (op, ty) {
                (Not, ElementType::Pred) => Props::exact(0.0, 1.0),
                (Abs, _) => finish_int(ty, 0.0, p.bound()),
                (Negate, _) => finish_int(ty, -p.hi, -p.lo),
                (Sign, _) => Props::exact(-1.0, 1.0),
                (PopCount | Clz, _) => Props::exact(0.0, ty.bit_width() as f64),
                _ => finish_int(ty, f64::NEG_INFINITY, f64::INFINITY),
            };
            return self.val(v, props);
        }
        if op == IsFinite {
            // Where the non-finite elements are is the same everywhere; a finite
            // inexact element cannot become infinite (finish_float keeps them small).
            return self.val(v, Props::exact(0.0, 1.0));
        }
        let eps = unit_roundoff(ty);
        let k = transcendental_ulps(ty) * eps;
        let e = p.err;
        let need_exact = |what: &str| -> Result<()> {
            if e > 0.0 {
                Err(bug(format!("{what} of an inexact value")))
            } else {
                Ok(())
            }
        };
        let positive = |m: f64| -> Result<()> {
            // (NaN bounds never occur; written so that one would fail too.)
            if p.lo.partial_cmp(&m).is_none_or(|o| o.is_lt()) {
                Err(bug(format!(
                    "{name} of a value that may be below {m} ({})",
                    p.lo
                )))
            } else {
                Ok(())
            }
        };
        let mut out = Props { fmul: false, ..p };
        match op {
            Abs => {
                let (lo, hi) = if p.lo >= 0.0 {
                    (p.lo, p.hi)
                } else if p.hi <= 0.0 {
                    (-p.hi, -p.lo)
                } else {
                    (0.0, p.bound())
                };
                out.lo = lo;
                out.hi = hi;
            }
            Negate => {
                out.lo = -p.hi;
                out.hi = -p.lo;
            }
            Floor | Ceil | RoundNearestAfz | RoundNearestEven => {
                need_exact(name)?;
                out.lo = p.lo.floor();
                out.hi = p.hi.ceil();
            }
            Sign => {
                need_exact(name)?;
                out.lo = -1.0;
                out.hi = 1.0;
            }
            Exp | Expm1 => {
                let hi = p.hi.exp();
                out.lo = if op == Exp { p.lo.exp() } else { p.lo.exp_m1() };
                out.hi = if op == Exp { hi } else { p.hi.exp_m1() };
                out.err = hi * e + k * hi.max(1.0);
            }
            Log => {
                positive(f64::MIN_POSITIVE)?;
                out.lo = p.lo.ln();
                out.hi = p.hi.ln();
                out.err = e / p.lo + k * out.lo.abs().max(out.hi.abs());
            }
            Log1p => {
                positive(0.0)?;
                out.lo = p.lo.ln_1p();
                out.hi = p.hi.ln_1p();
                out.err = e / (1.0 + p.lo) + k * out.hi.abs().max(1e-300);
            }
            Sqrt => {
                if e > 0.0 {
                    positive(f64::MIN_POSITIVE)?;
                    out.err = e / (2.0 * p.lo.sqrt()) + eps * p.hi.sqrt();
                } else {
                    positive(0.0)?; // correctly rounded: exact stays exact
                }
                out.lo = p.lo.sqrt();
                out.hi = p.hi.sqrt();
            }
            Rsqrt => {
                positive(f64::MIN_POSITIVE)?;
                out.lo = 1.0 / p.hi.sqrt();
                out.hi = 1.0 / p.lo.sqrt();
                out.err = e * 0.5 * p.lo.powf(-1.5) + k * out.hi;
            }
            Cbrt => {
                positive(f64::MIN_POSITIVE)?;
                out.lo = p.lo.cbrt();
                out.hi = p.hi.cbrt();
                out.err = e / (3.0 * p.lo.powf(2.0 / 3.0)) + k * out.hi;
            }
            Tanh | Logistic | Erf | Sin | Cos => {
                if p.finite && p.bound() > 1e4 {
                    return Err(bug(format!("{name} of a value up to {:e}", p.bound())));
                }
                let lipschitz = match op {
                    Logistic => 0.25,
                    Erf => 1.13,
                    _ => 1.0,
                };
                (out.lo, out.hi) = match op {
                    Tanh => (p.lo.tanh(), p.hi.tanh()),
                    Logistic => (1.0 / (1.0 + (-p.lo).exp()), 1.0 / (1.0 + (-p.hi).exp())),
                    Erf if p.lo >= 0.0 => (0.0, 1.0),
                    _ => (-1.0, 1.0),
                };
                out.err = lipschitz * e + k;
            }
            other => return Err(bug(format!("unary {other} is not generated for floats"))),
        }
        // abs and negate compute nothing that could overflow: an inexact value
        // next to an exact huge one (after a max, say) keeps its props.
        let props = if matches!(op, Abs | Negate) && out.err > 0.0 {
            out
        } else {
            finish_float(ty, out, name)?
        };
        self.val(v, props)
    }

    pub(super) fn binary(&mut self, op: BinaryOp, a: &Val, b: &Val) -> Result<Val> {
        use BinaryOp::*;
        let ty = a.ty;
        let name = op.name();
        let (pa, pb) = (a.p, b.p);
        if !is_float(ty) {
            let v = self.b.binary(op, a.v, b.v)?;
            let props = match op {
                Add => finish_int(ty, pa.lo + pb.lo, pa.hi + pb.hi),
                Subtract => finish_int(ty, pa.lo - pb.hi, pa.hi - pb.lo),
                Multiply => {
                    let (lo, hi) = interval_mul(&pa, &pb);
                    finish_int(ty, lo, hi)
                }
                Maximum => finish_int(ty, pa.lo.max(pb.lo), pa.hi.max(pb.hi)),
                Minimum => finish_int(ty, pa.lo.min(pb.lo), pa.hi.min(pb.hi)),
                _ if ty == ElementType::Pred => Props::exact(0.0, 1.0),
                Divide | Remainder if ty.is_signed_int() => {
                    // x / 0 = -1 and x % 0 = x; MIN / -1 = MIN.
                    let m = pa.bound().max(1.0);
                    finish_int(ty, -m, m)
                }
                _ => finish_int(ty, f64::NEG_INFINITY, f64::INFINITY),
            };
            return self.val(v, props);
        }
        let eps = unit_roundoff(ty);
        let k = transcendental_ulps(ty) * eps;
        let (ea, eb) = (pa.err, pb.err);
        let inexact = ea > 0.0 || eb > 0.0;
        // A multiply operand of a sum may be contracted into an FMA (one
        // rounding fewer), which makes the sum inexact.
        let contractible = matches!(op, Add | Subtract) && (pa.fmul || pb.fmul);
        let both_finite = pa.finite && pb.finite;
        // A non-finite element meeting an inexact one: only sums and max/min give
        // a result that cannot depend on the inexact one's rounding.
        if !both_finite
            && (inexact || contractible)
            && !matches!(op, Add | Subtract | Maximum | Minimum)
        {
            return Err(bug(format!("{name} of a non-finite and an inexact value")));
        }
        let mut out = Props {
            lo: 0.0,
            hi: 0.0,
            err: 0.0,
            finite: both_finite,
            fmul: false,
        };
        match op {
            Add | Subtract => {
                (out.lo, out.hi) = if op == Add {
                    (pa.lo + pb.lo, pa.hi + pb.hi)
                } else {
                    (pa.lo - pb.hi, pa.hi - pb.lo)
                };
                let fused: f64 = [pa, pb].iter().filter(|p| p.fmul).map(|p| p.bound()).sum();
                if inexact || fused > 0.0 {
                    out.err = ea + eb + eps * (out.lo.abs().max(out.hi.abs()) + fused);
                }
            }
            Multiply => {
                (out.lo, out.hi) = interval_mul(&pa, &pb);
                if a.v == b.v {
                    out.lo = out.lo.max(0.0); // a square
                }
                out.fmul = true;
                if inexact {
                    out.err = ea * pb.bound()
                        + eb * pa.bound()
                        + ea * eb
                        + eps * out.lo.abs().max(out.hi.abs());
                }
            }
            Divide => {
                let m = if pb.lo > 0.0 {
                    pb.lo
                } else if pb.hi < 0.0 {
                    -pb.hi
                } else {
                    0.0
                };
                if m > 0.0 {
                    let q = pa.bound() / m;
                    out.lo = -q;
                    out.hi = q;
                    if inexact {
                        out.err = ea / m + eb * pa.bound() / (m * m) + eps * q;
                    }
                } else if inexact {
                    return Err(bug("divide of inexact values by a range holding 0"));
                } else {
                    // Exact x / 0: ±inf or NaN, the same everywhere.
                    out.finite = false;
                    out.lo = f64::NEG_INFINITY;
                    out.hi = f64::INFINITY;
                }
            }
            Maximum | Minimum => {
                (out.lo, out.hi) = if op == Maximum {
                    (pa.lo.max(pb.lo), pa.hi.max(pb.hi))
                } else {
                    (pa.lo.min(pb.lo), pa.hi.min(pb.hi))
                };
                out.err = ea.max(eb);
                // Nothing is computed, so nothing can overflow: an inexact
                // small value may sit next to an exact huge one.
                let v = self.b.binary(op, a.v, b.v)?;
                return self.val(v, out);
            }
            Power => {
                if pa.lo <= 0.0 || pa.lo.is_nan() || !both_finite {
                    return Err(bug("power of a base that may be <= 0"));
                }
                let c = [
                    pa.lo.powf(pb.lo),
                    pa.lo.powf(pb.hi),
                    pa.hi.powf(pb.lo),
                    pa.hi.powf(pb.hi),
                ];
                out.lo = c.iter().cloned().fold(f64::INFINITY, f64::min);
                out.hi = c.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let bound = out.hi;
                let d_base = pb.bound() * bound / pa.lo;
                let d_exp = bound * pa.lo.ln().abs().max(pa.hi.ln().abs());
                out.err = ea * d_base + eb * d_exp + k * bound;
            }
            Atan2 | Remainder => {
                if inexact {
                    return Err(bug(format!("{name} of inexact values")));
                }
                if op == Atan2 {
                    out.lo = -std::f64::consts::PI;
                    out.hi = std::f64::consts::PI;
                    out.err = k * std::f64::consts::PI;
                } else {
                    let m = pa.bound().min(pb.bound());
                    out.lo = -m;
                    out.hi = m;
                    if pb.lo <= 0.0 && pb.hi >= 0.0 {
                        out.finite = false; // x % 0 is NaN
                    }
                }
            }
            other => return Err(bug(format!("binary {other} is not generated for floats"))),
        }
        let v = self.b.binary(op, a.v, b.v)?;
        let props = finish_float(ty, out, name)?;
        self.val(v, props)
    }

    pub(super) fn compare(
        &mut self,
        a: &Val,
        b: &Val,
        dir: ComparisonDirection,
        total: bool,
    ) -> Result<Val> {
        if !a.p.is_exact() || !b.p.is_exact() {
            return Err(bug("compare of inexact values"));
        }
        let v = if total && is_float(a.ty) {
            self.b
                .compare_with_type(a.v, b.v, dir, ComparisonType::TotalOrder)?
        } else {
            self.b.compare(a.v, b.v, dir)?
        };
        self.val(v, Props::exact(0.0, 1.0))
    }

    pub(super) fn select(&mut self, pred: &Val, t: &Val, f: &Val) -> Result<Val> {
        let v = self.b.select(pred.v, t.v, f.v)?;
        self.val(v, t.p.union(&f.p))
    }

    pub(super) fn clamp(&mut self, lo: &Val, x: &Val, hi: &Val) -> Result<Val> {
        let v = self.b.clamp(lo.v, x.v, hi.v)?;
        // clamp = min(max(x, lo), hi).
        let mut p = Props {
            lo: x.p.lo.max(lo.p.lo).min(hi.p.lo),
            hi: x.p.hi.max(lo.p.hi).min(hi.p.hi),
            err: x.p.err.max(lo.p.err).max(hi.p.err),
            finite: x.p.finite && lo.p.finite && hi.p.finite,
            fmul: false,
        };
        if !x.p.finite {
            // An infinite x becomes a finite bound (`-inf` -> min(lo, hi),
            // `+inf` -> hi), which [x.lo, x.hi] need not cover (the max of
            // an empty array is -inf with no finite elements at all).
            p.lo = p.lo.min(lo.p.lo.min(hi.p.lo));
            p.hi = p.hi.max(hi.p.hi);
        }
        self.val(v, p)
    }

    pub(super) fn convert(&mut self, x: &Val, to: ElementType) -> Result<Val> {
        if x.ty == to {
            return Ok(x.clone());
        }
        let p = x.p;
        let props = if is_float(to) {
            let mut out = Props { fmul: false, ..p };
            if is_float(x.ty) && unit_roundoff(to) > unit_roundoff(x.ty) && !p.is_exact() {
                // Narrowing an inexact value: one more rounding may differ.
                out.err = p.err + unit_roundoff(to) * p.bound();
            }
            finish_float(to, out, "convert")?
        } else {
            if is_float(x.ty) && !p.is_exact() {
                return Err(bug("float to integer convert of an inexact value"));
            }
            if to == ElementType::Pred {
                Props::exact(0.0, 1.0)
            } else if !p.finite {
                let (tlo, thi) = type_range(to);
                Props::exact(tlo, thi)
            } else {
                let (tlo, thi) = type_range(to);
                if is_float(x.ty) {
                    // Saturating; NaN becomes 0.
                    Props::exact(
                        p.lo.trunc().clamp(tlo, thi).min(0.0),
                        p.hi.trunc().clamp(tlo, thi).max(0.0),
                    )
                } else {
                    finish_int(to, p.lo, p.hi)
                }
            }
        };
        let v = self.b.convert(x.v, to)?;
        self.val(v, props)
    }

    pub(super) fn broadcast_in_dim(
        &mut self,
        x: &Val,
        dims: &[usize],
        map: &[usize],
    ) -> Result<Val> {
        let v = self.b.broadcast_in_dim(x.v, dims, map)?;
        self.val(v, x.p.moved())
    }

    pub(super) fn reshape(&mut self, x: &Val, dims: &[usize]) -> Result<Val> {
        if x.dims == dims {
            return Ok(x.clone());
        }
        let v = self.b.reshape(x.v, dims)?;
        self.val(v, x.p.moved())
    }

    /// Reduces `x` over `dims` with `op` from its identity.
    pub(super) fn reduce(&mut self, x: &Val, op: BinaryOp, dims: &[usize]) -> Result<Val> {
        let ty = x.ty;
        let n: usize = dims.iter().map(|&d| x.dims[d]).product();
        let nf = n as f64;
        let p = x.p;
        let (tlo, thi) = type_range(ty);
        let float = is_float(ty);
        let init = match op {
            BinaryOp::Add | BinaryOp::Or | BinaryOp::Xor => 0.0,
            BinaryOp::Multiply | BinaryOp::And => 1.0,
            BinaryOp::Maximum if float => f64::NEG_INFINITY,
            BinaryOp::Minimum if float => f64::INFINITY,
            BinaryOp::Maximum => tlo,
            BinaryOp::Minimum => thi,
            other => return Err(bug(format!("reduce with {other}"))),
        };
        let eps = unit_roundoff(ty);
        let props = if ty == ElementType::Pred {
            Props::exact(0.0, 1.0)
        } else if !float {
            match op {
                BinaryOp::Add => finish_int(ty, (nf * p.lo).min(0.0), (nf * p.hi).max(0.0)),
                BinaryOp::Maximum | BinaryOp::Minimum if n == 0 => Props::exact(init, init),
                BinaryOp::Maximum | BinaryOp::Minimum => p.moved(),
                _ => finish_int(ty, f64::NEG_INFINITY, f64::INFINITY),
            }
        } else {
            let mut out = Props { fmul: false, ..p };
            match op {
                BinaryOp::Add => {
                    out.lo = (nf * p.lo).min(0.0);
                    out.hi = (nf * p.hi).max(0.0);
                    // Any summation order: within n·eps·Σ|x| of op-by-op order.
                    if p.err > 0.0 || n > 2 {
                        out.err = nf * p.err + nf * eps * nf * p.bound();
                    }
                }
                BinaryOp::Multiply => {
                    if !p.finite && !p.is_exact() {
                        return Err(bug("multiply-reduce of non-finite inexact values"));
                    }
                    let b = p.bound();
                    let bn = b.powf(nf);
                    out.lo = -bn.max(1.0);
                    out.hi = bn.max(1.0);
                    if p.err > 0.0 || n > 2 {
                        out.err = nf * p.err * b.powf((nf - 1.0).max(0.0)) + nf * eps * bn;
                    }
                }
                _ => {
                    if n == 0 {
                        out = Props::exact(init, init);
                        out.finite = false;
                        out.lo = 0.0;
                        out.hi = 0.0;
                    }
                }
            }
            finish_float(ty, out, "reduce")?
        };
        let init_val = self.constant_scalar(ty, init)?;
        let reducer = Computation::scalar_binary(&format!("{}_{}", op.name(), ty.name()), op, ty)?;
        let v = self.b.reduce(&[x.v], &[init_val.v], &reducer, dims)?;
        self.val(v, props)
    }

    /// `dot` with explicit dimension numbers; `k` is the contracted element count.
    pub(super) fn dot(&mut self, a: &Val, b: &Val, dnums: DotDimensionNumbers) -> Result<Val> {
        let k: usize = dnums
            .lhs_contracting_dims
            .iter()
            .map(|&d| a.dims[d])
            .product();
        let kf = k as f64;
        let ty = a.ty;
        let (pa, pb) = (a.p, b.p);
        let props = if is_float(ty) {
            // A platform may flush subnormal operands to zero (XLA CPU runs with
            // FTZ/DAZ; Host does in its GEMM), so no float dot is exact: each
            // product may lose up to (smallest normal) x (the other operand's
            // bound). With infinities about, a flushed 0 * inf is NaN where
            // IEEE gives inf, so operands must be finite.
            if !pa.finite || !pb.finite {
                return Err(bug("dot of non-finite values"));
            }
            let smallest_normal = if ty == ElementType::F64 {
                f64::MIN_POSITIVE
            } else {
                f32::MIN_POSITIVE as f64
            };
            let term = pa.bound() * pb.bound();
            let mut out = Props {
                lo: -kf * term,
                hi: kf * term,
                err: kf * smallest_normal * (pa.bound() + pb.bound()),
                finite: true,
                fmul: false,
            };
            if !pa.is_exact() || !pb.is_exact() || k > 1 {
                out.err += kf * (pa.err * pb.bound() + pb.err * pa.bound() + pa.err * pb.err)
                    + kf * unit_roundoff(ty) * kf * term;
            }
            finish_float(ty, out, "dot")?
        } else {
            let term = pa.bound() * pb.bound();
            finish_int(ty, -kf * term, kf * term)
        };
        let v = self.b.dot_general(a.v, b.v, dnums, None)?;
        self.val(v, props)
    }
}
