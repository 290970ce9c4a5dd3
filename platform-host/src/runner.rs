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

/// Test helpers: a program's Host result checked against the reference
/// evaluator, bit for bit.
#[cfg(test)]
pub(crate) mod check {
    use platform_api::evaluator::{PreparedModule, RunContext};
    use platform_api::{ElementType, HloModule, Literal, Shape};

    /// A literal of `shape` from `seed`: floats are multiples of 1/8 in
    /// [-4, 4), integers lie in `ints`, `pred`s are 0 or 1.
    pub fn random_literal(shape: &Shape, seed: u64, ints: std::ops::Range<i64>) -> Literal {
        let a = shape.as_array().expect("array parameter");
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let width = a.element_type.byte_size();
        let mut bytes = Vec::with_capacity(a.element_count() * width);
        for _ in 0..a.element_count() {
            let r = next();
            let x = (r % 64) as f64 / 8.0 - 4.0;
            let i = ints.start + (r % (ints.end - ints.start) as u64) as i64;
            match a.element_type {
                ElementType::F32 => bytes.extend_from_slice(&(x as f32).to_le_bytes()),
                ElementType::F64 => bytes.extend_from_slice(&x.to_le_bytes()),
                ElementType::BF16 => {
                    bytes.extend_from_slice(&half::bf16::from_f64(x).to_le_bytes())
                }
                ElementType::F16 => bytes.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
                ElementType::Pred => bytes.push((r & 1) as u8),
                // Other types: the integer's low bytes.
                _ => bytes.extend_from_slice(&i.to_le_bytes()[..width.min(8)]),
            }
            bytes.resize(bytes.len().next_multiple_of(width), 0);
        }
        Literal::from_bytes(shape.clone(), &bytes).unwrap()
    }

    /// Runs `text` on the Host and on the evaluator with `args` and asserts
    /// that the results' bytes agree.
    pub fn agrees_with_evaluator(name: &str, text: &str, args: Vec<Literal>) {
        let module = HloModule::parse(text).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
        let host = super::run_hlo(text, &args).unwrap_or_else(|e| panic!("{name}: host: {e}"));
        let want = PreparedModule::new(module, true)
            .and_then(|m| m.evaluate(args, &RunContext::default()))
            .unwrap_or_else(|e| panic!("{name}: evaluator: {e}"));
        let dims = |l: &Literal| {
            l.shape()
                .as_array()
                .map(|a| (a.element_type, a.dims.clone()))
        };
        assert_eq!(dims(&host), dims(&want), "{name}: shape");
        assert!(
            host.bytes().unwrap() == want.bytes().unwrap(),
            "{name}: the Host's result differs from the evaluator's"
        );
    }
}
