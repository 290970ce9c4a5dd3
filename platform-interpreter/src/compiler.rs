//! [`InterpreterCompiler`]: the interpreter's "compilation" is planning.
//!
//! `run_hlo_passes` runs only what is needed for a module to mean what it says —
//! the verifier (structure and every instruction's shape); `scan` expanded
//! into the `while` loop that defines it (`legalize::scan`); dynamic
//! dimensions made static with their sizes beside them (`dynamic`, XLA's
//! DynamicPadder); when the module
//! computes on a narrow type (`s4`, `f8e4m3fn`, ...), the widening pass
//! `legalize::narrow` (XLA's own definition of those ops: computed in a wider
//! type and rounded back once) and the expansion of `stochastic-convert` into
//! elementwise ops (`legalize::stochastic`, as XLA's own evaluator decomposes
//! it); and two rewrites that make it compute what XLA CPU computes: a bf16
//! arithmetic result the program converts to f32 is computed in f32 without
//! its bf16 rounding (`platform_api::passes::ExcessPrecision`;
//! `excess_precision=off` rounds it), and a division by a broadcast or a
//! constant becomes a multiplication by the reciprocal (`DivideByReciprocal`,
//! as XLA's simplifier does; `divide_by_reciprocal=off` keeps the divisions).
//! Otherwise the interpreter evaluates the HLO it is given, op by op, so that
//! it stays the reference for every other backend: no other pass that could
//! change a number (algebraic simplification, fusion, reassociation) runs here.
//!
//! One evaluation mode is chosen at compile time: floating-point contraction.
//! XLA CPU fuses a multiply into the add or subtract that is its only user (one
//! FMA, one rounding), and the conformance corpus records XLA CPU's numbers, so
//! by default the interpreter does the same, by the rule in
//! `platform_api::semantics::contraction`. The debug option `fp_contract=off`
//! rounds every operation separately, as HLO's op-by-op definition reads.
//!
//! `run_backend` builds the evaluator's `PreparedModule` (use
//! counts, liveness, prebuilt constants), checking the structure the evaluator
//! depends on, and wraps it in an [`crate::InterpreterExecutable`].

use crate::executable::InterpreterProgram;
use crate::platform::PLATFORM_NAME;
use platform_api::passes::dump::{Dump, DUMP_OPTION};
use platform_api::passes::dynamic::PadDynamicShapes;
use platform_api::passes::legalize::narrow::WidenNarrowTypes;
use platform_api::passes::legalize::scan::ExpandScan;
use platform_api::passes::legalize::stochastic::ExpandStochasticConvert;
use platform_api::passes::HloPass;
use platform_api::{
    CompileOptions, Compiler, Error, Executable, HloModule, Result, StreamExecutor,
};
use std::sync::Arc;

/// The compiler of the interpreter platform.
#[derive(Debug, Default)]
pub struct InterpreterCompiler;

impl Compiler for InterpreterCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<HloModule> {
        check_executor(executor)?;
        platform_api::hlo::verifier::verify_module(&module)?;
        let mut module = module;
        let dump = Dump::open(options.debug_option(DUMP_OPTION), &module)?;
        if let Some(d) = &dump {
            d.module("input", &module)?;
        }
        let changed = platform_api::passes::reference_semantics(
            &mut module,
            options.debug_option("excess_precision"),
            options.debug_option("divide_by_reciprocal"),
        )?;
        if let (Some(d), true) = (&dump, changed) {
            d.module("reference-semantics", &module)?;
        }
        Ok(module)
    }

    fn run_backend(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        check_executor(executor)?;
        check_custom_calls(&module)?;
        let mut module = module;
        ExpandScan.run(&mut module)?;
        PadDynamicShapes.run(&mut module)?;
        ExpandStochasticConvert.run(&mut module)?;
        WidenNarrowTypes.run(&mut module)?;
        Ok(Arc::new(
            InterpreterProgram::new(module, options)?.into_executable(),
        ))
    }
}

/// Every custom call names a target registered (or loaded) for this platform with
/// the calling convention its `api_version` says: a mistake is a compile error
/// rather than a failure in the middle of a run.
fn check_custom_calls(module: &HloModule) -> Result<()> {
    for comp in &module.computations {
        for instr in &comp.instructions {
            if matches!(instr.op, platform_api::hlo::Op::CustomCall(_)) {
                platform_api::custom_call::check_instruction(PLATFORM_NAME, instr)
                    .map_err(|e| e.context(format!("%{} in {}", instr.name, comp.name)))?;
            }
        }
    }
    Ok(())
}

fn check_executor(executor: &Arc<dyn StreamExecutor>) -> Result<()> {
    if executor.platform_id() != PLATFORM_NAME {
        return Err(Error::invalid_argument(format!(
            "the interpreter compiler cannot compile for a {} device",
            executor.platform_id()
        )));
    }
    Ok(())
}
