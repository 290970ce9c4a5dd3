//! [`HostCompiler`]: HLO passes, then lowering to a thunk sequence.
//!
//! * HLO passes: the verifier, XLA CPU's excess precision and division by a
//!   reciprocal (`ExcessPrecision`, `DivideByReciprocal`; compile options
//!   `excess_precision`, `divide_by_reciprocal`), then
//!   `platform_api::passes::standard_pipeline`
//!   (layout normalization, call inlining, simplification, folding, CSE, DCE),
//!   folding elementwise ops with the Host's own op table ([`folding`]).
//! * [`reduce_split`]: a reduction that would read its input in short strided
//!   runs becomes a streaming reduction and a small one.
//! * [`fusion_pass`]: the Host's fusion decisions, after the standard pipeline;
//!   [`chain_pass`]: `dot → fusion → dot` chains (attention) as one fusion
//!   run a block of rows at a time.
//! * [`contraction`]: XLA CPU's floating-point contraction (a multiply fused into
//!   the add that is its only use), decided on the optimized module.
//! * [`buffer_assignment`]: where every value lives (liveness-packed arena,
//!   in-place reuse, results written in place).
//! * [`lower`]: computation → [`crate::thunk::ThunkSequence`]; [`nested`]: the
//!   nested sequences of control flow and of fusions no block program covers.

pub mod buffer_assignment;
#[path = "passes/chain.rs"]
pub mod chain_pass;
pub mod contraction;
pub mod folding;
#[path = "passes/fusion.rs"]
pub mod fusion_pass;
pub mod lower;
pub mod nested;
pub mod plan_dump;
#[path = "passes/reduce_split.rs"]
pub mod reduce_split;
pub mod small_loop;

use crate::executable::HostExecutable;
use crate::fusion::Strategy;
use crate::PLATFORM_NAME;
use buffer_assignment::{OutputMode, SequenceMode};
use platform_api::hlo::{CompId, Op};
use platform_api::passes::dump::{Dump, DUMP_OPTION};
use platform_api::passes::{self, DeadCodeElimination, HloPass, LayoutNormalization};
use platform_api::{
    CompileOptions, Compiler, Error, Executable, HloModule, Result, StreamExecutor,
};
use std::sync::Arc;

/// The calling convention of an entry computation: arguments are the caller's
/// (read-only), results go to fresh buffers, and a result that is an argument
/// or repeats another result is returned as that buffer.
pub const ENTRY_MODE: SequenceMode = SequenceMode {
    params_writable: false,
    outputs: OutputMode::Separate {
        absorb: true,
        alias_results: true,
    },
};

/// The Host platform's compiler.
#[derive(Default)]
pub struct HostCompiler;

impl Compiler for HostCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        _executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<HloModule> {
        optimize(module, options)
    }

    fn run_backend(
        &self,
        module: HloModule,
        _executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        compile_module(module, options).map(|e| Arc::new(e) as Arc<dyn Executable>)
    }
}

/// The Host's HLO passes: verify, XLA CPU's numerics rewrites, the shared
/// standard pipeline, then the
/// fusion decisions `options` ask for.
pub fn optimize(module: HloModule, options: &CompileOptions) -> Result<HloModule> {
    let strategy = Strategy::from_options(options)?;
    platform_api::hlo::verifier::verify_module(&module)?;
    let dump = Dump::open(options.debug_option(DUMP_OPTION), &module)?.map(Arc::new);
    let dumped = |stage: &str, changed: bool, module: &HloModule| -> Result<()> {
        match &dump {
            Some(d) if changed => d.module(stage, module).map(|_| ()),
            _ => Ok(()),
        }
    };
    dumped("input", true, &module)?;
    let mut module = module;
    // `stochastic-convert` as elementwise ops; narrow types (s4, f8...)
    // computed in a wide type (see the passes).
    let changed = passes::legalize::stochastic::ExpandStochasticConvert.run(&mut module)?;
    dumped("expand-stochastic-convert", changed, &module)?;
    let changed = passes::legalize::narrow::WidenNarrowTypes.run(&mut module)?;
    dumped("widen-narrow-types", changed, &module)?;
    // XLA CPU's numerics: bf16 results its program converts to f32 stay f32
    // (`excess_precision`), division by a broadcast or constant multiplies by
    // the reciprocal (`divide_by_reciprocal`); both on unless `off`, in XLA's
    // order, before the pipeline folds the reciprocals.
    let changed = passes::xla_numerics(
        &mut module,
        options.debug_option("excess_precision"),
        options.debug_option("divide_by_reciprocal"),
    )?;
    dumped("xla-numerics", changed, &module)?;
    // The Host's GEMM sums in blocks and promises no NaN payloads, so the
    // simplifier may swap a product's operands (a transposed product is
    // computed transposed, with no copy).
    let simplifier = passes::SimplifierOptions {
        nan_payloads_unspecified: true,
        ..passes::SimplifierOptions::default()
    };
    passes::standard_pipeline_for(Some(Arc::new(folding::HostFolding)), simplifier)
        .dump_to(dump.clone())
        .run(&mut module)?;
    let changed = reduce_split::run(&mut module)?;
    dumped("host-reduce-split", changed, &module)?;
    let mut module = fusion_pass::run(module, strategy)?;
    dumped("host-fusion", true, &module)?;
    if strategy == Strategy::Block {
        let changed = chain_pass::run(&mut module, options)?;
        dumped("host-chain", changed, &module)?;
    }
    Ok(module)
}

/// The computations `fusion` instructions call: XLA's (or the fusion pass's)
/// fused computations, which passes that rewrite instructions leave alone.
pub(crate) fn fused_computations(module: &HloModule) -> std::collections::HashSet<CompId> {
    module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter_map(|i| match &i.op {
            Op::Fusion { calls, .. } => Some(*calls),
            _ => None,
        })
        .collect()
}

/// Lowers an optimized module (the output of `run_hlo_passes`) to an executable.
pub fn compile_module(module: HloModule, options: &CompileOptions) -> Result<HostExecutable> {
    if options.replica_count == 0 || options.num_partitions == 0 {
        return Err(Error::invalid_argument(
            "replica_count and num_partitions must be at least 1",
        ));
    }
    let mut module = module;
    // Layouts mean nothing past this point; a module that skipped
    // `run_hlo_passes` still gets its bitcasts made logical.
    LayoutNormalization::new().run(&mut module)?;
    passes::legalize::stochastic::ExpandStochasticConvert.run(&mut module)?;
    passes::legalize::narrow::WidenNarrowTypes.run(&mut module)?;
    if contraction::enabled(options)? && contraction::run(&mut module)? {
        DeadCodeElimination::new().run(&mut module)?;
        if let Some(dump) = Dump::open(options.debug_option(DUMP_OPTION), &module)? {
            dump.module("host-fp-contract", &module)?;
        }
    }
    if crate::arg_reduce::run(&mut module)? {
        DeadCodeElimination::new().run(&mut module)?;
    }
    let entry = lower::compile_computation(&module, module.entry, ENTRY_MODE, options, true)?;
    HostExecutable::new(module, entry, options)
}
