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

#[cfg(test)]
mod tests {
    //! The provided `compile`: legalization runs between `run_hlo_passes` and
    //! `run_backend` exactly when the backend declares its ops.
    use super::*;
    use crate::device::{DeviceDescription, DeviceMemoryBase, Event, MemoryUsage, Stream};
    use crate::error::Error;
    use hlo_ir::shape::ElementType;
    use hlo_ir::Opcode;
    use std::any::Any;
    use std::sync::Mutex;

    /// A device that is never used: the test compiler stops before running.
    struct NoDevice;

    impl StreamExecutor for NoDevice {
        fn platform_id(&self) -> &'static str {
            "none"
        }
        fn ordinal(&self) -> usize {
            0
        }
        fn description(&self) -> DeviceDescription {
            DeviceDescription::default()
        }
        fn allocate(&self, _size: usize) -> Result<DeviceMemoryBase> {
            Err(Error::unimplemented("no memory"))
        }
        unsafe fn deallocate(&self, _mem: DeviceMemoryBase) {}
        fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
            Err(Error::unimplemented("no streams"))
        }
        fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
            Err(Error::unimplemented("no events"))
        }
        fn synchronize_all_activity(&self) -> Result<()> {
            Ok(())
        }
        fn memory_usage(&self) -> MemoryUsage {
            MemoryUsage::default()
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    /// Records the module `run_backend` receives, then fails (no executable
    /// is needed to see what the backend was given).
    struct Recording {
        support: Option<OpSupport>,
        seen: Mutex<Option<HloModule>>,
    }

    impl Compiler for Recording {
        fn platform_id(&self) -> &'static str {
            "none"
        }
        fn run_hlo_passes(
            &self,
            module: HloModule,
            _: &Arc<dyn StreamExecutor>,
            _: &CompileOptions,
        ) -> Result<HloModule> {
            Ok(module)
        }
        fn run_backend(
            &self,
            module: HloModule,
            _: &Arc<dyn StreamExecutor>,
            _: &CompileOptions,
        ) -> Result<Arc<dyn Executable>> {
            *self.seen.lock().map_err(|_| Error::internal("poisoned"))? = Some(module);
            Err(Error::internal("recorded"))
        }
        fn supported_ops(&self) -> Option<OpSupport> {
            self.support.clone()
        }
    }

    const TEXT: &str = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT m = f32[4] maximum(a, b)\n}\n";

    fn opcodes(m: &HloModule) -> Vec<Opcode> {
        m.entry().instructions.iter().map(|i| i.opcode()).collect()
    }

    fn compile_with(
        support: Option<OpSupport>,
    ) -> (Result<Arc<dyn Executable>>, Option<HloModule>) {
        let compiler = Recording {
            support,
            seen: Mutex::new(None),
        };
        let device: Arc<dyn StreamExecutor> = Arc::new(NoDevice);
        let module = HloModule::parse(TEXT).expect("parses");
        let result = compiler.compile(module, &device, &CompileOptions::default());
        let seen = compiler.seen.lock().expect("not poisoned").take();
        (result, seen)
    }

    #[test]
    fn backends_get_only_the_ops_they_declare() {
        let (_, seen) = compile_with(None);
        assert!(opcodes(&seen.expect("backend ran")).contains(&Opcode::Maximum));
        let core = OpSupport::new()
            .ops(&[Opcode::Compare, Opcode::Select])
            .types(&[ElementType::F32, ElementType::Pred]);
        let (_, seen) = compile_with(Some(core));
        let seen = opcodes(&seen.expect("backend ran"));
        assert!(!seen.contains(&Opcode::Maximum), "{seen:?}");
        assert!(seen.contains(&Opcode::Select), "{seen:?}");
        // Nothing can make `maximum` out of `add` alone: the backend never runs.
        let useless = OpSupport::new().ops(&[Opcode::Add]);
        let (result, seen) = compile_with(Some(useless));
        let err = result.err().expect("legalization fails");
        assert_eq!(err.code(), crate::Code::Unimplemented, "{err}");
        assert!(err.message().contains("maximum [f32]"), "{err}");
        assert!(seen.is_none());
    }
}
