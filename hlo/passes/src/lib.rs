//! HLO-to-HLO passes shared by the compilers, and the pipeline that runs them.
//!
//! # The contract every pass here keeps
//!
//! A pass may change how a program computes, never what it computes: for every
//! input, the program after the pass returns the same bits as before, NaN
//! payloads and the sign of zero included. So there is no reassociation of
//! floating-point arithmetic, no `x + 0 → x` for floats (`-0 + 0` is `+0`), no
//! `x * 0 → 0` (`inf * 0` is NaN), no folding that rounds differently from the
//! shared [`hlo_semantics`]. Each rewrite rule carries a comment saying why it
//! is exact. Instructions with side effects (and `rng`) are never removed, merged,
//! folded or reordered relative to one another.
//!
//! "The same bits" is under HLO's semantics, where every operation rounds its
//! result once. XLA CPU's code generator additionally fuses a multiply into the
//! `add` that is its only user (one rounding for both; modelled by
//! [`hlo_semantics::contraction`] and the interpreter's default
//! `fp_contract=xla`). Which multiply qualifies depends on use counts, and CSE,
//! inlining, folding and simplification change use counts — as XLA's own passes
//! do before its code generator decides. A backend that contracts should decide
//! on the module these passes produce; bit-for-bit comparisons of a module before
//! and after them hold with `fp_contract=off`.
//!
//! Passes also must be cheap: a whole compile has to beat XLA CPU's, which is
//! 15 ms for the smallest programs here. Every pass is linear (or `n log n`) in
//! the size of the module per run; they edit computations through
//! [`hlo_ir::rewrite::ComputationEditor`], which batches edits and restores
//! the instruction order once.
//!
//! # Pieces
//!
//! * [`HloPass`]: one transformation, `run(&mut module) -> changed?`.
//! * [`Pipeline`]: passes in sequence, and fixed-point groups that repeat until
//!   nothing changes (with an iteration bound), optionally verifying the module
//!   after every pass, and recording how long each pass took.
//! * The passes: [`CallInliner`], [`DeadCodeElimination`],
//!   [`CommonSubexpressionElimination`], [`ComputationDeduplication`],
//!   [`AlgebraicSimplifier`], [`ConstantFolding`], [`LayoutNormalization`],
//!   [`FusionInliner`].
//! * [`standard_pipeline`]: the order a backend should run them in.
//! * [`legalize`]: rewriting a module into the ops a backend declares
//!   ([`legalize::OpSupport`]), with [`FusionInliner`] and per-op expanders.
//!   The one exception to the bit-identity contract: a few expanders (`tan`,
//!   `log-plus-one`, ...) are within a stated tolerance, and some are exact only
//!   up to NaN sign/payload; each says so. Legalization runs only for a backend
//!   that asks for it.
//! * [`ExcessPrecision`] and [`DivideByReciprocal`]: the other exceptions,
//!   outside the standard pipeline: where XLA CPU keeps a bf16 result in f32
//!   (a program's own conversion of a bf16 arithmetic result to f32), and its
//!   rewrite of a division by a broadcast or a constant into a multiplication
//!   by the reciprocal. Backends run them (in that order, before anything
//!   else) under the compile options `excess_precision` and
//!   `divide_by_reciprocal` so JAX's programs give XLA CPU's bits.

mod cse;
mod dce;
pub mod dump;
pub mod dynamic;
mod excess_precision;
mod fold;
mod inline;
mod layout;
pub mod legalize;
mod reciprocal;
mod simplify;

pub use cse::{CommonSubexpressionElimination, ComputationDeduplication};
pub use dce::DeadCodeElimination;
pub use excess_precision::{excess_precision_option, ExcessPrecision};
pub use fold::{ConstantFolding, ElementwiseEvaluator};
pub use inline::{CallInliner, FusionInliner};
pub use layout::LayoutNormalization;
pub use reciprocal::{divide_by_reciprocal_option, DivideByReciprocal};
pub use simplify::{AlgebraicSimplifier, SimplifierOptions};

use hlo_ir::error::Result;
use hlo_ir::verifier::verify_module;
use hlo_ir::HloModule;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The number of elements of an array with these dimensions, or `None` if it
/// overflows (a malformed shape must give an error, not a panic).
pub(crate) fn checked_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// One module-to-module transformation.
///
/// Contract: `run` either returns `Ok(changed)` with the module valid (it passes
/// [`verify_module`] if it did before) and computing bit-identical results, or
/// returns an error; after an error the module may be partly rewritten and should
/// be dropped. `changed` is `false` only if the module is exactly as it was.
pub trait HloPass {
    /// A short name for logs and error messages (`"cse"`).
    fn name(&self) -> &str;
    /// Transforms the module; returns whether anything changed.
    fn run(&mut self, module: &mut HloModule) -> Result<bool>;
}

/// One run of one pass inside a [`Pipeline`].
#[derive(Clone, Debug, PartialEq)]
pub struct PassRun {
    /// The pass name, prefixed by the fixed-point group's (`"simplify/cse"`).
    pub pass: String,
    pub changed: bool,
    pub elapsed: Duration,
}

enum Step {
    Pass(Box<dyn HloPass>),
    FixedPoint {
        name: String,
        max_iterations: usize,
        passes: Vec<Box<dyn HloPass>>,
    },
}

/// Passes run in order; a fixed-point group runs its passes in order again and
/// again until one round changes nothing or `max_iterations` rounds have run
/// (reaching the bound is not an error: every round left a valid, equivalent
/// module).
///
/// With verification on ([`Pipeline::verify_after_each_pass`]; on by default in
/// debug builds), the module is verified after every pass that changed it, and a
/// failure names the pass that broke it.
pub struct Pipeline {
    name: String,
    steps: Vec<Step>,
    verify: bool,
    log: Vec<PassRun>,
    dump: Option<Arc<dump::Dump>>,
}

impl Pipeline {
    pub fn new(name: impl Into<String>) -> Pipeline {
        Pipeline {
            name: name.into(),
            steps: Vec::new(),
            verify: cfg!(debug_assertions),
            log: Vec::new(),
            dump: None,
        }
    }

    /// Writes the module after every pass that changed it into `dump`.
    pub fn dump_to(&mut self, dump: Option<Arc<dump::Dump>>) -> &mut Self {
        self.dump = dump;
        self
    }

    /// Appends one pass.
    pub fn add_pass(&mut self, pass: impl HloPass + 'static) -> &mut Self {
        self.steps.push(Step::Pass(Box::new(pass)));
        self
    }

    /// Appends a group of passes repeated until a round changes nothing, at most
    /// `max_iterations` rounds (at least one).
    pub fn add_fixed_point(
        &mut self,
        name: impl Into<String>,
        max_iterations: usize,
        passes: Vec<Box<dyn HloPass>>,
    ) -> &mut Self {
        self.steps.push(Step::FixedPoint {
            name: name.into(),
            max_iterations: max_iterations.max(1),
            passes,
        });
        self
    }

    /// Whether to run the verifier after every pass that changed the module.
    pub fn verify_after_each_pass(&mut self, verify: bool) -> &mut Self {
        self.verify = verify;
        self
    }

    /// Every pass run so far, in order, with its time.
    pub fn log(&self) -> &[PassRun] {
        &self.log
    }

    /// Total time per pass name over [`log`](Self::log), in first-run order.
    pub fn time_per_pass(&self) -> Vec<(String, Duration)> {
        let mut totals: Vec<(String, Duration)> = Vec::new();
        for run in &self.log {
            match totals.iter_mut().find(|(name, _)| *name == run.pass) {
                Some((_, total)) => *total += run.elapsed,
                None => totals.push((run.pass.clone(), run.elapsed)),
            }
        }
        totals
    }

    fn run_one(
        pass: &mut dyn HloPass,
        label: String,
        verify: bool,
        dump: Option<&dump::Dump>,
        log: &mut Vec<PassRun>,
        module: &mut HloModule,
    ) -> Result<bool> {
        let start = Instant::now();
        let changed = pass
            .run(module)
            .map_err(|e| e.context(format_args!("HLO pass {label}")))?;
        let elapsed = start.elapsed();
        tracing::debug!(pass = %label, changed, ?elapsed, "HLO pass");
        log.push(PassRun {
            pass: label.clone(),
            changed,
            elapsed,
        });
        if let (Some(dump), true) = (dump, changed) {
            dump.module(&label, module)?;
        }
        if verify && changed {
            verify_module(module)
                .map_err(|e| e.context(format_args!("the module is invalid after pass {label}")))?;
        }
        Ok(changed)
    }
}

impl HloPass for Pipeline {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        let mut changed = false;
        for step in &mut self.steps {
            match step {
                Step::Pass(pass) => {
                    let label = pass.name().to_string();
                    changed |= Self::run_one(
                        pass.as_mut(),
                        label,
                        self.verify,
                        self.dump.as_deref(),
                        &mut self.log,
                        module,
                    )?;
                }
                Step::FixedPoint {
                    name,
                    max_iterations,
                    passes,
                } => {
                    let mut round = 0;
                    loop {
                        round += 1;
                        let mut round_changed = false;
                        for pass in passes.iter_mut() {
                            let label = format!("{name}/{}", pass.name());
                            round_changed |= Self::run_one(
                                pass.as_mut(),
                                label,
                                self.verify,
                                self.dump.as_deref(),
                                &mut self.log,
                                module,
                            )?;
                        }
                        changed |= round_changed;
                        if !round_changed {
                            break;
                        }
                        if round >= *max_iterations {
                            tracing::debug!(group = %name, rounds = round, "fixed point not reached within the bound");
                            break;
                        }
                    }
                }
            }
        }
        Ok(changed)
    }
}

/// XLA CPU's two numerics rewrites, [`ExcessPrecision`] then
/// [`DivideByReciprocal`], each unless its debug option (the values of
/// `excess_precision` and `divide_by_reciprocal`, `None` when unset) is
/// `off`: what a backend that gives XLA CPU's bits runs before anything else.
pub fn xla_numerics(
    module: &mut HloModule,
    excess_precision: Option<&str>,
    divide_by_reciprocal: Option<&str>,
) -> Result<bool> {
    let mut changed = false;
    if excess_precision_option(excess_precision)? {
        changed |= ExcessPrecision::new().run(module)?;
    }
    if divide_by_reciprocal_option(divide_by_reciprocal)? {
        changed |= DivideByReciprocal::new().run(module)?;
    }
    Ok(changed)
}

/// What gives a module the meaning the reference evaluator runs: `scan`
/// expanded to its loop, dynamic dimensions padded, stochastic converts
/// expanded, narrow types widened, then [`xla_numerics`]. The Interpreter's
/// passes and the shadow reference (`hlo_evaluator::shadow`) both run it, so
/// they judge the same program.
pub fn reference_semantics(
    module: &mut HloModule,
    excess_precision: Option<&str>,
    divide_by_reciprocal: Option<&str>,
) -> Result<bool> {
    let mut changed = legalize::scan::ExpandScan.run(module)?;
    changed |= dynamic::PadDynamicShapes.run(module)?;
    changed |= legalize::stochastic::ExpandStochasticConvert.run(module)?;
    changed |= legalize::narrow::WidenNarrowTypes.run(module)?;
    changed |= xla_numerics(module, excess_precision, divide_by_reciprocal)?;
    Ok(changed)
}

/// `shape` with element type `ty` (dimensions and layout kept); a tuple or a
/// token is returned as it is.
pub(crate) fn retyped(
    shape: &hlo_ir::shape::Shape,
    ty: hlo_ir::shape::ElementType,
) -> hlo_ir::shape::Shape {
    let mut s = shape.clone();
    if let Some(a) = s.as_array_mut() {
        a.element_type = ty;
    }
    s
}

/// The walk [`ExcessPrecision`] and [`DivideByReciprocal`] share: in every
/// computation with an instruction for which `candidate` holds, `rewrite` is
/// offered each instruction present before the pass (not those it adds), and
/// every use of one it rewrites goes to its replacement. A module with no
/// candidate is left alone without building any editor. Returns whether the
/// module changed.
pub(crate) fn rewrite_instructions(
    module: &mut HloModule,
    candidate: impl Fn(&hlo_ir::HloInstruction) -> bool,
    mut rewrite: impl FnMut(
        &mut hlo_ir::rewrite::ComputationEditor<'_>,
        hlo_ir::InstrId,
    ) -> Option<hlo_ir::InstrId>,
) -> Result<bool> {
    use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
    hlo_ir::rewrite::check_references(module)?;
    let wanted: Vec<bool> = module
        .computations
        .iter()
        .map(|c| c.instructions.iter().any(&candidate))
        .collect();
    if !wanted.contains(&true) {
        return Ok(false);
    }
    let effectful = effectful_computations(module);
    let mut names = NameGen::for_instructions(module);
    let mut changed = false;
    for (comp, wanted) in module.computations.iter_mut().zip(wanted) {
        if !wanted {
            continue;
        }
        let mut ed = ComputationEditor::new(comp, &mut names);
        for i in 0..ed.len() {
            let id = hlo_ir::InstrId(i as u32);
            if let Some(new) = rewrite(&mut ed, id) {
                ed.replace_all_uses(id, new)?;
            }
        }
        changed |= ed.finish(&effectful)?;
    }
    Ok(changed)
}

/// The passes a backend should run before generating code, in order:
///
/// 1. [`legalize::scan::ExpandScan`] — `scan` becomes a `while` loop, as in
///    XLA's CPU and GPU pipelines (no backend runs `scan` itself); then
///    [`dynamic::PadDynamicShapes`] makes dynamic dimensions static, with
///    their sizes computed beside them, as XLA's DynamicPadder does.
/// 2. [`LayoutNormalization`] — while `bitcast`s and `copy`s still see
///    the layouts XLA gave them; afterwards every value is a row-major array.
/// 3. [`CallInliner`] — JAX nests `call`s; inlining exposes everything to the
///    passes below and to fusion.
/// 4. A fixed-point group (at most 8 rounds): [`AlgebraicSimplifier`],
///    [`ConstantFolding`], [`ComputationDeduplication`],
///    [`CommonSubexpressionElimination`], [`DeadCodeElimination`]. Each can
///    enable the others (a simplified `broadcast` folds, a folded constant
///    merges with an equal one, two reductions merge once their reducers are
///    one computation, ...).
pub fn standard_pipeline() -> Pipeline {
    standard_pipeline_with(None)
}

/// [`standard_pipeline`], with constant folding computing elementwise ops with
/// a backend's own kernels when `elementwise` is given (see
/// [`ElementwiseEvaluator`]).
pub fn standard_pipeline_with(elementwise: Option<Arc<dyn ElementwiseEvaluator>>) -> Pipeline {
    standard_pipeline_for(elementwise, SimplifierOptions::default())
}

/// [`standard_pipeline_with`], with the algebraic simplifier's optional rules
/// chosen by `simplifier` (see [`SimplifierOptions`]).
pub fn standard_pipeline_for(
    elementwise: Option<Arc<dyn ElementwiseEvaluator>>,
    simplifier: SimplifierOptions,
) -> Pipeline {
    let folding = match elementwise {
        Some(e) => ConstantFolding::new().with_elementwise(e),
        None => ConstantFolding::new(),
    };
    let mut pipeline = Pipeline::new("standard");
    pipeline
        .add_pass(legalize::scan::ExpandScan)
        .add_pass(dynamic::PadDynamicShapes)
        .add_pass(LayoutNormalization::new())
        .add_pass(CallInliner::new())
        .add_fixed_point(
            "simplify",
            8,
            vec![
                Box::new(AlgebraicSimplifier::with_options(simplifier)),
                Box::new(folding),
                Box::new(ComputationDeduplication::new()),
                Box::new(CommonSubexpressionElimination::new()),
                Box::new(DeadCodeElimination::new()),
            ],
        );
    pipeline
}
