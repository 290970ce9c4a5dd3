//! [`Compiler`]: turns an [`HloModule`] into an [`Executable`] for one platform.

use crate::device::StreamExecutor;
use crate::error::Result;
use crate::executable::Executable;
use crate::hlo::HloModule;
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

    /// `run_hlo_passes` then `run_backend`.
    fn compile(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        let optimized = self.run_hlo_passes(module, executor, options)?;
        self.run_backend(optimized, executor, options)
    }
}
