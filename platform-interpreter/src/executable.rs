//! [`InterpreterProgram`]: a planned module, run by the reference evaluator;
//! [`InterpreterExecutable`] is the kit's `LiteralExecutable` around it.
//!
//! One execution:
//! 1. at enqueue time, the kit checks the argument count and each argument's
//!    shape against the entry parameters (layouts may differ: arguments are read
//!    in their own layout), allocates the result buffer and writes its tuple
//!    index tables;
//! 2. it enqueues (and, the stream being inline, runs) a host callback that
//!    reads the arguments into literals, evaluates the entry computation here,
//!    and writes the result leaves in the layouts of the result buffer's shape.
//!
//! Errors found at enqueue time are returned directly; errors raised while
//! evaluating (a step limit, a bad branch index, an unimplemented op) are kept
//! by the stream and come back from `block_host_until_done`, as the
//! `Executable` contract says.

use crate::platform::PLATFORM_NAME;
use platform_api::evaluator::{EvalHooks, PreparedModule, RunContext};
use platform_api::hlo::HloInstruction;
use platform_api::kit::{LiteralExecutable, LiteralProgram};
use platform_api::profile::instruction_args;
use platform_api::{CompileOptions, HloModule, Literal, ProfileSink, Progress, Result, RunOptions};
use std::sync::Arc;
use std::time::Instant;

/// How the evaluator reaches this platform: its custom-call targets and the
/// run's profile.
struct InterpreterHooks {
    profile: Option<Arc<ProfileSink>>,
    progress: Option<Arc<Progress>>,
}

impl EvalHooks for InterpreterHooks {
    fn custom_call(&self, instr: &HloInstruction, operands: &[&Literal]) -> Result<Literal> {
        platform_api::custom_call::call_host_target(PLATFORM_NAME, instr, operands)
    }

    fn wants_timing(&self) -> bool {
        self.profile.is_some()
    }

    fn instruction_done(&self, instr: &HloInstruction, started: Instant, replica: usize) {
        if let Some(sink) = &self.profile {
            // Each replica runs on a thread of its own (named after it).
            let _ = replica;
            sink.record_with_args(
                instr.name.clone(),
                instr.opcode().name(),
                started,
                sink.this_thread(),
                Some(instruction_args(None, instr)),
            );
        }
    }

    fn loop_iteration(&self) {
        if let Some(p) = &self.progress {
            p.loop_iteration();
        }
    }
}

/// A module prepared for evaluation, with its replica and partition counts.
pub struct InterpreterProgram {
    prepared: PreparedModule,
    replica_count: usize,
    partition_count: usize,
}

/// An executable of the interpreter platform.
pub type InterpreterExecutable = LiteralExecutable<InterpreterProgram>;

impl InterpreterProgram {
    /// Plans `module` under `options` (`fp_contract` chooses contraction).
    pub fn new(module: HloModule, options: &CompileOptions) -> Result<Self> {
        let contract = platform_api::semantics::contraction::fp_contract_option(
            options.debug_option("fp_contract"),
        )?;
        let replica_count = module
            .config
            .replica_count
            .unwrap_or(options.replica_count)
            .max(1);
        let partition_count = module
            .config
            .num_partitions
            .unwrap_or(options.num_partitions)
            .max(1);
        Ok(InterpreterProgram {
            prepared: PreparedModule::new(module, contract)?,
            replica_count,
            partition_count,
        })
    }

    /// The executable of this program.
    pub fn into_executable(self) -> InterpreterExecutable {
        LiteralExecutable::new(PLATFORM_NAME, self)
    }

    /// Evaluates the entry on literals directly, with no device involved.
    pub fn evaluate_literals(&self, args: Vec<Literal>, ctx: &RunContext) -> Result<Literal> {
        self.prepared.evaluate(args, ctx)
    }
}

impl LiteralProgram for InterpreterProgram {
    fn module(&self) -> &HloModule {
        self.prepared.module()
    }

    fn run(&self, arguments: Vec<Literal>, options: &RunOptions) -> Result<Literal> {
        let assignment = options.device_assignment.as_ref();
        let ctx = RunContext {
            replica: options.replica,
            partition: options.partition,
            replica_count: assignment.map_or(self.replica_count, |d| d.replica_count()),
            partition_count: assignment.map_or(self.partition_count, |d| d.computation_count()),
            run_id: options.run_id,
            rng_seed: options.rng_seed,
            hooks: Some(Arc::new(InterpreterHooks {
                profile: options.profile.clone(),
                progress: options.progress.clone(),
            })),
            while_step_limit: options.while_step_limit,
        };
        self.prepared.evaluate(arguments, &ctx)
    }
}
