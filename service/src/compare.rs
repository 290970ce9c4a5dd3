//! Comparing a result with a reference.
//!
//! Two rules:
//! * **The scale rule** (the default of `hlorun compare`): the reference is the
//!   module evaluated in f64 with a per-element error scale
//!   (`platform_api::evaluator::shadow`, see [`shadow_reference`]). A floating
//!   element passes when `|got - want| <= max_ulps` ULPs of its element type at
//!   the magnitude of its scale (never below `|want|`, since the result is
//!   itself rounded to that type): [`compare_scaled`], default
//!   [`DEFAULT_MAX_ULPS`]. The scale of a sum of `n` terms is
//!   `sqrt(n)·(|y| + sqrt(Σ t²))` plus its operands' scales in quadrature, so a threshold that does not
//!   depend on `n` accepts every correct summation order and FMA use while a
//!   dropped term, a wrong index or a transposed operand, each of which moves a
//!   result by a sizeable fraction of its terms, fails by orders of magnitude.
//! * **The tolerance rule** (the conformance corpus, and `compare` with
//!   `--rtol`/`--atol`; `tests/conformance/README.md`):
//!   integer and `pred` outputs must be equal element for element; floating
//!   outputs must have the same shape, NaN exactly where the reference has
//!   NaN, the same infinities, and elsewhere `|got - want| <= atol + rtol *
//!   |want|`. Complex numbers are held to this rule in each component.
//!
//! Under both rules integers and `pred` must be equal and NaN/infinities must
//! match. Results are compared leaf by leaf (a tuple flattened in preorder, as XLA
//! flattens results). Each leaf reports its largest errors and its offending
//! elements, so a mismatch report says where to look.

use platform_api::evaluator::shadow::{
    self, component_type, significand_bits, unbounded_magnitude, ShadowOutput,
};
use platform_api::evaluator::{EvalHooks, RunContext};
use platform_api::{
    CompileOptions, ElementType, Error, HloInstruction, HloModule, Literal, Result, Scalar, Shape,
};
use std::fmt;
use std::sync::Arc;

/// Allowed error for floating outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Default for Tolerance {
    /// Suits f32 programs whose reductions may sum in a different order.
    fn default() -> Self {
        Tolerance {
            rtol: 1e-4,
            atol: 1e-5,
        }
    }
}

/// How one output leaf compares.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafComparison {
    /// The leaf's position among the flattened outputs.
    pub index: usize,
    /// The reference's shape.
    pub shape: Shape,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Elements outside the tolerance (or unequal, for integers).
    pub mismatches: usize,
    /// Why the leaf fails, for the first failing element (or a shape mismatch).
    pub first_failure: Option<String>,
    /// The row-major index of the first failing element; `None` when the leaf
    /// passes or its shape is wrong.
    pub first_failing_element: Option<usize>,
}

impl LeafComparison {
    pub fn ok(&self) -> bool {
        self.first_failure.is_none()
    }
}

impl fmt::Display for LeafComparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "out{} {}: max abs error {:.3e}, max rel error {:.3e}",
            self.index, self.shape, self.max_abs_error, self.max_rel_error
        )?;
        match &self.first_failure {
            None => f.write_str(", ok"),
            Some(why) => write!(
                f,
                ", MISMATCH in {} element(s); first: {why}",
                self.mismatches
            ),
        }
    }
}

/// The multi-index of a row-major linear index, for messages.
fn index_text(dims: &[usize], mut linear: usize) -> String {
    let mut index = vec![0usize; dims.len()];
    for (slot, &d) in index.iter_mut().zip(dims).rev() {
        if d > 0 {
            *slot = linear % d;
            linear /= d;
        }
    }
    format!("{index:?}")
}

/// Components of a floating element (one for reals, two for complex).
fn float_parts(s: &Scalar) -> [f64; 2] {
    match *s {
        Scalar::C64(c) => [f64::from(c.re), f64::from(c.im)],
        Scalar::C128(c) => [c.re, c.im],
        _ => [s.to_f64_lossy(), 0.0],
    }
}

/// An integer or pred element as an exact i128.
fn int_value(s: &Scalar) -> i128 {
    match *s {
        Scalar::U64(v) => i128::from(v),
        _ => i128::from(s.to_i64().unwrap_or(0)),
    }
}

/// Compares one array leaf.
pub fn compare_arrays(
    index: usize,
    got: &Literal,
    want: &Literal,
    tol: Tolerance,
) -> Result<LeafComparison> {
    let want_shape = want.shape().without_layout();
    let mut report = LeafComparison {
        index,
        shape: want_shape.clone(),
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        mismatches: 0,
        first_failure: None,
        first_failing_element: None,
    };
    if !got.shape().compatible(want.shape()) {
        report.mismatches = want.element_count();
        report.first_failure = Some(format!(
            "shape {} where {want_shape} was expected",
            got.shape().without_layout()
        ));
        return Ok(report);
    }
    let ty = want.element_type().ok_or_else(|| {
        Error::invalid_argument(format!("cannot compare values of shape {want_shape}"))
    })?;
    let components = if ty.is_complex() { 2 } else { 1 };
    let dims = want.dims().to_vec();
    for i in 0..want.element_count() {
        let (g, w) = (got.get(i)?, want.get(i)?);
        let failure = if ty.is_integer() || ty == ElementType::Pred {
            let (gi, wi) = (int_value(&g), int_value(&w));
            let abs = (gi - wi).unsigned_abs() as f64;
            report.max_abs_error = report.max_abs_error.max(abs);
            if wi != 0 {
                report.max_rel_error = report.max_rel_error.max(abs / (wi.unsigned_abs() as f64));
            }
            (gi != wi).then(|| format!("at {}: got {g}, want {w}", index_text(&dims, i)))
        } else {
            let (gp, wp) = (float_parts(&g), float_parts(&w));
            let mut failure = None;
            for c in 0..components {
                let (gv, wv) = (gp[c], wp[c]);
                let bad = if wv.is_nan() || gv.is_nan() {
                    wv.is_nan() != gv.is_nan()
                } else if wv.is_infinite() || gv.is_infinite() {
                    gv != wv
                } else {
                    let abs = (gv - wv).abs();
                    report.max_abs_error = report.max_abs_error.max(abs);
                    if wv != 0.0 {
                        report.max_rel_error = report.max_rel_error.max(abs / wv.abs());
                    }
                    abs > tol.atol + tol.rtol * wv.abs()
                };
                if bad && failure.is_none() {
                    failure = Some(format!("at {}: got {g}, want {w}", index_text(&dims, i)));
                }
            }
            failure
        };
        if let Some(why) = failure {
            report.mismatches += 1;
            if report.first_failure.is_none() {
                report.first_failure = Some(why);
                report.first_failing_element = Some(i);
            }
        }
    }
    Ok(report)
}

/// Compares two results leaf by leaf (tuples flattened in preorder).
pub fn compare_results(
    got: &Literal,
    want: &Literal,
    tol: Tolerance,
) -> Result<Vec<LeafComparison>> {
    let got_leaves = got.clone().flatten_leaves();
    let want_leaves = want.clone().flatten_leaves();
    if got_leaves.len() != want_leaves.len() {
        return Err(Error::invalid_argument(format!(
            "the result has {} output(s) ({}) but the reference has {} ({})",
            got_leaves.len(),
            got.shape().without_layout(),
            want_leaves.len(),
            want.shape().without_layout()
        )));
    }
    got_leaves
        .iter()
        .zip(&want_leaves)
        .enumerate()
        .map(|(i, (g, w))| compare_arrays(i, g, w, tol))
        .collect()
}

/// The default threshold of the scale rule, in ULPs of the error scale.
///
/// Chosen from measurement (`docs/architecture.md`): the Host backend's worst
/// element over the bench programs and the conformance corpus stays below a
/// few ULPs of the scale; the seeded bugs of `tests/tests/compare_scale.rs` sit
/// at hundreds to millions.
pub const DEFAULT_MAX_ULPS: f64 = 16.0;

/// The scale rule: a floating element passes within `max_ulps` ULPs of its
/// element type at the magnitude of its error scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleRule {
    pub max_ulps: f64,
}

impl Default for ScaleRule {
    fn default() -> Self {
        ScaleRule {
            max_ulps: DEFAULT_MAX_ULPS,
        }
    }
}

impl fmt::Display for ScaleRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "|got - want| <= {} ULPs of the element type at max(scale, |want|); \
             want and scale from the f64 shadow evaluation",
            self.max_ulps
        )
    }
}

/// One element of a scaled comparison, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementError {
    /// The row-major index.
    pub linear: usize,
    /// The multi-index as text.
    pub index: String,
    pub got: f64,
    pub want: f64,
    /// The error scale in the element type's own units (its magnitude).
    pub scale: f64,
    /// `|got - want|` in ULPs of the element type at `max(scale, |want|)`;
    /// infinite for a NaN/infinity mismatch or an unequal integer.
    pub ulps: f64,
}

impl fmt::Display for ElementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale.is_infinite() {
            return write!(
                f,
                "at {}: got {}, want {}, no finite error bound, a different class",
                self.index, self.got, self.want
            );
        }
        write!(
            f,
            "at {}: got {}, want {}, scale {:.3e}, {:.1} ULPs",
            self.index, self.got, self.want, self.scale, self.ulps
        )
    }
}

/// How one output leaf compares under the scale rule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledComparison {
    pub index: usize,
    pub shape: Shape,
    pub rule: ScaleRule,
    /// The largest error in ULPs of the scale over the leaf.
    pub max_ulps: f64,
    /// Elements over the threshold.
    pub mismatches: usize,
    /// The worst elements (at most [`WORST_KEPT`]), worst first.
    pub worst: Vec<ElementError>,
    /// A structural failure (shape, type).
    pub failure: Option<String>,
    /// Elements without a finite error bound, never measured in ULPs: those
    /// whose scale covers the whole range of their type are judged by class
    /// alone (finite, NaN, the same infinity); those whose class rounding
    /// decides (an infinite scale: an operand within its error of a pole or
    /// a domain edge) are not judged.
    pub unbounded: usize,
    /// The instruction that made the scale unbounded on the way to this
    /// output, as the shadow evaluation names it.
    pub unbounded_origin: Option<String>,
    /// Why XLA leaves this output undefined, if it does: then its elements
    /// are not judged (a shape mismatch still fails).
    pub undefined: Option<String>,
}

/// How many of the worst elements a leaf keeps for its report.
pub const WORST_KEPT: usize = 3;

impl ScaledComparison {
    pub fn ok(&self) -> bool {
        self.failure.is_none() && (self.mismatches == 0 || self.undefined.is_some())
    }
}

impl fmt::Display for ScaledComparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "out{} {}: worst {:.2} ULPs of the scale (limit {})",
            self.index, self.shape, self.max_ulps, self.rule.max_ulps
        )?;
        if let Some(why) = &self.failure {
            return write!(f, ", MISMATCH: {why}");
        }
        if let Some(why) = &self.undefined {
            write!(
                f,
                ", undefined: {why}; not judged ({} element(s) differ from the reference)",
                self.mismatches
            )?;
        } else if self.mismatches == 0 {
            f.write_str(", ok")?;
        } else {
            write!(f, ", MISMATCH in {} element(s)", self.mismatches)?;
        }
        if self.unbounded > 0 {
            write!(
                f,
                "\n    {} element(s) have no finite error bound (their scale reached the \
                 range of {}",
                self.unbounded,
                self.shape
                    .element_type()
                    .map_or("the type".to_string(), |t| t.to_string())
            )?;
            if let Some(origin) = &self.unbounded_origin {
                write!(f, " at {origin}")?;
            }
            f.write_str(
                "): judged by class instead (finite, NaN, the same infinity) where the bound \
                 covers the type's range, and not judged where rounding decides the class \
                 itself (an operand within its error of a pole or a domain edge); never by ULPs",
            )?;
        }
        for e in &self.worst {
            write!(f, "\n    {e}")?;
        }
        Ok(())
    }
}

/// The largest finite value of a float type, beyond which a reference value
/// rounds to infinity in that type.
fn max_finite(ty: ElementType) -> f64 {
    match ty {
        ElementType::F16 => 65504.0,
        ElementType::BF16 => 3.3895313892515355e38,
        ElementType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}

/// The ULP of a type with `p` significand bits at magnitude `x`
/// (`2^(floor(log2 x) - (p - 1))`, floored at the smallest normal's).
fn ulp_at(x: f64, p: i32, ty: ElementType) -> f64 {
    let min_exp = match ty {
        ElementType::F16 => -14,
        ElementType::BF16 | ElementType::F32 => -126,
        _ => -1022,
    };
    let e = if x > 0.0 && x.is_finite() {
        (x.log2().floor() as i32).max(min_exp)
    } else {
        min_exp
    };
    2f64.powi(e - (p - 1))
}

/// Compares one leaf: `got` (the platform's, in the program's type), `want`
/// (the shadow value, or an expected array), and `scale` (the shadow's scale,
/// in f32-roundoff units).
pub fn compare_scaled_leaf(
    index: usize,
    got: &Literal,
    want: &Literal,
    scale: &Literal,
    rule: ScaleRule,
) -> Result<ScaledComparison> {
    let shape = got.shape().without_layout();
    let mut report = ScaledComparison {
        index,
        shape: shape.clone(),
        rule,
        max_ulps: 0.0,
        mismatches: 0,
        worst: Vec::new(),
        failure: None,
        unbounded: 0,
        unbounded_origin: None,
        undefined: None,
    };
    if got.dims() != want.dims() || got.dims() != scale.dims() {
        report.failure = Some(format!(
            "shape {shape} where {} was expected",
            want.shape().without_layout()
        ));
        return Ok(report);
    }
    let ty = got.element_type().ok_or_else(|| {
        Error::invalid_argument(format!("cannot compare values of shape {shape}"))
    })?;
    // Complex values are judged like reals, on the modulus of the
    // difference, in ULPs of their parts' type.
    let part = component_type(ty);
    let dims = got.dims().to_vec();
    let p = significand_bits(part).filter(|_| part.is_float());
    let scale_data = scale.data::<f64>()?;
    for i in 0..got.element_count() {
        let (g, w) = (got.get(i)?, want.get(i)?);
        let element = |ulps: f64, s: f64| ElementError {
            linear: i,
            index: index_text(&dims, i),
            got: g.to_f64_lossy(),
            want: w.to_f64_lossy(),
            scale: s,
            ulps,
        };
        let (e, unbounded) = match p {
            None => {
                // Infinite: the integer came from a value whose class
                // rounding decides (a comparison of such a value, say).
                let open = scale_data.get(i).is_some_and(|s| s.is_infinite());
                let equal = open || int_value(&g) == int_value(&w);
                let e = element(if equal { 0.0 } else { f64::INFINITY }, 0.0);
                (e, open)
            }
            Some(p) => {
                let (gp, mut wp) = (float_parts(&g), float_parts(&w));
                for x in &mut wp {
                    if x.is_finite() && x.abs() > max_finite(part) {
                        *x = x.signum() * f64::INFINITY;
                    }
                }
                let s = scale_data.get(i).copied().unwrap_or(0.0) * 2f64.powi(p - 24);
                let finite = |c: &[f64; 2]| c.iter().all(|x| x.is_finite());
                // Unbounded: the scale covers the type's whole range (or is
                // not a number at all), so a ULP count would mean nothing.
                // Infinite: rounding decides the element's very class (an
                // operand within its error of a pole or a domain edge), so
                // nothing about it can be checked.
                let open = s.is_infinite();
                let unbounded =
                    open || (finite(&wp) && (s.is_nan() || s >= unbounded_magnitude(part)));
                let ulps = if open {
                    0.0
                } else if !finite(&gp) || !finite(&wp) {
                    if same_class(gp, wp) {
                        0.0
                    } else {
                        f64::INFINITY
                    }
                } else if unbounded || gp == wp {
                    0.0
                } else {
                    let diff = (gp[0] - wp[0]).hypot(gp[1] - wp[1]);
                    let magnitude = wp[0].hypot(wp[1]);
                    diff / ulp_at(s.max(magnitude), p, part)
                };
                let e = if unbounded {
                    element(ulps, f64::INFINITY)
                } else {
                    element(ulps, s)
                };
                (e, unbounded)
            }
        };
        report.unbounded += usize::from(unbounded);
        if e.ulps > rule.max_ulps || e.ulps.is_nan() {
            report.mismatches += 1;
        }
        if e.ulps > report.max_ulps {
            report.max_ulps = e.ulps;
        }
        // Keep the worst few (a short sorted list: insertion is cheap).
        if e.ulps > 0.0
            && (report.worst.len() < WORST_KEPT
                || report.worst.last().is_some_and(|l| e.ulps > l.ulps))
        {
            let at = report.worst.partition_point(|x| x.ulps >= e.ulps);
            report.worst.insert(at, e);
            report.worst.truncate(WORST_KEPT);
        }
    }
    if report.mismatches == 0 {
        // A passing leaf shows only its worst element.
        report.worst.truncate(1);
    }
    Ok(report)
}

/// Whether two values (real: the second part 0) with a non-finite part are
/// of one class: both NaN, both finite, or infinite alike. A complex value
/// with an infinite part is infinite whatever its other part (C99 Annex G),
/// so `(inf, 0)` and `(inf, NaN)` agree; where both are infinite, each part
/// infinite in either must be the same infinity in both.
fn same_class(g: [f64; 2], w: [f64; 2]) -> bool {
    #[derive(PartialEq)]
    enum Class {
        Finite,
        Nan,
        Infinite,
    }
    let class = |c: &[f64; 2]| {
        if c.iter().any(|x| x.is_infinite()) {
            Class::Infinite
        } else if c.iter().any(|x| x.is_nan()) {
            Class::Nan
        } else {
            Class::Finite
        }
    };
    let (cg, cw) = (class(&g), class(&w));
    if cg != cw {
        return false;
    }
    cg != Class::Infinite
        || (0..2).all(|k| !(g[k].is_infinite() || w[k].is_infinite()) || g[k] == w[k])
}

/// Compares a result with reference values and scales leaf by leaf (tuples
/// flattened in preorder). `want` is the shadow value or expected arrays;
/// `scale` is the shadow's scale.
pub fn compare_scaled(
    got: &Literal,
    want: &Literal,
    scale: &Literal,
    rule: ScaleRule,
) -> Result<Vec<ScaledComparison>> {
    let got_leaves = got.clone().flatten_leaves();
    let want_leaves = want.clone().flatten_leaves();
    let scale_leaves = scale.clone().flatten_leaves();
    if got_leaves.len() != want_leaves.len() || got_leaves.len() != scale_leaves.len() {
        return Err(Error::invalid_argument(format!(
            "the result has {} output(s) ({}) but the reference has {} ({})",
            got_leaves.len(),
            got.shape().without_layout(),
            want_leaves.len(),
            want.shape().without_layout()
        )));
    }
    got_leaves
        .iter()
        .zip(&want_leaves)
        .zip(&scale_leaves)
        .enumerate()
        .map(|(i, ((g, w), s))| compare_scaled_leaf(i, g, w, s, rule))
        .collect()
}

/// Custom calls for the shadow evaluation: the host targets registered for
/// the Interpreter, called on arguments in the program's own types.
struct ShadowHooks;

impl EvalHooks for ShadowHooks {
    fn custom_call(&self, instr: &HloInstruction, operands: &[&Literal]) -> Result<Literal> {
        platform_api::custom_call::call_host_target("Interpreter", instr, operands)
    }
}

/// The scale rule's reference: `module` evaluated on `args` in f64 with
/// per-element error scales (`platform_api::evaluator::shadow`), after the
/// passes that give a module the meaning the Interpreter gives it
/// (`platform_api::passes::reference_semantics`, with `excess_precision` and
/// `divide_by_reciprocal` as `options` set them).
pub fn shadow_reference(
    module: &HloModule,
    args: &[Literal],
    options: &CompileOptions,
) -> Result<ShadowOutput> {
    let mut module = module.clone();
    platform_api::hlo::verifier::verify_module(&module)?;
    platform_api::passes::reference_semantics(
        &mut module,
        options.debug_option("excess_precision"),
        options.debug_option("divide_by_reciprocal"),
    )?;
    let ctx = RunContext {
        hooks: Some(Arc::new(ShadowHooks)),
        ..RunContext::default()
    };
    shadow::shadow_evaluate(&module, args, &ctx)
}

/// Adds to each leaf's report what the shadow evaluation knows about that
/// output: where its scale became unbounded, and whether XLA leaves it
/// undefined.
pub fn annotate(reports: &mut [ScaledComparison], shadow: &ShadowOutput) {
    for (i, r) in reports.iter_mut().enumerate() {
        if r.unbounded > 0 {
            r.unbounded_origin = shadow.unbounded_origin.get(i).cloned().flatten();
        }
        r.undefined = shadow.undefined.get(i).cloned().flatten();
    }
}

/// The fallback ops a shadow evaluation used, as one line for reports
/// (`None` when every op had its own rule).
pub fn fallback_note(out: &ShadowOutput) -> Option<String> {
    if out.fallbacks.is_empty() {
        return None;
    }
    let list: Vec<String> = out
        .fallbacks
        .iter()
        .map(|(op, n)| format!("{op} x{n}"))
        .collect();
    Some(format!(
        "scale fallback (w|y|, for custom calls w·n·max|y|, + largest operand scale) used for: {}",
        list.join(", ")
    ))
}

/// A threshold of either rule (`rtol`, `atol`, `max_ulps`): a finite,
/// non-negative number, else an error naming it as the caller spells it.
pub fn check_threshold(name: &str, value: Option<f64>) -> Result<()> {
    match value {
        Some(v) if !(v.is_finite() && v >= 0.0) => Err(Error::invalid_argument(format!(
            "{name} must be a non-negative number, not {v}"
        ))),
        _ => Ok(()),
    }
}

/// Expected outputs (one array per output leaf, e.g. XLA's saved from JAX) as
/// a result shaped like `got`: a tuple when it has several leaves. A narrow
/// type saved by NumPy as raw bytes (`u8`) is read as the output's type.
/// `what` names the arrays for the count mismatch ("--expected file(s)"),
/// `label(i)` the `i`-th for a shape mismatch.
pub fn expected_result(
    leaves: Vec<Literal>,
    got: &Literal,
    what: &str,
    label: impl Fn(usize) -> String,
) -> Result<Literal> {
    let outputs = got.clone().flatten_leaves();
    if leaves.len() != outputs.len() {
        return Err(Error::invalid_argument(format!(
            "the module has {} output(s) ({}) but {} {what} were given",
            outputs.len(),
            got.shape().without_layout(),
            leaves.len()
        )));
    }
    let mut checked = Vec::with_capacity(leaves.len());
    for (i, (mut l, out)) in leaves.into_iter().zip(&outputs).enumerate() {
        if let (Some(ElementType::U8), Some(ty)) = (l.element_type(), out.element_type()) {
            if ty.is_narrow() && l.dims() == out.dims() {
                l = l.reinterpret(ty)?;
            }
        }
        if l.dims() != out.dims() {
            return Err(Error::invalid_argument(format!(
                "{} holds {} but output {i} is {}",
                label(i),
                l.shape().without_layout(),
                out.shape().without_layout()
            )));
        }
        checked.push(l);
    }
    Ok(if checked.len() == 1 && !got.is_tuple() {
        checked.remove(0)
    } else {
        Literal::tuple(checked)
    })
}

/// A finished comparison as `hlorun compare` (and the Python package)
/// reports it.
#[derive(Clone, Debug)]
pub struct ComparisonReport {
    /// What was compared with what, the rule, then one entry per output.
    pub text: String,
    pub outputs: usize,
    pub failed: usize,
    /// What the result was compared with.
    pub against: String,
}

impl ComparisonReport {
    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    /// The one-line verdict of a failed comparison of module `name` run on
    /// `platform` (`None` when every output passed).
    pub fn failure(&self, name: &str, platform: &str) -> Option<String> {
        (!self.ok()).then(|| {
            format!(
                "{name}: {} of {} output(s) of {platform} differ from {}",
                self.failed, self.outputs, self.against
            )
        })
    }
}

/// The scale rule end to end: `got` (module `name` run on `platform` with
/// `arguments`) against the f64 shadow evaluation of the same module, or
/// against `expected` (the arrays and what to call them) with the shadow's
/// scale.
#[allow(clippy::too_many_arguments)]
pub fn compare_by_scale(
    module: &HloModule,
    options: &CompileOptions,
    arguments: &[Literal],
    got: &Literal,
    expected: Option<(Literal, &str)>,
    rule: ScaleRule,
    name: &str,
    platform: &str,
) -> Result<ComparisonReport> {
    let shadow = shadow_reference(module, arguments, options)
        .map_err(|e| e.context(format!("{name}: the shadow (f64) reference evaluation")))?;
    let (want, against) = match expected {
        None => (shadow.value.clone(), "the f64 shadow reference".to_string()),
        Some((e, what)) => (e, format!("{what} (scale from the f64 shadow reference)")),
    };
    let mut text = format!("{name}: {platform} against {against}\nrule: {rule}\n");
    if let Some(note) = fallback_note(&shadow) {
        text.push_str(&format!("{note}\n"));
    }
    let mut reports =
        compare_scaled(got, &want, &shadow.scale, rule).map_err(|e| e.context(name))?;
    annotate(&mut reports, &shadow);
    for report in &reports {
        text.push_str(&format!("{report}\n"));
    }
    Ok(ComparisonReport {
        text,
        outputs: reports.len(),
        failed: reports.iter().filter(|r| !r.ok()).count(),
        against,
    })
}

/// The tolerance rule end to end: each result of `got` (one per replica)
/// against the same one of `want`, which is `against`.
pub fn compare_by_tolerance(
    got: &[Literal],
    want: &[Literal],
    tolerance: Tolerance,
    name: &str,
    platform: &str,
    against: String,
) -> Result<ComparisonReport> {
    let mut text = format!(
        "{name}: {platform} against {against} (tolerance rule: |got - want| <= atol + rtol*|want|, rtol {:e}, atol {:e})\n",
        tolerance.rtol, tolerance.atol
    );
    let (mut outputs, mut failed) = (0, 0);
    for (replica, (g, w)) in got.iter().zip(want).enumerate() {
        for report in compare_results(g, w, tolerance).map_err(|e| e.context(name))? {
            outputs += 1;
            failed += usize::from(!report.ok());
            if got.len() > 1 {
                text.push_str(&format!("replica {replica} "));
            }
            text.push_str(&format!("{report}\n"));
        }
    }
    Ok(ComparisonReport {
        text,
        outputs,
        failed,
        against,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_within_and_outside_tolerance() {
        let tol = Tolerance {
            rtol: 1e-3,
            atol: 0.0,
        };
        let want = Literal::vector(&[1.0f32, -2.0, f32::NAN, f32::INFINITY]);
        let close = Literal::vector(&[1.0005f32, -2.001, f32::NAN, f32::INFINITY]);
        let r = compare_arrays(0, &close, &want, tol).unwrap();
        assert!(r.ok(), "{r}");
        assert!((r.max_abs_error - 0.001).abs() < 1e-6);
        let far = Literal::vector(&[1.01f32, -2.0, 0.0, f32::INFINITY]);
        let r = compare_arrays(0, &far, &want, tol).unwrap();
        assert!(!r.ok());
        assert_eq!(r.mismatches, 2);
        assert!(r.first_failure.unwrap().contains("[0]"));
        let wrong_inf = Literal::vector(&[1.0f32, -2.0, f32::NAN, f32::NEG_INFINITY]);
        assert!(!compare_arrays(0, &wrong_inf, &want, tol).unwrap().ok());
    }

    #[test]
    fn integers_must_be_equal_and_shapes_must_match() {
        let want = Literal::from_slice(&[2, 2], &[1i32, 2, 3, 4]).unwrap();
        let got = Literal::from_slice(&[2, 2], &[1i32, 2, 3, 5]).unwrap();
        let r = compare_arrays(0, &got, &want, Tolerance::default()).unwrap();
        assert_eq!(r.mismatches, 1);
        assert!(r.first_failure.as_ref().unwrap().contains("[1, 1]"), "{r}");
        let reshaped = Literal::vector(&[1i32, 2, 3, 4]);
        assert!(!compare_arrays(0, &reshaped, &want, Tolerance::default())
            .unwrap()
            .ok());
        let big = Literal::vector(&[u64::MAX]);
        let big_minus = Literal::vector(&[u64::MAX - 1]);
        assert!(!compare_arrays(0, &big_minus, &big, Tolerance::default())
            .unwrap()
            .ok());
    }

    #[test]
    fn tuples_compare_leaf_by_leaf() {
        let want = Literal::tuple(vec![
            Literal::scalar(1.0f64),
            Literal::vector(&[true, false].map(u8::from)),
        ]);
        let got = want.clone();
        let reports = compare_results(&got, &want, Tolerance::default()).unwrap();
        assert_eq!(reports.len(), 2);
        assert!(reports.iter().all(LeafComparison::ok));
        assert!(compare_results(&Literal::scalar(1.0f64), &want, Tolerance::default()).is_err());
    }

    #[test]
    fn scale_rule_measures_in_ulps_of_the_scale() {
        let rule = ScaleRule { max_ulps: 4.0 };
        // Scale 1024 (f32 units): one ULP there is 2^-13.
        let want = Literal::vector(&[1.0f64, 2.0, 3.0]);
        let scale = Literal::vector(&[1024.0f64, 1024.0, 0.0]);
        let ulp = 2f32.powi(-13);
        let got = Literal::vector(&[1.0 + 3.0 * ulp, 2.0 - 5.0 * ulp, 3.0]);
        let r = compare_scaled_leaf(0, &got, &want, &scale, rule).unwrap();
        assert_eq!(r.mismatches, 1, "{r}");
        assert_eq!(r.worst[0].index, "[1]", "{r}");
        assert!((r.worst[0].ulps - 5.0).abs() < 1e-6, "{r}");
        // A zero scale is floored at |want|: one f32 ULP of 3 is 2^-22.
        let got = Literal::vector(&[1.0f32, 2.0, 3.0 + 2f32.powi(-22)]);
        let r = compare_scaled_leaf(0, &got, &want, &scale, rule).unwrap();
        assert!(r.ok() && (r.max_ulps - 1.0).abs() < 1e-9, "{r}");
    }

    #[test]
    fn scale_rule_special_values_and_integers() {
        let rule = ScaleRule::default();
        let scale = Literal::vector(&[0.0f64; 3]);
        // A reference beyond f32's range is infinite in f32.
        let want = Literal::vector(&[f64::NAN, 1e39, 1.0]);
        let got = Literal::vector(&[f32::NAN, f32::INFINITY, 1.0]);
        assert!(compare_scaled_leaf(0, &got, &want, &scale, rule)
            .unwrap()
            .ok());
        let got = Literal::vector(&[0.0f32, f32::INFINITY, f32::NAN]);
        let r = compare_scaled_leaf(0, &got, &want, &scale, rule).unwrap();
        assert_eq!(r.mismatches, 2, "{r}");
        let ints = Literal::vector(&[1i32, 2, 3]);
        let off = Literal::vector(&[1i32, 2, 4]);
        let r = compare_scaled_leaf(0, &off, &ints, &scale, rule).unwrap();
        assert_eq!(r.mismatches, 1, "{r}");
        let short = Literal::vector(&[1i32, 2]);
        assert!(!compare_scaled_leaf(0, &short, &ints, &scale, rule)
            .unwrap()
            .ok());
    }
}
