//! The CUDA `Compiler` and `Executable`.

use crate::codegen;
use crate::compiler;
use crate::nvrtc::{self, Arch};
use crate::program::Program;
use crate::run::run_program;
use crate::runtime::{CudaExecutor, CudaStream, LoadedModule, StreamRun};
use crate::PLATFORM_NAME;
use platform_api::kit::executable::{allocate_result, check_arguments, check_platform};
use platform_api::semantics::contraction;
use platform_api::{
    CompileOptions, Compiler, Error, Executable, HloModule, OpSupport, Result, RunOptions,
    ShapedBuffer, StreamExecutor,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Passes ([`compiler::run_passes`]), legalization (the provided
/// `Compiler::compile`), then code generation.
/// PTX is compiled when an executable first runs on a device, for that
/// device's compute capability.
pub struct CudaCompiler;

impl Compiler for CudaCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<HloModule> {
        compiler::run_passes(module)
    }

    fn supported_ops(&self) -> Option<OpSupport> {
        Some(codegen::supported_ops())
    }

    fn run_backend(
        &self,
        module: HloModule,
        executor: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        let contract = contraction::fp_contract_option(options.debug_option("fp_contract"))?;
        let program = codegen::generate(&module, contract)?;
        let executable = CudaExecutable {
            module,
            program,
            loaded: Mutex::new(HashMap::new()),
        };
        // As XLA does, the device code is built at compile time for the
        // device compiled for (so NVRTC's errors and time belong to the
        // compile); other devices build theirs on first use.
        if let Some(cuda) = executor.as_any().downcast_ref::<CudaExecutor>() {
            executable.load_for(cuda)?;
        }
        Ok(Arc::new(executable))
    }
}

/// A generated program and its PTX modules, one per device it has run on.
///
/// Immutable but for the module cache; any number of threads may execute it,
/// each on its own stream.
pub struct CudaExecutable {
    module: HloModule,
    program: Program,
    loaded: Mutex<HashMap<usize, Arc<LoadedModule>>>,
}

impl CudaExecutable {
    /// The generated program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The program's PTX module on `stream`'s device, compiled and loaded on
    /// first use.
    fn loaded(&self, stream: &CudaStream) -> Result<Arc<LoadedModule>> {
        self.load_for(stream.cuda_executor())
    }

    /// The program's PTX module on `executor`'s device, compiled with NVRTC
    /// and loaded the first time it is asked for.
    fn load_for(&self, executor: &CudaExecutor) -> Result<Arc<LoadedModule>> {
        let ordinal = executor.ordinal();
        let mut cache = self
            .loaded
            .lock()
            .map_err(|_| Error::internal("CUDA module cache poisoned"))?;
        if let Some(module) = cache.get(&ordinal) {
            return Ok(module.clone());
        }
        let (major, minor) = executor.compute_capability();
        let ptx = nvrtc::compile_to_ptx(
            &self.program.source,
            &self.program.name,
            Arch { major, minor },
        )?;
        let names: Vec<String> = self
            .program
            .kernels
            .iter()
            .map(|k| k.name.clone())
            .collect();
        let module = Arc::new(executor.load_module(&ptx, &names)?);
        cache.insert(ordinal, module.clone());
        Ok(module)
    }
}

fn leaf_addresses(buffer: &ShapedBuffer) -> Vec<u64> {
    buffer
        .leaves()
        .into_iter()
        .map(|(_, _, node)| node.mem().addr())
        .collect()
}

impl Executable for CudaExecutable {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        check_platform(PLATFORM_NAME, options)?;
        check_arguments(&self.module, arguments)?;
        let stream = options
            .stream
            .as_any()
            .downcast_ref::<CudaStream>()
            .ok_or_else(|| Error::invalid_argument("a CUDA executable needs a CUDA stream"))?;
        let module = self.loaded(stream)?;
        let result = allocate_result(&self.module, options)?;
        let parameters: Vec<u64> = arguments.iter().flat_map(|a| leaf_addresses(a)).collect();
        let results = leaf_addresses(&result);
        let device = StreamRun {
            stream,
            module: &module,
        };
        run_program(&self.program, &device, &parameters, &results)?;
        Ok(result)
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        Some(self.program.arena_bytes)
    }
}
