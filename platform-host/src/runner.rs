//! [`HostRunner`]: compile HLO text once and run it on literals, for this
//! crate's tests, examples and benchmarks (the service's `LocalClient` is the
//! general front door; this one needs nothing but this crate).

use crate::compiler::{compile_module, optimize};
use crate::executable::HostExecutable;
use crate::runtime::HostTransferManager;
use platform_api::{
    CompileOptions, Executable, HloModule, Literal, Platform, PlatformOptions, ProfileSink, Result,
    RunOptions, ShapedBuffer, Stream, StreamExecutor, TransferManager,
};
use std::sync::Arc;

/// A compiled program with a device and a stream to run it on.
pub struct HostRunner {
    pub executable: Arc<HostExecutable>,
    pub executor: Arc<dyn StreamExecutor>,
    pub stream: Arc<dyn Stream>,
    transfer: HostTransferManager,
}

impl HostRunner {
    /// Parses, optimizes and compiles `text` for one host device.
    pub fn compile(text: &str) -> Result<Self> {
        Self::compile_with(text, &CompileOptions::default())
    }

    /// [`HostRunner::compile`] with compile options (`host_fusion=off`,
    /// `fp_contract=off`, ...).
    pub fn compile_with(text: &str, options: &CompileOptions) -> Result<Self> {
        Self::compile_module_with(HloModule::parse(text)?, options)
    }

    /// Optimizes and compiles a parsed module.
    pub fn compile_module(module: HloModule) -> Result<Self> {
        Self::compile_module_with(module, &CompileOptions::default())
    }

    /// [`HostRunner::compile_module`] with compile options.
    pub fn compile_module_with(module: HloModule, options: &CompileOptions) -> Result<Self> {
        let platform = crate::runtime::platform::create(&PlatformOptions::default())?;
        let executor = platform.executor(0)?;
        let optimized = optimize(module, options)?;
        let executable = Arc::new(compile_module(optimized, options)?);
        let stream = executor.clone().create_stream()?;
        Ok(HostRunner {
            executable,
            executor,
            stream,
            transfer: HostTransferManager::new(),
        })
    }

    /// Copies literals to device buffers.
    pub fn to_device(&self, args: &[Literal]) -> Result<Vec<ShapedBuffer>> {
        args.iter()
            .map(|a| self.transfer.literal_to_device(&self.stream, a))
            .collect()
    }

    /// Runs on device buffers and waits.
    pub fn run_buffers(&self, args: &[ShapedBuffer]) -> Result<ShapedBuffer> {
        self.run_buffers_with(args, None)
    }

    /// Runs on device buffers with an optional profile, and waits.
    pub fn run_buffers_with(
        &self,
        args: &[ShapedBuffer],
        profile: Option<Arc<ProfileSink>>,
    ) -> Result<ShapedBuffer> {
        let mut options = RunOptions::new(self.stream.clone());
        options.profile = profile;
        let refs: Vec<&ShapedBuffer> = args.iter().collect();
        self.executable.execute_on_stream(&options, &refs)
    }

    /// Runs on literals and returns the result as a literal.
    pub fn run(&self, args: &[Literal]) -> Result<Literal> {
        let buffers = self.to_device(args)?;
        let result = self.run_buffers(&buffers)?;
        self.transfer
            .transfer_literal_from_device(&self.stream, &result)
    }
}

/// Compiles `text` and runs it once on `args`.
pub fn run_hlo(text: &str, args: &[Literal]) -> Result<Literal> {
    HostRunner::compile(text)?.run(args)
}
