//! CHLO ops that have no HLO op of their own, decomposed into HLO as XLA's
//! CHLO legalization writes them: the same operations in the same order and
//! in the same precision (some widen half precision to f32, some do not),
//! with the same type-derived constants, so a program read from StableHLO
//! computes what XLA's HLO of it computes, bit for bit (checked against the
//! HLO JAX prints for the op matrix, `tests/against_hlo.rs`).

use half::{bf16, f16};
use hlo_ir::builder::{HloBuilder, Value};
use hlo_ir::*;

/// Decomposes the CHLO op `name` on `x`, or `None` when it has no
/// decomposition here for `x`'s type.
pub(crate) fn decompose(b: &mut HloBuilder, name: &str, x: Value) -> Result<Option<Value>> {
    let ty = match b.shape(x)?.element_type() {
        Some(t)
            if matches!(
                t,
                ElementType::F16 | ElementType::BF16 | ElementType::F32 | ElementType::F64
            ) =>
        {
            t
        }
        _ => return Ok(None),
    };
    let half = matches!(ty, ElementType::F16 | ElementType::BF16);
    let v = match name {
        "chlo.asin" => asin(&mut E::new(b, ty), x)?,
        "chlo.acos" => acos(&mut E::new(b, ty), x)?,
        "chlo.atan" => {
            let mut e = E::new(b, ty);
            let one = e.c(1.0)?;
            e.bin(BinaryOp::Atan2, x, one)?
        }
        "chlo.asinh" => asinh(&mut E::new(b, ty), x)?,
        "chlo.acosh" => acosh(&mut E::new(b, ty), x)?,
        "chlo.atanh" => atanh(&mut E::new(b, ty), x)?,
        // erf_inv and erfc have their single-precision polynomials only.
        "chlo.erf_inv" | "chlo.erfc" if ty == ElementType::F64 => return Ok(None),
        // These compute half precision in f32.
        "chlo.sinh" | "chlo.cosh" | "chlo.erf_inv" | "chlo.erfc" | "chlo.lgamma"
        | "chlo.digamma" => {
            let wide = if half { ElementType::F32 } else { ty };
            let xw = if half { b.convert(x, wide)? } else { x };
            let mut e = E::new(b, wide);
            let r = match name {
                "chlo.sinh" => sinh(&mut e, xw)?,
                "chlo.cosh" => cosh(&mut e, xw)?,
                "chlo.erfc" => erfc_f32(&mut e, xw)?,
                "chlo.lgamma" => lgamma(&mut e, xw)?,
                "chlo.digamma" => digamma(&mut e, xw)?,
                _ => erf_inv_f32(&mut e, xw)?,
            };
            if half {
                b.convert(r, ty)?
            } else {
                r
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

/// Elementwise expressions of one type and shape.
struct E<'b> {
    b: &'b mut HloBuilder,
    ty: ElementType,
}

impl<'b> E<'b> {
    fn new(b: &'b mut HloBuilder, ty: ElementType) -> Self {
        E { b, ty }
    }

    /// `value` rounded to the type, broadcast to the operands' shape (the
    /// shape is taken from the first use's operand; a scalar when unknown).
    fn c(&mut self, value: f64) -> Result<Value> {
        let lit = match self.ty {
            ElementType::F16 => Literal::scalar(f16::from_f64(value)),
            ElementType::BF16 => Literal::scalar(bf16::from_f64(value)),
            ElementType::F32 => Literal::scalar(value as f32),
            _ => Literal::scalar(value),
        };
        self.b.constant(lit)
    }

    /// Broadcasts a scalar constant to `like`'s dimensions.
    fn fit(&mut self, c: Value, like: Value) -> Result<Value> {
        let dims = self.b.shape(like)?.dims().to_vec();
        if self.b.shape(c)?.dims() == dims.as_slice() {
            return Ok(c);
        }
        self.b.broadcast_in_dim(c, &dims, &[])
    }

    fn bin(&mut self, op: BinaryOp, l: Value, r: Value) -> Result<Value> {
        let (l, r) = self.same(l, r)?;
        self.b.binary(op, l, r)
    }

    fn un(&mut self, op: UnaryOp, x: Value) -> Result<Value> {
        self.b.unary(op, x)
    }

    fn cmp(&mut self, l: Value, r: Value, d: ComparisonDirection) -> Result<Value> {
        let (l, r) = self.same(l, r)?;
        self.b.compare(l, r, d)
    }

    fn sel(&mut self, p: Value, t: Value, f: Value) -> Result<Value> {
        let t = self.fit(t, p)?;
        let f = self.fit(f, p)?;
        self.b.select(p, t, f)
    }

    /// Broadcasts whichever of two operands is a scalar constant.
    fn same(&mut self, l: Value, r: Value) -> Result<(Value, Value)> {
        let (dl, dr) = (self.b.shape(l)?.dims().len(), self.b.shape(r)?.dims().len());
        Ok(match (dl, dr) {
            (0, n) if n > 0 => (self.fit(l, r)?, r),
            (n, 0) if n > 0 => (l, self.fit(r, l)?),
            _ => (l, r),
        })
    }

    fn max(&self) -> f64 {
        match self.ty {
            ElementType::F16 => f16::MAX.to_f64(),
            ElementType::BF16 => bf16::MAX.to_f64(),
            ElementType::F32 => f32::MAX as f64,
            _ => f64::MAX,
        }
    }
}

/// `2 atan2(x, 1 + sqrt((1 - x)(1 + x)))`.
fn asin(e: &mut E, x: Value) -> Result<Value> {
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let a = e.bin(BinaryOp::Subtract, one, x)?;
    let p = e.bin(BinaryOp::Add, x, one)?;
    let m = e.bin(BinaryOp::Multiply, a, p)?;
    let s = e.un(UnaryOp::Sqrt, m)?;
    let d = e.bin(BinaryOp::Add, s, one)?;
    let t = e.bin(BinaryOp::Atan2, x, d)?;
    e.bin(BinaryOp::Add, t, t)
}

/// `atan2(sqrt((1 - x)(1 + x)), x)`.
fn acos(e: &mut E, x: Value) -> Result<Value> {
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let a = e.bin(BinaryOp::Subtract, one, x)?;
    let p = e.bin(BinaryOp::Add, x, one)?;
    let m = e.bin(BinaryOp::Multiply, a, p)?;
    let s = e.un(UnaryOp::Sqrt, m)?;
    e.bin(BinaryOp::Atan2, s, x)
}

/// `|x| < 1 ? (m + m / (m + 1)) / 2 : e^(x - ln 2) - e^(-x - ln 2)` with
/// `m = expm1(x)`.
fn sinh(e: &mut E, x: Value) -> Result<Value> {
    let a = e.un(UnaryOp::Abs, x)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let small = e.cmp(a, one, ComparisonDirection::Lt)?;
    let m = e.un(UnaryOp::Expm1, x)?;
    let m1 = e.bin(BinaryOp::Add, m, one)?;
    let q = e.bin(BinaryOp::Divide, m, m1)?;
    let s = e.bin(BinaryOp::Add, m, q)?;
    let half = e.c(0.5)?;
    let near = e.bin(BinaryOp::Multiply, s, half)?;
    let far = exp_pair(e, x, BinaryOp::Subtract)?;
    e.sel(small, near, far)
}

/// `e^(x - ln 2) + e^(-x - ln 2)`.
fn cosh(e: &mut E, x: Value) -> Result<Value> {
    exp_pair(e, x, BinaryOp::Add)
}

fn exp_pair(e: &mut E, x: Value, combine: BinaryOp) -> Result<Value> {
    let c = e.c(-std::f64::consts::LN_2)?;
    let c = e.fit(c, x)?;
    let u = e.bin(BinaryOp::Add, x, c)?;
    let eu = e.un(UnaryOp::Exp, u)?;
    let v = e.bin(BinaryOp::Subtract, c, x)?;
    let ev = e.un(UnaryOp::Exp, v)?;
    e.bin(combine, eu, ev)
}

/// `sign(x) (|x| >= sqrt(max) ? log|x| + ln 2 : log1p(|x| + x²/(sqrt(x²+1)+1)))`.
fn asinh(e: &mut E, x: Value) -> Result<Value> {
    let sign = e.un(UnaryOp::Sign, x)?;
    let a = e.un(UnaryOp::Abs, x)?;
    let limit = e.c(e.max().sqrt())?;
    let big = e.cmp(a, limit, ComparisonDirection::Ge)?;
    let l = e.un(UnaryOp::Log, a)?;
    let ln2 = e.c(std::f64::consts::LN_2)?;
    let far = e.bin(BinaryOp::Add, l, ln2)?;
    let a2 = e.bin(BinaryOp::Multiply, a, a)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let p = e.bin(BinaryOp::Add, a2, one)?;
    let q = e.un(UnaryOp::Sqrt, p)?;
    let r = e.bin(BinaryOp::Add, q, one)?;
    let d = e.bin(BinaryOp::Divide, a2, r)?;
    let s = e.bin(BinaryOp::Add, a, d)?;
    let near = e.un(UnaryOp::Log1p, s)?;
    let v = e.sel(big, far, near)?;
    e.bin(BinaryOp::Multiply, sign, v)
}

/// `x >= max/2 ? log x + ln 2 : log1p(sqrt(x-1) (sqrt(x+1) + sqrt(x-1)))`.
fn acosh(e: &mut E, x: Value) -> Result<Value> {
    let limit = e.c(e.max() / 2.0)?;
    let big = e.cmp(x, limit, ComparisonDirection::Ge)?;
    let l = e.un(UnaryOp::Log, x)?;
    let ln2 = e.c(std::f64::consts::LN_2)?;
    let far = e.bin(BinaryOp::Add, l, ln2)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let xm = e.bin(BinaryOp::Subtract, x, one)?;
    let sm = e.un(UnaryOp::Sqrt, xm)?;
    let xp = e.bin(BinaryOp::Add, x, one)?;
    let sp = e.un(UnaryOp::Sqrt, xp)?;
    let t = e.bin(BinaryOp::Add, sp, sm)?;
    let m = e.bin(BinaryOp::Multiply, sm, t)?;
    let near = e.un(UnaryOp::Log1p, m)?;
    e.sel(big, far, near)
}

/// `|x| > 1 ? NaN : (log1p(x) - log1p(-x)) / 2`.
fn atanh(e: &mut E, x: Value) -> Result<Value> {
    let a = e.un(UnaryOp::Abs, x)?;
    let one = e.c(1.0)?;
    let out = e.cmp(a, one, ComparisonDirection::Gt)?;
    let nan = e.c(f64::NAN)?;
    let nan = e.fit(nan, x)?;
    let l1 = e.un(UnaryOp::Log1p, x)?;
    let nx = e.un(UnaryOp::Negate, x)?;
    let l2 = e.un(UnaryOp::Log1p, nx)?;
    let d = e.bin(BinaryOp::Subtract, l1, l2)?;
    let half = e.c(0.5)?;
    let h = e.bin(BinaryOp::Multiply, d, half)?;
    e.sel(out, nan, h)
}

/// Coefficients of the single-precision inverse error function (Giles'
/// approximation, as XLA writes it), highest order first: for `w < 5` and
/// for the tail.
const ERF_INV_F32: [(f64, f64); 9] = [
    (2.81022636e-08, -0.000200214257),
    (3.43273939e-07, 0.000100950558),
    (-3.5233877e-06, 0.00134934322),
    (-4.39150654e-06, -0.00367342844),
    (0.00021858087, 0.00573950773),
    (-0.00125372503, -0.0076224613),
    (-0.00417768164, 0.00943887047),
    (0.246640727, 1.00167406),
    (1.50140941, 2.83297682),
];

/// `|x| == 1 ? x·inf : x·p(z)` with `w = -log1p(-x²)`, `z = w - 2.5` for
/// `w < 5` and `sqrt(w) - 3` beyond, `p` the polynomial of [`ERF_INV_F32`]
/// for the branch (coefficients chosen per element).
fn erf_inv_f32(e: &mut E, x: Value) -> Result<Value> {
    let a = e.un(UnaryOp::Abs, x)?;
    let one = e.c(1.0)?;
    let is_one = e.cmp(a, one, ComparisonDirection::Eq)?;
    let inf = e.c(f64::INFINITY)?;
    let edge = e.bin(BinaryOp::Multiply, x, inf)?;
    let nx = e.un(UnaryOp::Negate, x)?;
    let xx = e.bin(BinaryOp::Multiply, x, nx)?;
    let l = e.un(UnaryOp::Log1p, xx)?;
    let w = e.un(UnaryOp::Negate, l)?;
    let five = e.c(5.0)?;
    let central = e.cmp(w, five, ComparisonDirection::Lt)?;
    let mut coefficients = Vec::with_capacity(ERF_INV_F32.len());
    for &(near, far) in &ERF_INV_F32 {
        let n = e.c(near)?;
        let f = e.c(far)?;
        coefficients.push(e.sel(central, n, f)?);
    }
    let two_and_half = e.c(2.5)?;
    let zc = e.bin(BinaryOp::Subtract, w, two_and_half)?;
    let s = e.un(UnaryOp::Sqrt, w)?;
    let three = e.c(3.0)?;
    let zt = e.bin(BinaryOp::Subtract, s, three)?;
    let z = e.sel(central, zc, zt)?;
    let mut p = e.bin(BinaryOp::Multiply, coefficients[0], z)?;
    for (i, &c) in coefficients.iter().enumerate().skip(1) {
        p = e.bin(BinaryOp::Add, c, p)?;
        if i + 1 < coefficients.len() {
            p = e.bin(BinaryOp::Multiply, p, z)?;
        }
    }
    let r = e.bin(BinaryOp::Multiply, p, x)?;
    e.sel(is_one, edge, r)
}

/// `p(z)` by Horner's rule, `coefficients` highest order first, each step
/// `p·z + c` as XLA writes it.
fn horner(e: &mut E, z: Value, coefficients: &[f64]) -> Result<Value> {
    let c0 = e.c(coefficients[0])?;
    let mut p = e.bin(BinaryOp::Multiply, z, c0)?;
    for (i, &c) in coefficients.iter().enumerate().skip(1) {
        let c = e.c(c)?;
        p = e.bin(BinaryOp::Add, p, c)?;
        if i + 1 < coefficients.len() {
            p = e.bin(BinaryOp::Multiply, p, z)?;
        }
    }
    Ok(p)
}

/// Single-precision `erfc`: `1 - x·P(x²)` for `|x| < 1`; beyond,
/// `e^(-x²)/|x| · R(1/x²)` (one rational branch below 2, another above, zero
/// where `e^(-x²)` underflows), reflected as `2 - y` for negative `x`.
fn erfc_f32(e: &mut E, x: Value) -> Result<Value> {
    const SMALL: [f64; 7] = [
        7.85386146e-05,
        -0.000801019371,
        0.00518832775,
        -0.0268538129,
        0.112835854,
        -0.37612626,
        1.12837911,
    ];
    const NEAR: [f64; 9] = [
        0.0232682,
        -0.138703942,
        0.368742466,
        -0.582473278,
        0.621000469,
        -0.494451523,
        0.340488,
        -0.274112701,
        0.563825965,
    ];
    const FAR: [f64; 8] = [
        -10.477664,
        12.9772,
        -7.49551868,
        2.92101908,
        -1.01526523,
        0.42184633,
        -0.282076746,
        0.564189494,
    ];
    let a = e.un(UnaryOp::Abs, x)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let small = e.cmp(a, one, ComparisonDirection::Lt)?;
    let x2 = e.bin(BinaryOp::Multiply, x, x)?;
    let p = horner(e, x2, &SMALL)?;
    let xp = e.bin(BinaryOp::Multiply, x, p)?;
    let near_zero = e.bin(BinaryOp::Subtract, one, xp)?;
    let zero = e.c(0.0)?;
    let zero = e.fit(zero, x)?;
    let negative = e.cmp(x, zero, ComparisonDirection::Lt)?;
    let two = e.c(2.0)?;
    let two = e.fit(two, x)?;
    let mx2 = e.un(UnaryOp::Negate, x2)?;
    let limit = e.c(-88.7228394)?;
    let underflows = e.cmp(mx2, limit, ComparisonDirection::Lt)?;
    let ex = e.un(UnaryOp::Exp, mx2)?;
    let inv_a = e.bin(BinaryOp::Divide, one, a)?;
    let scaled = e.bin(BinaryOp::Multiply, ex, inv_a)?;
    let below_two = e.cmp(a, two, ComparisonDirection::Lt)?;
    let z = e.bin(BinaryOp::Divide, one, x2)?;
    let near = horner(e, z, &NEAR)?;
    let far = horner(e, z, &FAR)?;
    let r = e.sel(below_two, near, far)?;
    let y = e.bin(BinaryOp::Multiply, scaled, r)?;
    let y = e.sel(underflows, zero, y)?;
    let reflected = e.bin(BinaryOp::Subtract, two, y)?;
    let tail = e.sel(negative, reflected, y)?;
    e.sel(small, near_zero, tail)
}

/// The Lanczos approximation's coefficients (g = 7, n = 9) for [`lgamma`].
const LANCZOS: [f64; 8] = [
    676.5203681218851,
    -1259.1392167224028,
    771.3234287776531,
    -176.6150291621406,
    12.507343278686905,
    -0.13857109526572012,
    9.984369578019572e-06,
    1.5056327351493116e-07,
];

/// The Lanczos series `0.9999999999998099 + Σ c_k / (z + k)`, given the
/// shifted arguments `z + k` (summed in XLA's order: the first term plus the
/// constant, then each term in turn).
fn lanczos_series(e: &mut E, shifted: &[Value]) -> Result<Value> {
    let mut sum: Option<Value> = None;
    for (&c, &zk) in LANCZOS.iter().zip(shifted) {
        let c = e.c(c)?;
        let term = e.bin(BinaryOp::Divide, c, zk)?;
        sum = Some(match sum {
            None => {
                let base = e.c(0.9999999999998099)?;
                e.bin(BinaryOp::Add, term, base)?
            }
            Some(acc) => e.bin(BinaryOp::Add, acc, term)?,
        });
    }
    sum.ok_or_else(|| Error::internal("empty Lanczos series"))
}

/// `log |Γ(x)|` by the Lanczos approximation of `Γ(z + 1)`, `z = x - 1`,
/// reflected (`log π - log |sin(π x)| - lgamma(1 - x)`) for `x < 0.5`, and
/// `inf` at infinities, as XLA writes it.
fn lgamma(e: &mut E, x: Value) -> Result<Value> {
    use std::f64::consts::PI;
    let inf = e.c(f64::INFINITY)?;
    let inf = e.fit(inf, x)?;
    let a0 = e.un(UnaryOp::Abs, x)?;
    let is_inf = e.cmp(a0, inf, ComparisonDirection::Eq)?;
    let half = e.c(0.5)?;
    let half = e.fit(half, x)?;
    let reflect = e.cmp(x, half, ComparisonDirection::Lt)?;
    // log |sin(π x)|, from the distance of |x| to the nearest integer.
    let a = e.un(UnaryOp::Abs, x)?;
    let fl = e.un(UnaryOp::Floor, a)?;
    let frac = e.bin(BinaryOp::Subtract, a, fl)?;
    let above_half = e.cmp(half, frac, ComparisonDirection::Lt)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let rest = e.bin(BinaryOp::Subtract, one, frac)?;
    let r = e.sel(above_half, rest, frac)?;
    let pi = e.c(PI)?;
    let pr = e.bin(BinaryOp::Multiply, r, pi)?;
    let sine = e.un(UnaryOp::Sin, pr)?;
    let log_sin = e.un(UnaryOp::Log, sine)?;
    let finite = e.un(UnaryOp::IsFinite, log_sin)?;
    let log_pi = e.c(PI.ln())?;
    let reflected_base = e.bin(BinaryOp::Subtract, log_pi, log_sin)?;
    // z = -x when reflecting, x - 1 otherwise.
    let nx = e.un(UnaryOp::Negate, x)?;
    let xm1 = e.bin(BinaryOp::Subtract, x, one)?;
    let z = e.sel(reflect, nx, xm1)?;
    // (z + 1/2) log(t) - t + log sqrt(2π), t = z + g + 1/2, log t taken
    // as log1p(z / 7.5) + log 7.5.
    let zh = e.bin(BinaryOp::Add, z, half)?;
    let g = e.c(7.5)?;
    let t = e.bin(BinaryOp::Add, z, g)?;
    let u = e.bin(BinaryOp::Divide, z, g)?;
    let l1 = e.un(UnaryOp::Log1p, u)?;
    let log_g = e.c(7.5f64.ln())?;
    let log_t = e.bin(BinaryOp::Add, l1, log_g)?;
    let q = e.bin(BinaryOp::Divide, t, log_t)?;
    let w = e.bin(BinaryOp::Subtract, zh, q)?;
    let m = e.bin(BinaryOp::Multiply, w, log_t)?;
    let log_sqrt_2pi = e.c(0.9189385332046727)?;
    let head = e.bin(BinaryOp::Add, m, log_sqrt_2pi)?;
    let mut shifted = Vec::with_capacity(LANCZOS.len());
    for k in 0..LANCZOS.len() {
        let kk = e.c(k as f64 + 1.0)?;
        shifted.push(e.bin(BinaryOp::Add, z, kk)?);
    }
    let series = lanczos_series(e, &shifted)?;
    let log_series = e.un(UnaryOp::Log, series)?;
    let direct = e.bin(BinaryOp::Add, head, log_series)?;
    let reflected = e.bin(BinaryOp::Subtract, reflected_base, direct)?;
    let pole = e.un(UnaryOp::Negate, log_sin)?;
    let reflected = e.sel(finite, reflected, pole)?;
    let v = e.sel(reflect, reflected, direct)?;
    e.sel(is_inf, inf, v)
}

/// `ψ(x)`, the derivative of [`lgamma`]'s Lanczos form: `log t + A'/A - 7/t`
/// with `A` the series and `t = z + 7.5`, reflected (`- π cot(π x)`) for
/// `x < 0.5`, NaN at the poles (non-positive integers), as XLA writes it.
fn digamma(e: &mut E, x: Value) -> Result<Value> {
    use std::f64::consts::PI;
    let zero = e.c(0.0)?;
    let zero = e.fit(zero, x)?;
    let non_positive = e.cmp(x, zero, ComparisonDirection::Le)?;
    let fl = e.un(UnaryOp::Floor, x)?;
    let integral = e.cmp(x, fl, ComparisonDirection::Eq)?;
    let pole = e.b.binary(BinaryOp::And, non_positive, integral)?;
    let nan = e.c(f64::NAN)?;
    let half = e.c(0.5)?;
    let half = e.fit(half, x)?;
    let reflect = e.cmp(x, half, ComparisonDirection::Lt)?;
    let nx = e.un(UnaryOp::Negate, x)?;
    let one = e.c(1.0)?;
    let one = e.fit(one, x)?;
    let xm1 = e.bin(BinaryOp::Subtract, x, one)?;
    let z = e.sel(reflect, nx, xm1)?;
    let g = e.c(7.5)?;
    let g = e.fit(g, x)?;
    let u = e.bin(BinaryOp::Divide, z, g)?;
    let l1 = e.un(UnaryOp::Log1p, u)?;
    let log_g = e.c(7.5f64.ln())?;
    let log_t = e.bin(BinaryOp::Add, l1, log_g)?;
    // A' = -Σ c_k / (z + k)², A = 0.9999999999998099 + Σ c_k / (z + k).
    let mut shifted = Vec::with_capacity(LANCZOS.len());
    let mut derivative = zero;
    for (k, &c) in LANCZOS.iter().enumerate() {
        let kk = e.c(k as f64 + 1.0)?;
        let zk = e.bin(BinaryOp::Add, z, kk)?;
        let sq = e.bin(BinaryOp::Multiply, zk, zk)?;
        let c = e.c(c)?;
        let term = e.bin(BinaryOp::Divide, c, sq)?;
        derivative = e.bin(BinaryOp::Subtract, derivative, term)?;
        shifted.push(zk);
    }
    let series = lanczos_series(e, &shifted)?;
    let ratio = e.bin(BinaryOp::Divide, derivative, series)?;
    let with_log = e.bin(BinaryOp::Add, log_t, ratio)?;
    let t = e.bin(BinaryOp::Add, z, g)?;
    let seven = e.c(7.0)?;
    let g_over_t = e.bin(BinaryOp::Divide, seven, t)?;
    let direct = e.bin(BinaryOp::Subtract, with_log, g_over_t)?;
    // π cot(π x), with x reduced by the nearest integer's magnitude.
    let xh = e.bin(BinaryOp::Add, x, half)?;
    let fl2 = e.un(UnaryOp::Floor, xh)?;
    let afl = e.un(UnaryOp::Abs, fl2)?;
    let reduced = e.bin(BinaryOp::Add, x, afl)?;
    let pi = e.c(PI)?;
    let arg = e.bin(BinaryOp::Multiply, reduced, pi)?;
    let cos = e.un(UnaryOp::Cos, arg)?;
    let cos_pi = e.bin(BinaryOp::Multiply, cos, pi)?;
    let sin = e.un(UnaryOp::Sin, arg)?;
    let cot = e.bin(BinaryOp::Divide, cos_pi, sin)?;
    let reflected = e.bin(BinaryOp::Subtract, direct, cot)?;
    let v = e.sel(reflect, reflected, direct)?;
    e.sel(pole, nan, v)
}

/// Decomposes a binary CHLO op, or `None` when it has none here for the
/// operands' type.
pub(crate) fn decompose_binary(
    b: &mut HloBuilder,
    name: &str,
    x: Value,
    y: Value,
) -> Result<Option<Value>> {
    match (name, b.shape(x)?.element_type()) {
        (
            "chlo.next_after",
            Some(t @ (ElementType::F16 | ElementType::BF16 | ElementType::F32 | ElementType::F64)),
        ) => next_after(b, t, x, y).map(Some),
        _ => Ok(None),
    }
}

/// The float after `x` toward `y`, by stepping `x`'s bits: NaN if either is
/// NaN, `y` if they are equal, the smallest subnormal of `y`'s sign from a
/// zero, else one unit toward `y`, as XLA writes it.
fn next_after(b: &mut HloBuilder, ty: ElementType, x: Value, y: Value) -> Result<Value> {
    let dims = b.shape(x)?.dims().to_vec();
    // The integer of the float's width, and its magnitude and sign masks.
    let (int, splat, magnitude_mask, sign_mask): (ElementType, fn(i64) -> Literal, i64, i64) =
        match ty {
            ElementType::F16 | ElementType::BF16 => (
                ElementType::S16,
                |v| Literal::scalar(v as i16),
                i16::MAX as i64,
                i16::MIN as i64,
            ),
            ElementType::F32 => (
                ElementType::S32,
                |v| Literal::scalar(v as i32),
                i32::MAX as i64,
                i32::MIN as i64,
            ),
            _ => (ElementType::S64, Literal::scalar, i64::MAX, i64::MIN),
        };
    let int_const = |b: &mut HloBuilder, v: i64| -> Result<Value> {
        let c = b.constant(splat(v))?;
        b.broadcast_in_dim(c, &dims, &[])
    };
    let bits = |b: &mut HloBuilder, v: Value| b.bitcast_convert(v, int);
    let x_nan = b.compare(x, x, ComparisonDirection::Ne)?;
    let y_nan = b.compare(y, y, ComparisonDirection::Ne)?;
    let either_nan = b.binary(BinaryOp::Or, x_nan, y_nan)?;
    let nan = match ty {
        ElementType::F16 => b.constant(Literal::scalar(f16::NAN))?,
        ElementType::BF16 => b.constant(Literal::scalar(bf16::NAN))?,
        ElementType::F32 => b.constant(Literal::scalar(f32::NAN))?,
        _ => b.constant(Literal::scalar(f64::NAN))?,
    };
    let nan = b.broadcast_in_dim(nan, &dims, &[])?;
    let nan_bits = bits(b, nan)?;
    let equal = b.compare(x, y, ComparisonDirection::Eq)?;
    let by = bits(b, y)?;
    let bx = bits(b, x)?;
    let magnitude = int_const(b, magnitude_mask)?;
    let ax = b.binary(BinaryOp::And, bx, magnitude)?;
    let zero = int_const(b, 0)?;
    let x_zero = b.compare(ax, zero, ComparisonDirection::Eq)?;
    let ay = b.binary(BinaryOp::And, by, magnitude)?;
    let y_zero = b.compare(ay, zero, ComparisonDirection::Eq)?;
    let sign = int_const(b, sign_mask)?;
    let sy = b.binary(BinaryOp::And, by, sign)?;
    let one = int_const(b, 1)?;
    let smallest = b.binary(BinaryOp::Or, sy, one)?;
    let from_zero = b.select(y_zero, by, smallest)?;
    let larger = b.compare(ax, ay, ComparisonDirection::Gt)?;
    let sx = b.binary(BinaryOp::And, bx, sign)?;
    let signs_differ = b.compare(sx, sy, ComparisonDirection::Ne)?;
    let away = b.binary(BinaryOp::Or, larger, signs_differ)?;
    let minus_one = int_const(b, -1)?;
    let step = b.select(away, minus_one, one)?;
    let moved = b.binary(BinaryOp::Add, bx, step)?;
    let r = b.select(x_zero, from_zero, moved)?;
    let r = b.select(equal, by, r)?;
    let r = b.select(either_nan, nan_bits, r)?;
    b.bitcast_convert(r, ty)
}
