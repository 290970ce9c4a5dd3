//! Seeded random HLO programs for differential testing, each with the tolerance
//! its outputs deserve.
//!
//! [`generate`] turns a seed into a [`Program`]: a verified [`HloModule`] built
//! with [`HloBuilder`], its arguments (seeded random values), and for every
//! output leaf an absolute tolerance. The same seed always gives the same
//! program, so a seed is a complete reproducer.
//!
//! # What gets generated
//!
//! A program starts from one to three parameters (ranks 0–4, small dims, sizes 1
//! and 0 included) and applies a random number of steps. Each step picks an
//! operation family — elementwise unary/binary/compare/select/clamp/convert,
//! broadcast (scalar and dimension-mapping), reshape, transpose, strided slice,
//! concatenate, pad (negative and interior too), reverse, iota, reduce (add,
//! max, min, mul, and/or over any subset of dimensions), dot (2-D, batched,
//! vector, any arrangement of batch/contracting/free dimensions),
//! dynamic-slice/update-slice (indices possibly out of range: XLA clamps them),
//! row gathers, while loops with a counter, conditionals (pred and index), and
//! softmax/layernorm/logsumexp patterns — and takes its operands from the
//! values made so far, converting, reshaping or broadcasting them as needed (or
//! making a fresh parameter). The result is a tuple of up to three values.
//!
//! # Restricting the opcodes
//!
//! [`generate_with_ops`] makes programs that use only a given set of opcodes,
//! for a backend that implements few ops: every operation's result is checked
//! against the set as it is made and a step needing another op is skipped; the
//! finished module (dead code removed) is checked again, and regenerated from a
//! derived seed if anything else slipped in (called computations, say).
//!
//! # Why every value carries an error bound
//!
//! Two correct backends may legitimately disagree: reductions and dots
//! reassociate, transcendental functions differ by an ULP or two, and XLA CPU
//! contracts `a * b + c` into one FMA. A differential test that compares with a
//! fixed tolerance either misses real bugs or fails on legitimate differences,
//! and a compare or a floor of such a value turns a one-ULP difference into a
//! flipped boolean that no tolerance can absorb.
//!
//! So every generated value carries [`Props`]: an interval holding its finite
//! elements, whether non-finite elements can occur, and `err`, a bound on how
//! far any correct backend's finite elements can be from op-by-op IEEE
//! evaluation. `err == 0` means *bit-identical on every correct backend* (each
//! op rounds once, exactly as `platform_api::semantics` defines it). The bound
//! is propagated op by op (interval arithmetic for the values, first-order
//! error propagation with one rounding term per inexact op, a few ULP per
//! transcendental, `n·eps·Σ|x|` per reassociated sum). Operations whose result
//! is discontinuous in their input — compare, floor, sign, float → integer
//! conversion, remainder — are only applied to exact values, and non-finite
//! values only meet inexact ones where the result cannot depend on the
//! difference. The helpers check these rules and report a violation as an
//! internal error (a generator bug), so the tolerance of every output is
//! sound by construction: an output with `err == 0` must match exactly, and any
//! other within `2·err`.

use platform_api::hlo::builder::{Computation, HloBuilder, Value};
use platform_api::hlo::{
    BinaryOp, ComparisonDirection, ComparisonType, DotDimensionNumbers, GatherDimensionNumbers,
    PadDim, UnaryOp,
};
use platform_api::semantics::convert_scalar;
use platform_api::{ElementType, Error, HloModule, Literal, Result, Scalar, Shape};

// ---------------------------------------------------------------------------
// Randomness

/// SplitMix64: small, fast, and stable across platforms and crate versions
/// (a seed must mean the same program forever).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo) as u64 + 1)) as i64
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// An index drawn with the given relative weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        let mut r = self.next_u64() % total.max(1);
        for (i, &w) in weights.iter().enumerate() {
            if r < w as u64 {
                return i;
            }
            r -= w as u64;
        }
        weights.len() - 1
    }
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

mod props;

use props::*;
pub use props::{scalar_of, Props};

// ---------------------------------------------------------------------------
// The program

/// A generated program: module, arguments, and per-output tolerances.
#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    pub module: HloModule,
    pub args: Vec<Literal>,
    /// One per leaf of the result (a tuple flattened), in order.
    pub outputs: Vec<OutputCheck>,
    /// Operation families used, for reports and coverage counts.
    pub features: Vec<&'static str>,
}

/// How one output leaf is compared with the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputCheck {
    /// `|got - want| <= atol` for finite elements; NaN and infinities exactly.
    /// 0: exact (integers and `pred` always are).
    pub atol: f64,
}

impl OutputCheck {
    fn from_props(ty: ElementType, p: &Props) -> OutputCheck {
        if !is_float(ty) || p.is_exact() {
            OutputCheck { atol: 0.0 }
        } else {
            OutputCheck {
                atol: 2.0 * p.err + f64::MIN_POSITIVE,
            }
        }
    }
}

/// Generates the program for `seed`. An error is a bug in the generator.
pub fn generate(seed: u64) -> Result<Program> {
    generate_in(seed, None)
}

/// Opcodes every restricted program may use whatever the set: entry
/// parameters, and the tuple that returns several outputs.
pub const ALWAYS_ALLOWED: [&str; 2] = ["parameter", "tuple"];

/// How many programs [`generate_with_ops`] tries before giving up.
const RESTRICTED_ATTEMPTS: u64 = 500;

/// Generates a program for `seed` that uses only the opcodes in `ops` (HLO
/// spellings: `"add"`, `"broadcast"`; plus [`ALWAYS_ALLOWED`]), for a backend
/// that implements few ops.
///
/// Each step's result is checked as it is made, and a step needing another op
/// is skipped; the operations a step makes before it fails, and anything in
/// called computations, are caught on the finished module, whose dead
/// instructions are removed first. A program still using other ops is
/// regenerated from the next seed derived from `seed` (the same `seed` and
/// `ops` always give the same program), as is one that computes nothing
/// (parameters alone). Errors: an unknown opcode name, or no program found
/// (the set is too small for any step).
pub fn generate_with_ops(seed: u64, ops: &[&str]) -> Result<Program> {
    use platform_api::hlo::Opcode;
    use platform_api::passes::HloPass;
    let mut allowed = std::collections::BTreeSet::new();
    for op in ops.iter().chain(&ALWAYS_ALLOWED) {
        let known = Opcode::from_name(op)
            .ok_or_else(|| Error::invalid_argument(format!("\"{op}\" is not an HLO opcode")))?;
        allowed.insert(known.name());
    }
    let allowed = std::sync::Arc::new(allowed);
    for attempt in 0..RESTRICTED_ATTEMPTS {
        let derived = seed.wrapping_add(attempt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut program = generate_in(derived, Some(allowed.clone()))?;
        platform_api::passes::DeadCodeElimination::new().run(&mut program.module)?;
        let used = opcodes_of(&program.module);
        // A program of parameters alone tests nothing: it must compute.
        let computes = used.iter().any(|op| !ALWAYS_ALLOWED.contains(op));
        if computes && used.is_subset(&allowed) {
            program.seed = seed;
            return Ok(program);
        }
    }
    Err(Error::not_found(format!(
        "no program using only {ops:?} in {RESTRICTED_ATTEMPTS} attempts from seed {seed}; \
         allow more opcodes (most steps need broadcast, convert or constant too)"
    )))
}

/// Every opcode a module uses, in every computation.
pub fn opcodes_of(module: &HloModule) -> std::collections::BTreeSet<&'static str> {
    module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.opcode().name()))
        .collect()
}

fn generate_in(
    seed: u64,
    allowed: Option<std::sync::Arc<std::collections::BTreeSet<&'static str>>>,
) -> Result<Program> {
    let mut ctx = Ctx::new(&format!("difftest_{seed}"));
    ctx.allowed = allowed;
    let mut g = Gen {
        rng: Rng::new(seed),
        ctx,
        pool: Vec::new(),
        uses: Vec::new(),
        args: Vec::new(),
        features: Vec::new(),
        fresh: 0,
    };
    g.run()
        .map_err(|e| e.context(format!("generating program for seed {seed}")))?;
    let Gen {
        ctx,
        pool,
        uses,
        args,
        mut features,
        mut rng,
        ..
    } = g;
    // Outputs: the last value, plus up to two values nothing used.
    let last = pool.len() - 1;
    let mut outs = vec![last];
    let mut unused: Vec<usize> = (0..last).filter(|&i| uses[i] == 0).collect();
    rng.shuffle(&mut unused);
    outs.extend(unused.into_iter().take(rng.below(3)));
    let mut builder = ctx.b;
    let root = if outs.len() == 1 && rng.chance(0.6) {
        pool[last].v
    } else {
        let vals: Vec<Value> = outs.iter().map(|&i| pool[i].v).collect();
        builder.tuple(&vals)?
    };
    let outputs = outs
        .iter()
        .map(|&i| OutputCheck::from_props(pool[i].ty, &pool[i].p))
        .collect();
    let module = builder.build(root)?;
    features.sort();
    features.dedup();
    Ok(Program {
        seed,
        module,
        args,
        outputs,
        features,
    })
}

const MAX_PARAMS: usize = 8;
const MAX_ELEMENTS: usize = 240;

struct Gen {
    rng: Rng,
    ctx: Ctx,
    pool: Vec<Val>,
    /// Uses of each pool value by later steps.
    uses: Vec<u32>,
    args: Vec<Literal>,
    features: Vec<&'static str>,
    fresh: usize,
}

/// The operation families a step can take, with their weights.
const STEPS: &[(&str, u32)] = &[
    ("unary", 12),
    ("binary", 14),
    ("compare_select", 6),
    ("clamp", 3),
    ("convert", 5),
    ("broadcast", 5),
    ("reshape", 4),
    ("transpose", 4),
    ("slice", 4),
    ("concatenate", 3),
    ("pad", 3),
    ("reverse", 3),
    ("iota", 2),
    ("reduce", 8),
    ("dot", 6),
    ("dynamic_slice", 3),
    ("dynamic_update_slice", 3),
    ("gather", 3),
    ("while", 3),
    ("conditional", 3),
    ("softmax", 2),
    ("layernorm", 2),
    ("logsumexp", 1),
    ("sanitize", 2),
];

impl Gen {
    fn run(&mut self) -> Result<()> {
        let n_params = 1 + self.rng.below(3);
        for _ in 0..n_params {
            let ty = self.random_type();
            let rank = self.random_rank();
            let dims = self.random_dims(rank);
            let p = self.new_param(&dims, ty)?;
            self.push(p);
        }
        let steps = 2 + self.rng.below(14);
        let weights: Vec<u32> = STEPS.iter().map(|s| s.1).collect();
        let mut done = 0;
        let mut attempts = 0;
        while done < steps && attempts < steps * 4 {
            attempts += 1;
            let kind = STEPS[self.rng.weighted(&weights)].0;
            // A step outside the allowed opcodes is skipped, not a bug.
            let made = match self.step(kind) {
                Err(e) if not_allowed(&e) => None,
                other => other?,
            };
            if let Some(v) = made {
                self.push(v);
                self.features.push(kind);
                done += 1;
            }
        }
        Ok(())
    }

    fn push(&mut self, v: Val) -> usize {
        self.pool.push(v);
        self.uses.push(0);
        self.pool.len() - 1
    }

    fn random_type(&mut self) -> ElementType {
        use ElementType::*;
        [F32, S32, F64, U8, Pred, F16, BF16][self.rng.weighted(&[40, 15, 10, 10, 10, 8, 7])]
    }

    fn random_dim(&mut self) -> usize {
        match self.rng.weighted(&[3, 15, 82]) {
            0 => 0,
            1 => 1,
            _ => 2 + self.rng.below(5),
        }
    }

    fn random_dims(&mut self, rank: usize) -> Vec<usize> {
        loop {
            let dims: Vec<usize> = (0..rank).map(|_| self.random_dim()).collect();
            if dims.iter().product::<usize>() <= MAX_ELEMENTS {
                return dims;
            }
        }
    }

    fn random_rank(&mut self) -> usize {
        self.rng.weighted(&[1, 3, 3, 2, 1])
    }

    /// A new entry parameter with seeded random contents.
    fn new_param(&mut self, dims: &[usize], ty: ElementType) -> Result<Val> {
        let count: usize = dims.iter().product();
        let mut lit = Literal::zeros(&Shape::array(ty, dims.to_vec()));
        let (lo, hi, finite) = if ty == ElementType::Pred {
            (0.0, 1.0, true)
        } else if is_float(ty) {
            (-2.0, 2.0, !self.rng.chance(0.08))
        } else if ty.is_unsigned_int() || self.rng.chance(0.15) {
            let (lo, hi) = type_range(ty);
            (lo, hi, true)
        } else {
            (-20.0, 20.0, true)
        };
        let wide = !is_float(ty) && hi - lo > 1e6;
        for i in 0..count {
            let x = if ty == ElementType::Pred {
                self.rng.below(2) as f64
            } else if is_float(ty) {
                if !finite && self.rng.chance(0.15) {
                    self.rng.pick(&[
                        f64::NAN,
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                        -0.0,
                        0.0,
                        1e-40,
                        -1e-310,
                    ])
                } else {
                    self.rng.uniform(lo, hi)
                }
            } else if wide && self.rng.chance(0.3) {
                self.rng.pick(&[lo, hi, 0.0, -1.0, 1.0, lo + 1.0])
            } else {
                self.rng.range(lo as i64, hi as i64) as f64
            };
            lit.set(i, scalar_of(ty, x))?;
        }
        let number = self.args.len();
        let v = self.ctx.b.parameter(
            number,
            Shape::array(ty, dims.to_vec()),
            &format!("p{number}"),
        )?;
        self.args.push(lit);
        let mut p = Props::exact(lo, hi);
        p.finite = finite;
        self.ctx.val(v, p)
    }

    /// An s32 scalar parameter with a value in `lo..=hi`.
    fn index_param(&mut self, lo: i64, hi: i64) -> Result<Val> {
        let x = self.rng.range(lo, hi);
        let number = self.args.len();
        let v = self.ctx.b.parameter(
            number,
            Shape::scalar(ElementType::S32),
            &format!("i{number}"),
        )?;
        self.args.push(Literal::scalar(x as i32));
        self.ctx.val(v, Props::exact(x as f64, x as f64))
    }

    /// A pool value, biased to recent ones, satisfying `ok`; counts a use.
    fn pick(&mut self, ok: impl Fn(&Val) -> bool) -> Option<Val> {
        let candidates: Vec<usize> = (0..self.pool.len())
            .filter(|&i| ok(&self.pool[i]))
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let i = if self.rng.chance(0.5) {
            candidates[candidates.len() - 1 - self.rng.below(candidates.len().min(3))]
        } else {
            candidates[self.rng.below(candidates.len())]
        };
        self.uses[i] += 1;
        Some(self.pool[i].clone())
    }

    fn fresh_name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}_{}", self.fresh)
    }

    /// Makes a float value safe for inexact arithmetic: non-finite elements
    /// replaced by 0 and magnitudes clamped to `limit`.
    fn tame(&mut self, x: &Val, limit: f64) -> Result<Val> {
        let mut x = x.clone();
        if !is_float(x.ty) {
            return Ok(x);
        }
        if !x.p.finite {
            let ok = self.ctx.unary(UnaryOp::IsFinite, &x)?;
            let zero = self.ctx.splat(x.ty, 0.0, &x.dims)?;
            x = self.ctx.select(&ok, &x, &zero)?;
            x.p.finite = true;
            x.p.lo = x.p.lo.min(0.0);
            x.p.hi = x.p.hi.max(0.0);
        }
        if x.p.bound() > limit {
            let lo = self.ctx.splat(x.ty, -limit, &x.dims)?;
            let hi = self.ctx.splat(x.ty, limit, &x.dims)?;
            x = self.ctx.clamp(&lo, &x, &hi)?;
        }
        Ok(x)
    }

    /// `x` as type `ty`, if converting keeps the props sound.
    fn coerce_type(&mut self, x: &Val, ty: ElementType) -> Result<Option<Val>> {
        if x.ty == ty {
            return Ok(Some(x.clone()));
        }
        if is_float(x.ty) && !is_float(ty) && !x.p.is_exact() {
            return Ok(None);
        }
        // Exact values may overflow a narrower type (deterministically); inexact
        // ones are kept well inside it.
        let mut x = x.clone();
        if is_float(ty) && !x.p.is_exact() {
            x = self.tame(&x, tame_limit(ty))?;
        }
        self.ctx.convert(&x, ty).map(Some)
    }

    /// A value of exactly `dims` and `ty`, made from the pool if possible:
    /// reshaping one of the same size, broadcasting a smaller one, or else a
    /// fresh parameter or an iota.
    fn obtain(&mut self, dims: &[usize], ty: ElementType) -> Result<Val> {
        let count: usize = dims.iter().product();
        for _ in 0..3 {
            let strategy = self.rng.weighted(&[5, 4, 3]);
            let found = match strategy {
                0 => self.pick(|v| v.count() == count),
                1 => {
                    let target = dims.to_vec();
                    self.pick(move |v| embedding(&v.dims, &target).is_some())
                }
                _ => None,
            };
            let Some(x) = found else { continue };
            let Some(x) = self.coerce_type(&x, ty)? else {
                continue;
            };
            if x.count() == count {
                return self.ctx.reshape(&x, dims);
            }
            if let Some(map) = embedding(&x.dims, dims) {
                return self.ctx.broadcast_in_dim(&x, dims, &map);
            }
        }
        if self.args.len() < MAX_PARAMS && self.rng.chance(0.7) {
            return self.new_param(dims, ty);
        }
        // iota along a random dimension, converted.
        if dims.is_empty() {
            return self.ctx.splat(ty, self.rng.range(-3, 3) as f64, dims);
        }
        let d = self.rng.below(dims.len());
        let iota_ty = if ty == ElementType::Pred {
            ElementType::S32
        } else {
            ty
        };
        let v = self.ctx.b.iota(Shape::array(iota_ty, dims.to_vec()), d)?;
        let n = dims[d].max(1) as f64 - 1.0;
        let x = self.ctx.val(v, Props::exact(0.0, n))?;
        self.ctx.convert(&x, ty)
    }

    fn step(&mut self, kind: &str) -> Result<Option<Val>> {
        match kind {
            "unary" => self.step_unary(),
            "binary" => self.step_binary(),
            "compare_select" => self.step_compare_select(),
            "clamp" => self.step_clamp(),
            "convert" => self.step_convert(),
            "broadcast" => self.step_broadcast(),
            "reshape" => self.step_reshape(),
            "transpose" => self.step_transpose(),
            "slice" => self.step_slice(),
            "concatenate" => self.step_concatenate(),
            "pad" => self.step_pad(),
            "reverse" => self.step_reverse(),
            "iota" => self.step_iota(),
            "reduce" => self.step_reduce(),
            "dot" => self.step_dot(),
            "dynamic_slice" => self.step_dynamic_slice(),
            "dynamic_update_slice" => self.step_dynamic_update_slice(),
            "gather" => self.step_gather(),
            "while" => self.step_while(),
            "conditional" => self.step_conditional(),
            "softmax" => self.step_softmax(),
            "layernorm" => self.step_layernorm(),
            "logsumexp" => self.step_logsumexp(),
            "sanitize" => self.step_sanitize(),
            other => Err(bug(format!("unknown step {other}"))),
        }
    }

    fn step_unary(&mut self) -> Result<Option<Val>> {
        use UnaryOp::*;
        let Some(x) = self.pick(|_| true) else {
            return Ok(None);
        };
        let ty = x.ty;
        if ty == ElementType::Pred {
            return self.ctx.unary(Not, &x).map(Some);
        }
        if !is_float(ty) {
            let mut ops = vec![Negate, Not, PopCount, Clz];
            if ty.is_signed_int() {
                ops.extend([Abs, Sign]);
            }
            let op = self.rng.pick(&ops);
            return self.ctx.unary(op, &x).map(Some);
        }
        let mut ops = vec![
            Abs, Negate, Exp, Expm1, Log, Log1p, Sqrt, Rsqrt, Cbrt, Tanh, Logistic, Erf, Sin, Cos,
        ];
        if x.p.is_exact() {
            ops.extend([
                Floor,
                Ceil,
                RoundNearestAfz,
                RoundNearestEven,
                Sign,
                IsFinite,
            ]);
        }
        let op = self.rng.pick(&ops);
        let x = match op {
            Abs | Negate | Floor | Ceil | RoundNearestAfz | RoundNearestEven | Sign | IsFinite => x,
            Exp | Expm1 => self.tame(&x, if ty == ElementType::F16 { 6.0 } else { 8.0 })?,
            Tanh | Logistic | Erf | Sin | Cos => self.tame(&x, 100.0)?,
            _ => {
                // Positive arguments: |x| + c.
                let x = self.tame(&x, tame_limit(ty))?;
                let a = self.ctx.unary(Abs, &x)?;
                let c = self.ctx.splat(ty, self.rng.pick(&[0.5, 1.0]), &x.dims)?;
                self.ctx.binary(BinaryOp::Add, &a, &c)?
            }
        };
        self.ctx.unary(op, &x).map(Some)
    }

    /// A second operand for `a`: another value of the same dims, or a constant.
    fn partner(&mut self, a: &Val) -> Result<Val> {
        if self.rng.chance(0.25) {
            let c = if is_float(a.ty) {
                self.rng.pick(&[0.5, -1.5, 2.0, 3.0, 0.0])
            } else {
                self.rng.range(-3, 7) as f64
            };
            return self.ctx.splat(a.ty, c, &a.dims);
        }
        self.obtain(&a.dims.clone(), a.ty)
    }

    fn step_binary(&mut self) -> Result<Option<Val>> {
        use BinaryOp::*;
        let Some(a) = self.pick(|_| true) else {
            return Ok(None);
        };
        let ty = a.ty;
        let b = self.partner(&a)?;
        if ty == ElementType::Pred {
            let op = self.rng.pick(&[And, Or, Xor]);
            return self.ctx.binary(op, &a, &b).map(Some);
        }
        if !is_float(ty) {
            let op = self.rng.pick(&[
                Add,
                Subtract,
                Multiply,
                Divide,
                Remainder,
                Maximum,
                Minimum,
                And,
                Or,
                Xor,
                ShiftLeft,
                ShiftRightArithmetic,
                ShiftRightLogical,
                Power,
            ]);
            return self.ctx.binary(op, &a, &b).map(Some);
        }
        let exact = a.p.is_exact() && b.p.is_exact();
        let mut ops = vec![Add, Subtract, Multiply, Divide, Maximum, Minimum, Power];
        if exact {
            ops.extend([Atan2, Remainder, Divide]);
        }
        let op = self.rng.pick(&ops);
        let limit = tame_limit(ty);
        match op {
            Maximum | Minimum => self.ctx.binary(op, &a, &b).map(Some),
            Add | Subtract => {
                let (a, b) = if exact && !a.p.fmul && !b.p.fmul {
                    (a, b)
                } else {
                    (self.tame(&a, limit)?, self.tame(&b, limit)?)
                };
                self.ctx.binary(op, &a, &b).map(Some)
            }
            Multiply => {
                let (a, b) = if exact && self.rng.chance(0.5) {
                    (a, b)
                } else {
                    (self.tame(&a, limit.sqrt())?, self.tame(&b, limit.sqrt())?)
                };
                self.ctx.binary(op, &a, &b).map(Some)
            }
            Divide | Remainder if exact && self.rng.chance(0.4) => {
                // Any denominator, zeros included: IEEE says what happens.
                self.ctx.binary(op, &a, &b).map(Some)
            }
            Divide | Remainder | Power => {
                let a = self.tame(&a, if op == Power { 4.0 } else { limit })?;
                let b = self.tame(&b, if op == Power { 3.0 } else { limit })?;
                // |b| + c: a denominator (or base) away from zero.
                let (num, den) = if op == Power { (b, a) } else { (a, b) };
                let abs = self.ctx.unary(UnaryOp::Abs, &den)?;
                let c = self.ctx.splat(ty, 0.5, &den.dims)?;
                let den = self.ctx.binary(Add, &abs, &c)?;
                let den = if op != Power && self.rng.chance(0.3) {
                    self.ctx.unary(UnaryOp::Negate, &den)?
                } else {
                    den
                };
                if op == Power {
                    self.ctx.binary(op, &den, &num).map(Some)
                } else {
                    self.ctx.binary(op, &num, &den).map(Some)
                }
            }
            Atan2 => self.ctx.binary(op, &a, &b).map(Some),
            _ => Err(bug(format!("binary {op}"))),
        }
    }

    /// An exact value usable in a compare (converting inexact floats is not).
    fn pick_exact(&mut self) -> Option<Val> {
        self.pick(|v| v.p.is_exact() && v.ty != ElementType::Pred)
    }

    fn step_compare_select(&mut self) -> Result<Option<Val>> {
        let Some(a) = self.pick_exact() else {
            return Ok(None);
        };
        // An inexact partner cannot be compared: use a constant instead.
        let partner = self.partner(&a)?;
        let b = if partner.p.is_exact() {
            partner
        } else {
            self.ctx.splat(a.ty, 0.5, &a.dims)?
        };
        let dir = self.rng.pick(&[
            ComparisonDirection::Eq,
            ComparisonDirection::Ne,
            ComparisonDirection::Lt,
            ComparisonDirection::Le,
            ComparisonDirection::Gt,
            ComparisonDirection::Ge,
        ]);
        let total = self.rng.chance(0.2);
        let pred = self.ctx.compare(&a, &b, dir, total)?;
        if self.rng.chance(0.3) {
            return Ok(Some(pred));
        }
        // select between two values of any one type; a scalar pred sometimes.
        let ty = self.random_type();
        let t = self.obtain(&a.dims.clone(), ty)?;
        let f = self.obtain(&a.dims.clone(), ty)?;
        let pred = if self.rng.chance(0.15) && !a.dims.is_empty() && a.count() > 0 {
            let starts = vec![0; a.rank()];
            let limits = vec![1; a.rank()];
            let strides = vec![1; a.rank()];
            let one = self.ctx.b.slice(pred.v, &starts, &limits, &strides)?;
            let s = self.ctx.b.reshape(one, &[])?;
            self.ctx.val(s, pred.p)?
        } else {
            pred
        };
        self.ctx.select(&pred, &t, &f).map(Some)
    }

    fn step_clamp(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.ty != ElementType::Pred) else {
            return Ok(None);
        };
        let (a, b) = if is_float(x.ty) {
            (self.rng.uniform(-2.0, 1.0), self.rng.uniform(-1.0, 2.0))
        } else {
            (self.rng.range(-5, 5) as f64, self.rng.range(0, 10) as f64)
        };
        // Now and then lo > hi: clamp is min(max(x, lo), hi) regardless.
        let (lo, hi) = if self.rng.chance(0.9) {
            (a.min(b), a.max(b))
        } else {
            (a.max(b), a.min(b))
        };
        let dims = if self.rng.chance(0.5) {
            vec![]
        } else {
            x.dims.clone()
        };
        let lo = self.ctx.splat(x.ty, lo, &dims)?;
        let hi = self.ctx.splat(x.ty, hi, &dims)?;
        self.ctx.clamp(&lo, &x, &hi).map(Some)
    }

    fn step_convert(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|_| true) else {
            return Ok(None);
        };
        let to = self.random_type();
        self.coerce_type(&x, to)
    }

    fn step_broadcast(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() < 4) else {
            return Ok(None);
        };
        // Insert new dimensions at random positions around x's.
        let extra = 1 + self.rng.below(4 - x.rank());
        let mut roles: Vec<Option<usize>> = (0..x.rank()).map(Some).collect();
        for _ in 0..extra {
            let at = self.rng.below(roles.len() + 1);
            roles.insert(at, None);
        }
        let mut dims = Vec::new();
        let mut map = Vec::new();
        for (i, r) in roles.iter().enumerate() {
            match r {
                Some(d) => {
                    dims.push(x.dims[*d]);
                    map.push(i);
                }
                None => dims.push(1 + self.rng.below(4)),
            }
        }
        if dims.iter().product::<usize>() > MAX_ELEMENTS {
            return Ok(None);
        }
        self.ctx.broadcast_in_dim(&x, &dims, &map).map(Some)
    }

    fn step_reshape(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|_| true) else {
            return Ok(None);
        };
        let dims = refactor(&mut self.rng, x.count());
        let v = self.ctx.b.reshape(x.v, &dims)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_transpose(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 2) else {
            return Ok(None);
        };
        let mut perm: Vec<usize> = (0..x.rank()).collect();
        self.rng.shuffle(&mut perm);
        let v = self.ctx.b.transpose(x.v, &perm)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_slice(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let (mut starts, mut limits, mut strides) = (vec![], vec![], vec![]);
        for &d in &x.dims {
            let start = self.rng.below(d + 1);
            let limit = start + self.rng.below(d - start + 1);
            starts.push(start);
            limits.push(limit);
            strides.push(1 + self.rng.below(3));
        }
        let v = self.ctx.b.slice(x.v, &starts, &limits, &strides)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_concatenate(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let axis = self.rng.below(x.rank());
        let mut parts = vec![x.clone()];
        let mut p = x.p.moved();
        for _ in 0..1 + self.rng.below(2) {
            let mut dims = x.dims.clone();
            dims[axis] = self.rng.below(4);
            let y = self.obtain(&dims, x.ty)?;
            p = p.union(&y.p);
            parts.push(y);
        }
        if self.rng.chance(0.5) {
            parts.reverse();
        }
        let total: usize = parts.iter().map(|v| v.count()).sum();
        if total > MAX_ELEMENTS * 2 {
            return Ok(None);
        }
        let vals: Vec<Value> = parts.iter().map(|v| v.v).collect();
        let v = self.ctx.b.concatenate(&vals, axis)?;
        self.ctx.val(v, p).map(Some)
    }

    fn step_pad(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let mut config = Vec::new();
        let mut count = 1usize;
        for &d in &x.dims {
            let interior = if d > 1 && self.rng.chance(0.3) {
                1 + self.rng.below(2)
            } else {
                0
            };
            let size = if d == 0 { 0 } else { d + (d - 1) * interior };
            // Negative edges cut, but never below an empty dimension.
            let low = self.rng.range(-(size.min(2) as i64), 2);
            let high = self.rng.range(-((size as i64 + low).clamp(0, 2)), 2);
            let out = size as i64 + low + high;
            count *= out.max(0) as usize;
            config.push(PadDim {
                low,
                high,
                interior,
            });
        }
        if count > MAX_ELEMENTS * 2 {
            return Ok(None);
        }
        let value = if is_float(x.ty) {
            self.rng.pick(&[0.0, -1.0, 2.5])
        } else {
            self.rng.range(0, 3) as f64
        };
        let pad = self.ctx.constant_scalar(x.ty, value)?;
        let v = self.ctx.b.pad(x.v, pad.v, &config)?;
        self.ctx.val(v, x.p.union(&pad.p)).map(Some)
    }

    fn step_reverse(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let dims: Vec<usize> = (0..x.rank()).filter(|_| self.rng.chance(0.5)).collect();
        let v = self.ctx.b.reverse(x.v, &dims)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_iota(&mut self) -> Result<Option<Val>> {
        let rank = 1 + self.rng.below(3);
        let dims = self.random_dims(rank);
        let d = self.rng.below(rank);
        let ty = match self.random_type() {
            ElementType::Pred => ElementType::S32,
            t => t,
        };
        let n = dims[d].max(1) as f64 - 1.0;
        let v = self.ctx.b.iota(Shape::array(ty, dims), d)?;
        self.ctx.val(v, Props::exact(0.0, n)).map(Some)
    }

    /// A random subset of `0..rank` (sometimes all, sometimes none).
    fn random_axes(&mut self, rank: usize) -> Vec<usize> {
        match self.rng.weighted(&[2, 1, 6]) {
            0 => (0..rank).collect(),
            1 => vec![],
            _ => (0..rank).filter(|_| self.rng.chance(0.5)).collect(),
        }
    }

    fn step_reduce(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let axes = self.random_axes(x.rank());
        let n: usize = axes.iter().map(|&d| x.dims[d]).product();
        let op = if x.ty == ElementType::Pred {
            self.rng.pick(&[BinaryOp::And, BinaryOp::Or])
        } else {
            self.rng.pick(&[
                BinaryOp::Add,
                BinaryOp::Add,
                BinaryOp::Maximum,
                BinaryOp::Minimum,
                BinaryOp::Multiply,
            ])
        };
        let x = if is_float(x.ty) {
            match op {
                BinaryOp::Multiply if n > 12 => return Ok(None),
                BinaryOp::Multiply => self.tame(&x, 1.5)?,
                // Sums of more than two terms reassociate: keep them far from overflow.
                BinaryOp::Add if n > 2 || !x.p.is_exact() => {
                    let limit = if x.ty == ElementType::F16 { 32.0 } else { 1e3 };
                    self.tame(&x, limit)?
                }
                _ => x,
            }
        } else {
            x
        };
        self.ctx.reduce(&x, op, &axes).map(Some)
    }

    fn step_dot(&mut self) -> Result<Option<Val>> {
        let ty = {
            use ElementType::*;
            [F32, F64, S32, F16, BF16][self.rng.weighted(&[50, 15, 15, 10, 10])]
        };
        // Roles of dimensions: batch (b), contracting (c), free (f).
        let nb = self.rng.weighted(&[6, 3, 1]);
        let nc = self.rng.weighted(&[1, 8, 2]);
        let nf_l = self.rng.weighted(&[3, 6]);
        let nf_r = self.rng.weighted(&[3, 6]);
        let size = |rng: &mut Rng| -> usize {
            match rng.weighted(&[1, 3, 12]) {
                0 => 0,
                1 => 1,
                _ => 2 + rng.below(4),
            }
        };
        let b: Vec<usize> = (0..nb).map(|_| size(&mut self.rng)).collect();
        let c: Vec<usize> = (0..nc).map(|_| size(&mut self.rng)).collect();
        let fl: Vec<usize> = (0..nf_l).map(|_| size(&mut self.rng)).collect();
        let fr: Vec<usize> = (0..nf_r).map(|_| size(&mut self.rng)).collect();
        // Each operand's dimensions in a random order.
        let arrange = |rng: &mut Rng, free: &[usize]| {
            let mut roles: Vec<(char, usize)> = (0..nb)
                .map(|i| ('b', i))
                .chain((0..nc).map(|i| ('c', i)))
                .chain((0..free.len()).map(|i| ('f', i)))
                .collect();
            if rng.chance(0.6) {
                rng.shuffle(&mut roles);
            }
            roles
        };
        let lr = arrange(&mut self.rng, &fl);
        let rr = arrange(&mut self.rng, &fr);
        let dims_of = |roles: &[(char, usize)], free: &[usize]| -> Vec<usize> {
            roles
                .iter()
                .map(|&(r, i)| match r {
                    'b' => b[i],
                    'c' => c[i],
                    _ => free[i],
                })
                .collect()
        };
        let pos = |roles: &[(char, usize)], role: char, i: usize| {
            roles.iter().position(|&x| x == (role, i)).unwrap_or(0)
        };
        let ldims = dims_of(&lr, &fl);
        let rdims = dims_of(&rr, &fr);
        let out: usize = b.iter().chain(&fl).chain(&fr).product();
        if out > MAX_ELEMENTS
            || ldims.iter().product::<usize>() > MAX_ELEMENTS
            || rdims.iter().product::<usize>() > MAX_ELEMENTS
        {
            return Ok(None);
        }
        let dnums = DotDimensionNumbers {
            lhs_batch_dims: (0..nb).map(|i| pos(&lr, 'b', i)).collect(),
            rhs_batch_dims: (0..nb).map(|i| pos(&rr, 'b', i)).collect(),
            lhs_contracting_dims: (0..nc).map(|i| pos(&lr, 'c', i)).collect(),
            rhs_contracting_dims: (0..nc).map(|i| pos(&rr, 'c', i)).collect(),
        };
        let a = self.obtain(&ldims, ty)?;
        let bb = self.obtain(&rdims, ty)?;
        let limit = if ty == ElementType::F16 { 4.0 } else { 8.0 };
        let a = self.tame(&a, limit)?;
        let bb = self.tame(&bb, limit)?;
        self.ctx.dot(&a, &bb, dnums).map(Some)
    }

    /// s32 scalar start indices for each dimension, some out of range (XLA clamps).
    fn start_indices(&mut self, dims: &[usize]) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        for &d in dims {
            let (lo, hi) = (-2, d as i64 + 2);
            let v = if self.args.len() < MAX_PARAMS && self.rng.chance(0.4) {
                self.index_param(lo, hi)?
            } else {
                let x = self.rng.range(lo, hi) as f64;
                self.ctx.constant_scalar(ElementType::S32, x)?
            };
            out.push(v.v);
        }
        Ok(out)
    }

    fn step_dynamic_slice(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let sizes: Vec<usize> = x.dims.iter().map(|&d| self.rng.below(d + 1)).collect();
        let starts = self.start_indices(&x.dims)?;
        let v = self.ctx.b.dynamic_slice(x.v, &starts, &sizes)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_dynamic_update_slice(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.rank() >= 1) else {
            return Ok(None);
        };
        let sizes: Vec<usize> = x.dims.iter().map(|&d| self.rng.below(d + 1)).collect();
        let update = self.obtain(&sizes, x.ty)?;
        let starts = self.start_indices(&x.dims)?;
        let v = self.ctx.b.dynamic_update_slice(x.v, update.v, &starts)?;
        self.ctx.val(v, x.p.union(&update.p)).map(Some)
    }

    fn step_gather(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| (1..=3).contains(&v.rank()) && v.dims.iter().all(|&d| d > 0))
        else {
            return Ok(None);
        };
        // Rows along `axis`, by an index vector of m entries (some out of range).
        let axis = self.rng.below(x.rank());
        let m = self.rng.below(5);
        let n = x.dims[axis] as i64;
        let idx: Vec<i32> = (0..m).map(|_| self.rng.range(-1, n) as i32).collect();
        let indices = if self.args.len() < MAX_PARAMS && self.rng.chance(0.5) {
            let number = self.args.len();
            let v = self.ctx.b.parameter(
                number,
                Shape::array(ElementType::S32, vec![m]),
                &format!("idx{number}"),
            )?;
            self.args.push(Literal::vector(&idx));
            v
        } else {
            self.ctx.b.constant(Literal::vector(&idx))?
        };
        let batch_pos = self.rng.below(x.rank());
        let offset_dims: Vec<usize> = (0..x.rank()).filter(|&i| i != batch_pos).collect();
        let mut slice_sizes = x.dims.clone();
        slice_sizes[axis] = 1;
        let dnums = GatherDimensionNumbers {
            offset_dims,
            collapsed_slice_dims: vec![axis],
            start_index_map: vec![axis],
            operand_batching_dims: vec![],
            start_indices_batching_dims: vec![],
            index_vector_dim: 1,
        };
        let v = self
            .ctx
            .b
            .gather(x.v, indices, dnums, &slice_sizes, false)?;
        self.ctx.val(v, x.p.moved()).map(Some)
    }

    fn step_sanitize(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| is_float(v.ty) && !v.p.finite) else {
            return Ok(None);
        };
        self.tame(&x, 8.0).map(Some)
    }

    fn step_softmax(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| is_float(v.ty) && v.rank() >= 1 && v.count() > 0) else {
            return Ok(None);
        };
        let axis = self.rng.below(x.rank());
        let x = self.tame(&x, 2.0)?;
        let keep: Vec<usize> = (0..x.rank()).filter(|&d| d != axis).collect();
        let m = self.ctx.reduce(&x, BinaryOp::Maximum, &[axis])?;
        let mb = self.ctx.broadcast_in_dim(&m, &x.dims, &keep)?;
        let mut s = self.ctx.binary(BinaryOp::Subtract, &x, &mb)?;
        // x - max(x) <= 0, and rounding keeps it so.
        s.p.hi = s.p.hi.min(0.0);
        let e = self.ctx.unary(UnaryOp::Exp, &s)?;
        let z = self.ctx.reduce(&e, BinaryOp::Add, &[axis])?;
        let mut zb = self.ctx.broadcast_in_dim(&z, &x.dims, &keep)?;
        // Each sum has at least one term exp(x - max) = 1 (up to rounding).
        zb.p.lo = zb.p.lo.max(1.0 - 0.01);
        self.ctx.binary(BinaryOp::Divide, &e, &zb).map(Some)
    }

    fn step_layernorm(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| is_float(v.ty) && v.rank() >= 1 && v.count() > 0) else {
            return Ok(None);
        };
        let x = self.tame(&x, 2.0)?;
        let ty = x.ty;
        let axis = x.rank() - 1;
        let n = x.dims[axis] as f64;
        let keep: Vec<usize> = (0..axis).collect();
        let sum = self.ctx.reduce(&x, BinaryOp::Add, &[axis])?;
        let inv_n = self.ctx.splat(ty, 1.0 / n, &sum.dims)?;
        let mean = self.ctx.binary(BinaryOp::Multiply, &sum, &inv_n)?;
        let mb = self.ctx.broadcast_in_dim(&mean, &x.dims, &keep)?;
        let xc = self.ctx.binary(BinaryOp::Subtract, &x, &mb)?;
        let sq = self.ctx.binary(BinaryOp::Multiply, &xc, &xc)?;
        let ss = self.ctx.reduce(&sq, BinaryOp::Add, &[axis])?;
        let var = self.ctx.binary(BinaryOp::Multiply, &ss, &inv_n)?;
        let epsilon = self.ctx.splat(ty, self.rng.pick(&[0.5, 1.0]), &var.dims)?;
        let mut ve = self.ctx.binary(BinaryOp::Add, &var, &epsilon)?;
        ve.p.lo = ve.p.lo.max(epsilon.p.lo * 0.99); // a variance is never negative
        let r = self.ctx.unary(UnaryOp::Rsqrt, &ve)?;
        let rb = self.ctx.broadcast_in_dim(&r, &x.dims, &keep)?;
        self.ctx.binary(BinaryOp::Multiply, &xc, &rb).map(Some)
    }

    fn step_logsumexp(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| is_float(v.ty) && v.rank() >= 1 && v.count() > 0) else {
            return Ok(None);
        };
        let x = self.tame(&x, 2.0)?;
        let axis = self.rng.below(x.rank());
        let keep: Vec<usize> = (0..x.rank()).filter(|&d| d != axis).collect();
        let m = self.ctx.reduce(&x, BinaryOp::Maximum, &[axis])?;
        let mb = self.ctx.broadcast_in_dim(&m, &x.dims, &keep)?;
        let mut s = self.ctx.binary(BinaryOp::Subtract, &x, &mb)?;
        s.p.hi = s.p.hi.min(0.0);
        let e = self.ctx.unary(UnaryOp::Exp, &s)?;
        let mut z = self.ctx.reduce(&e, BinaryOp::Add, &[axis])?;
        z.p.lo = z.p.lo.max(0.99);
        let l = self.ctx.unary(UnaryOp::Log, &z)?;
        self.ctx.binary(BinaryOp::Add, &l, &m).map(Some)
    }

    fn step_while(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.count() <= 64) else {
            return Ok(None);
        };
        let x = self.tame(&x, 4.0)?;
        let transform = self.rng.below(TRANSFORMS);
        let (a, c) = (
            self.rng.pick(&[0.5, 0.9, -0.75, 1.0]),
            self.rng.pick(&[0.25, -1.0, 0.1]),
        );
        // Trip count: a constant, or a runtime parameter (its value is known here).
        let from_param = self.args.len() < MAX_PARAMS && self.rng.chance(0.3);
        let limit = if from_param {
            self.index_param(0, 5)?
        } else {
            let n = self.rng.range(0, 5) as f64;
            self.ctx.constant_scalar(ElementType::S32, n)?
        };
        let trips = limit.p.lo as usize;

        // Props after each iteration: the body applied to the previous props.
        let mut p = x.p;
        for _ in 0..trips {
            let mut scratch = Ctx::new("scratch");
            let xv = scratch
                .b
                .parameter(0, Shape::array(x.ty, x.dims.clone()), "x")?;
            let cv = scratch
                .b
                .parameter(1, Shape::scalar(ElementType::S32), "i")?;
            let xv = scratch.val(xv, p)?;
            let cv = scratch.val(cv, Props::exact(0.0, 5.0))?;
            p = apply_transform(&mut scratch, transform, &xv, Some(&cv), a, c)?.p;
        }
        let result_p = if trips == 0 { x.p } else { p };

        let s32 = Shape::scalar(ElementType::S32);
        let xs = Shape::array(x.ty, x.dims.clone());
        let state = Shape::tuple(vec![s32.clone(), s32.clone(), xs.clone()]);
        let cond = {
            let mut b = HloBuilder::new(self.fresh_name("cond"));
            let s = b.parameter(0, state.clone(), "state")?;
            let i = b.get_tuple_element(s, 0)?;
            let n = b.get_tuple_element(s, 1)?;
            let r = b.lt(i, n)?;
            b.build_computation(r)?
        };
        let body = {
            let mut ctx = Ctx::new(&self.fresh_name("body"));
            let s = ctx.b.parameter(0, state.clone(), "state")?;
            let i = ctx.b.get_tuple_element(s, 0)?;
            let n = ctx.b.get_tuple_element(s, 1)?;
            let xv = ctx.b.get_tuple_element(s, 2)?;
            let xv = ctx.val(xv, result_p.union(&x.p))?;
            let iv = ctx.val(i, Props::exact(0.0, 5.0))?;
            let y = apply_transform(&mut ctx, transform, &xv, Some(&iv), a, c)?;
            let one = ctx.b.constant(Literal::scalar(1i32))?;
            let i2 = ctx.b.add(i, one)?;
            let t = ctx.b.tuple(&[i2, n, y.v])?;
            ctx.b.build_computation(t)?
        };
        let zero = self.ctx.b.constant(Literal::scalar(0i32))?;
        let init = self.ctx.b.tuple(&[zero, limit.v, x.v])?;
        let w = self.ctx.b.while_loop(&cond, &body, init)?;
        let out = self.ctx.b.get_tuple_element(w, 2)?;
        self.ctx.val(out, result_p).map(Some)
    }

    fn step_conditional(&mut self) -> Result<Option<Val>> {
        let Some(x) = self.pick(|v| v.count() <= 128) else {
            return Ok(None);
        };
        let x = self.tame(&x, 4.0)?;
        let branches = 2 + self.rng.below(2);
        let by_pred = branches == 2 && self.rng.chance(0.5);
        // The selector: a runtime parameter, or computed from an exact pool value.
        let selector = if by_pred {
            if let Some(e) =
                self.pick(|v| v.p.is_exact() && v.ty != ElementType::Pred && v.count() > 0)
            {
                let first = self.first_element(&e)?;
                let zero = self.ctx.constant_scalar(e.ty, 0.0)?;
                self.ctx
                    .compare(&first, &zero, ComparisonDirection::Gt, false)?
            } else {
                let i = self.index_param(0, 1)?;
                let zero = self.ctx.constant_scalar(ElementType::S32, 0.0)?;
                self.ctx
                    .compare(&i, &zero, ComparisonDirection::Ne, false)?
            }
        } else if self.args.len() < MAX_PARAMS && self.rng.chance(0.6) {
            self.index_param(0, branches as i64 - 1)?
        } else if let Some(e) = self.pick(|v| v.p.is_exact() && !is_float(v.ty) && v.count() > 0) {
            let first = self.first_element(&e)?;
            let first = self.ctx.convert(&first, ElementType::S32)?;
            let lo = self.ctx.constant_scalar(ElementType::S32, 0.0)?;
            let hi = self
                .ctx
                .constant_scalar(ElementType::S32, branches as f64 - 1.0)?;
            self.ctx.clamp(&lo, &first, &hi)?
        } else {
            self.index_param(0, branches as i64 - 1)?
        };
        let mut comps = Vec::new();
        let mut p: Option<Props> = None;
        for _ in 0..branches {
            let transform = self.rng.below(TRANSFORMS);
            let a = self.rng.pick(&[0.5, 2.0, -1.0]);
            let c = self.rng.pick(&[0.0, 1.0, -0.5]);
            let mut ctx = Ctx::new(&self.fresh_name("branch"));
            let xv = ctx
                .b
                .parameter(0, Shape::array(x.ty, x.dims.clone()), "x")?;
            let xv = ctx.val(xv, x.p)?;
            let y = apply_transform(&mut ctx, transform, &xv, None, a, c)?;
            p = Some(match p {
                None => y.p,
                Some(q) => q.union(&y.p),
            });
            comps.push(ctx.b.build_computation(y.v)?);
        }
        let refs: Vec<&Computation> = comps.iter().collect();
        let operands = vec![x.v; branches];
        let v = self.ctx.b.conditional(selector.v, &refs, &operands)?;
        let p = p.ok_or_else(|| bug("conditional without branches"))?;
        self.ctx.val(v, p).map(Some)
    }

    /// The first element of `x` as a scalar.
    fn first_element(&mut self, x: &Val) -> Result<Val> {
        if x.rank() == 0 {
            return Ok(x.clone());
        }
        let r = x.rank();
        let s = self
            .ctx
            .b
            .slice(x.v, &vec![0; r], &vec![1; r], &vec![1; r])?;
        let s = self.ctx.b.reshape(s, &[])?;
        self.ctx.val(s, x.p.moved())
    }
}

/// Number of loop-body / branch transforms [`apply_transform`] knows.
const TRANSFORMS: usize = 5;

/// A small shape- and type-preserving computation of `x` (and optionally a loop
/// counter `i`), used as loop bodies and conditional branches. Its structure
/// depends only on `which`, `a`, `c` and `x`'s type — never on `x`'s props — so
/// applying it to successive props yields the props of successive iterations.
fn apply_transform(
    ctx: &mut Ctx,
    which: usize,
    x: &Val,
    i: Option<&Val>,
    a: f64,
    c: f64,
) -> Result<Val> {
    use BinaryOp::*;
    let ty = x.ty;
    let dims = x.dims.clone();
    let counter = |ctx: &mut Ctx| -> Result<Option<Val>> {
        match i {
            Some(i) => {
                let ci = ctx.convert(i, ty)?;
                let v = ctx.b.broadcast(ci.v, &dims)?;
                ctx.val(v, ci.p).map(Some)
            }
            None => Ok(None),
        }
    };
    if ty == ElementType::Pred {
        let y = ctx.unary(UnaryOp::Not, x)?;
        return match (which % 2, counter(ctx)?) {
            (1, Some(ci)) => ctx.binary(Xor, &y, &ci),
            _ => Ok(y),
        };
    }
    if !is_float(ty) {
        let k = ctx.splat(ty, 3.0, &dims)?;
        return match which {
            0 => {
                let m = ctx.binary(Multiply, x, &k)?;
                let one = ctx.splat(ty, 1.0, &dims)?;
                ctx.binary(Add, &m, &one)
            }
            1 => {
                let s = ctx.splat(ty, 2.0, &dims)?;
                let sh = ctx.binary(ShiftRightLogical, x, &s)?;
                ctx.binary(Xor, x, &sh)
            }
            2 => {
                let seven = ctx.splat(ty, 7.0, &dims)?;
                let r = ctx.binary(Remainder, x, &seven)?;
                match counter(ctx)? {
                    Some(ci) => ctx.binary(Subtract, &r, &ci),
                    None => Ok(r),
                }
            }
            3 => {
                let n = ctx.unary(UnaryOp::Negate, x)?;
                ctx.binary(Maximum, x, &n)
            }
            _ => match counter(ctx)? {
                Some(ci) => ctx.binary(Add, x, &ci),
                None => ctx.binary(Subtract, x, &k),
            },
        };
    }
    // Floats: clamp first so every iteration sees the same bound.
    let lo = ctx.splat(ty, -4.0, &dims)?;
    let hi = ctx.splat(ty, 4.0, &dims)?;
    let x = ctx.clamp(&lo, x, &hi)?;
    let av = ctx.splat(ty, a, &dims)?;
    let cv = ctx.splat(ty, c, &dims)?;
    let affine = |ctx: &mut Ctx, x: &Val| -> Result<Val> {
        let m = ctx.binary(Multiply, x, &av)?;
        ctx.binary(Add, &m, &cv)
    };
    match which {
        0 => {
            let y = affine(ctx, &x)?;
            ctx.unary(UnaryOp::Tanh, &y)
        }
        1 => {
            let y = affine(ctx, &x)?;
            let y = match counter(ctx)? {
                Some(ci) => {
                    let tenth = ctx.splat(ty, 0.125, &dims)?;
                    let s = ctx.binary(Multiply, &ci, &tenth)?;
                    ctx.binary(Add, &y, &s)?
                }
                None => y,
            };
            let lo = ctx.splat(ty, -3.0, &dims)?;
            let hi = ctx.splat(ty, 3.0, &dims)?;
            ctx.clamp(&lo, &y, &hi)
        }
        2 => {
            let s = ctx.unary(UnaryOp::Sin, &x)?;
            let m = ctx.binary(Multiply, &x, &av)?;
            let y = ctx.binary(Add, &s, &m)?;
            let lo = ctx.splat(ty, -3.0, &dims)?;
            let hi = ctx.splat(ty, 3.0, &dims)?;
            ctx.clamp(&lo, &y, &hi)
        }
        3 => {
            let l = ctx.unary(UnaryOp::Logistic, &x)?;
            ctx.binary(Subtract, &l, &cv)
        }
        _ => {
            let m = ctx.binary(Maximum, &x, &cv)?;
            ctx.binary(Multiply, &m, &av)
        }
    }
}

/// How `small` embeds in `big` as a broadcast: `small`'s dimension `i` becomes
/// `big`'s dimension `map[i]` (increasing), with equal sizes.
fn embedding(small: &[usize], big: &[usize]) -> Option<Vec<usize>> {
    if small.len() >= big.len() {
        return None;
    }
    let mut map = Vec::new();
    let mut j = 0;
    for &s in small {
        while j < big.len() && big[j] != s {
            j += 1;
        }
        if j == big.len() {
            return None;
        }
        map.push(j);
        j += 1;
    }
    Some(map)
}

/// Random dims with `count` elements (ranks 0–4, size-1 dims inserted).
fn refactor(rng: &mut Rng, count: usize) -> Vec<usize> {
    if count == 0 {
        let mut dims: Vec<usize> = (0..1 + rng.below(3)).map(|_| rng.below(3)).collect();
        let at = rng.below(dims.len());
        dims[at] = 0;
        return dims;
    }
    // Split count into prime factors, then group them randomly.
    let mut factors = Vec::new();
    let mut n = count;
    let mut p = 2;
    while n > 1 {
        while n.is_multiple_of(p) {
            factors.push(p);
            n /= p;
        }
        p += 1;
    }
    rng.shuffle(&mut factors);
    let rank = if factors.is_empty() {
        rng.below(3)
    } else {
        1 + rng.below(4)
    };
    let mut dims = vec![1usize; rank.max(1)];
    for f in factors {
        let at = rng.below(dims.len());
        dims[at] *= f;
    }
    if count == 1 && rank == 0 {
        return vec![];
    }
    dims
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_program() {
        for seed in 0..20 {
            let a = generate(seed).unwrap();
            let b = generate(seed).unwrap();
            assert_eq!(a.module.to_text(), b.module.to_text());
            assert_eq!(a.args, b.args);
        }
    }

    #[test]
    fn every_program_verifies_and_matches_its_signature() {
        for seed in 0..300 {
            let p = generate(seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            platform_api::hlo::verifier::verify_module(&p.module)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let sig = p.module.entry_program_shape();
            assert_eq!(sig.parameters.len(), p.args.len(), "seed {seed}");
            for (s, a) in sig.parameters.iter().zip(&p.args) {
                assert!(s.compatible(a.shape()), "seed {seed}: {s} vs {}", a.shape());
            }
            let leaves = sig.result.leaves().len();
            assert_eq!(leaves, p.outputs.len(), "seed {seed}");
        }
    }

    /// What a backend implementing few ops might support.
    const SMALL: [&str; 10] = [
        "add",
        "multiply",
        "subtract",
        "maximum",
        "negate",
        "abs",
        "constant",
        "broadcast",
        "convert",
        "reshape",
    ];

    #[test]
    fn restricted_programs_use_only_the_given_ops() {
        let mut used = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let p = generate_with_ops(seed, &SMALL).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            platform_api::hlo::verifier::verify_module(&p.module)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let ops = opcodes_of(&p.module);
            assert!(
                ops.iter().any(|op| !ALWAYS_ALLOWED.contains(op)),
                "seed {seed} computes nothing:\n{}",
                p.module.to_text()
            );
            for op in &ops {
                assert!(
                    SMALL.contains(op) || ALWAYS_ALLOWED.contains(op),
                    "seed {seed} uses {op}:\n{}",
                    p.module.to_text()
                );
            }
            let sig = p.module.entry_program_shape();
            assert_eq!(sig.parameters.len(), p.args.len(), "seed {seed}");
            assert_eq!(sig.result.leaves().len(), p.outputs.len(), "seed {seed}");
            let again = generate_with_ops(seed, &SMALL).unwrap();
            assert_eq!(p.module.to_text(), again.module.to_text(), "seed {seed}");
            used.extend(ops);
        }
        // Not only parameters: the programs compute with the allowed ops.
        for op in ["add", "multiply", "negate"] {
            assert!(used.contains(op), "no program used {op}: {used:?}");
        }
    }

    #[test]
    fn restricted_generation_rejects_unknown_opcodes() {
        let err = generate_with_ops(0, &["add", "fused-multiply-add"]).unwrap_err();
        assert!(err.message().contains("fused-multiply-add"), "{err}");
    }

    #[test]
    fn refactor_keeps_the_count() {
        let mut rng = Rng::new(1);
        for count in [0usize, 1, 2, 7, 12, 60, 240] {
            for _ in 0..20 {
                let d = refactor(&mut rng, count);
                assert_eq!(d.iter().product::<usize>(), count, "{d:?}");
            }
        }
    }

    #[test]
    fn embedding_finds_increasing_maps() {
        assert_eq!(embedding(&[3], &[2, 3, 4]), Some(vec![1]));
        assert_eq!(embedding(&[2, 4], &[2, 3, 4]), Some(vec![0, 2]));
        assert_eq!(embedding(&[4, 2], &[2, 3, 4]), None);
        assert_eq!(embedding(&[], &[5]), Some(vec![]));
    }
}
