//! [`Compiler`]: turns an [`HloModule`] into an [`Executable`] for one platform.

use crate::device::StreamExecutor;
use crate::error::Result;
use crate::executable::Executable;
use crate::hlo::HloModule;
use hlo_passes::legalize::{legalize, OpSupport};
use std::sync::Arc;

/// Options that steer compilation. Part of the compile-cache key: two compiles
/// with different options are different programs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Replicas the program runs as (collectives span them).
    pub replica_count: usize,
    /// SPMD partitions (computations per replica).
    pub num_partitions: usize,
    /// Backend-specific switches (`("xla_cpu_fusion", "false")`, ...), sorted by key.
    pub debug_options: Vec<(String, String)>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            replica_count: 1,
            num_partitions: 1,
            debug_options: Vec::new(),
        }
    }
}

impl CompileOptions {
    /// The value of a debug option, if set.
    pub fn debug_option(&self, key: &str) -> Option<&str> {
        self.debug_options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A platform's compiler.
///
/// # Contract
/// * [`run_hlo_passes`](Self::run_hlo_passes) takes a *verified* module and returns
///   an equivalent one (same entry signature, same results); it may only change
///   numbers where the platform documents that it does.
/// * [`run_backend`](Self::run_backend) takes the output of `run_hlo_passes` and
///   produces an executable for `executor`'s device (and any device of the same
///   platform).
/// * Errors name what could not be compiled: an unsupported op is `Unimplemented`
///   naming the op and instruction.
///
/// # Legalization: implementing fewer ops
/// A backend need not implement every HLO op. It declares what it does
/// implement in [`supported_ops`](Self::supported_ops) (an [`OpSupport`]: opcodes
/// and the element types each accepts); the provided [`compile`](Self::compile)
/// then runs, in this order:
/// 1. [`run_hlo_passes`](Self::run_hlo_passes) (the backend's own passes, usually
///    `hlo_passes::standard_pipeline`);
/// 2. [`legalize`] with the declaration, which inlines `call`s and `fusion`s the
///    backend lacks and rewrites every other undeclared op into declared ones
///    with exact (or documented-tolerance) expanders;
/// 3. [`run_backend`](Self::run_backend) on the legalized module.
///
/// Who verifies what: legalization itself checks the result and fails with one
/// `Unimplemented` error listing every op (with element types and an example
/// instruction) it could not rewrite, so `run_backend` receives only declared
/// ops (and structural ones: `parameter`, `constant`, `tuple`,
/// `get-tuple-element`). The backend still rejects attributes it does not handle
/// (an op declared but, say, with a layout or a window it cannot run). A
/// backend returning `None` (the default) implements everything itself and no
/// legalization runs. A backend overriding `compile` must keep this order.
///
/// # Threading
/// Compilers are shared (`Arc`) and may compile several modules at once.
pub trait Compiler: Send + Sync {
    /// The platform this compiler targets.
    fn platform_id(&self) -> &'static str;

    /// Platform-independent and platform-specific HLO passes.
    fn run_hlo_passes(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<HloModule>;

    /// Code generation: an executable for the optimised module.
    fn run_backend(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>>;

    /// What `run_backend` implements; `None` (the default): every op, so no
    /// legalization runs. See the trait docs.
    fn supported_ops(&self) -> Option<OpSupport> {
        None
    }

    /// `run_hlo_passes`, then legalization to [`supported_ops`](Self::supported_ops)
    /// when the backend declares them, then `run_backend`.
    fn compile(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        let optimized = self.run_hlo_passes(module, executor, options)?;
        let legal = match self.supported_ops() {
            Some(support) => legalize(&optimized, &support)?,
            None => optimized,
        };
        self.run_backend(legal, executor, options)
    }
}
