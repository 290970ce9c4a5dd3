//! [`HostCompiler`]: HLO passes, then lowering to a thunk sequence.
//!
//! * [`passes`]: the Host's interim HLO passes (call inlining, layout
//!   normalization, dead-code elimination).
//! * [`buffer_assignment`]: where every value lives (liveness-packed arena,
//!   in-place reuse, results written in place).
//! * [`lower`]: computation → [`crate::thunk::ThunkSequence`], nested sequences
//!   for control flow and fusions.

pub mod buffer_assignment;
pub mod lower;
pub mod passes;

use crate::executable::HostExecutable;
use crate::PLATFORM_NAME;
use buffer_assignment::{OutputMode, SequenceMode};
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
        _options: &CompileOptions,
    ) -> Result<HloModule> {
        passes::run_all(module)
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

/// Lowers an optimized module (the output of `run_hlo_passes`) to an executable.
pub fn compile_module(module: HloModule, options: &CompileOptions) -> Result<HostExecutable> {
    if options.replica_count == 0 || options.num_partitions == 0 {
        return Err(Error::invalid_argument(
            "replica_count and num_partitions must be at least 1",
        ));
    }
    // Layouts mean nothing past this point; a module that skipped
    // `run_hlo_passes` still gets its bitcasts made logical.
    let module = passes::layout::run(module)?;
    let entry = lower::compile_computation(&module, module.entry, ENTRY_MODE, options, true)?;
    HostExecutable::new(module, entry, options)
}
