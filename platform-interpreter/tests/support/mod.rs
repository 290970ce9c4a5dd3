//! Helpers shared by the Interpreter platform's integration tests: build small
//! modules from HLO text and run them through the full platform path (registry →
//! platform → executor → stream → transfer manager). Tests of what the evaluator
//! computes live with the evaluator (`hlo/evaluator/tests`).
#![allow(dead_code)]

use platform_api::registry;
use platform_api::{
    CompileOptions, Compiler, Literal, PlatformOptions, Result, RunOptions, StreamExecutor,
};
use platform_interpreter::InterpreterCompiler;
use std::sync::Arc;

pub fn parse(text: &str) -> platform_api::HloModule {
    platform_api::HloModule::parse(text)
        .unwrap_or_else(|e| panic!("test module does not parse: {e}\n{text}"))
}

pub fn f32s(l: &Literal) -> Vec<f32> {
    l.data::<f32>().expect("an f32 literal").to_vec()
}

pub fn s32s(l: &Literal) -> Vec<i32> {
    l.data::<i32>().expect("an s32 literal").to_vec()
}

pub fn u32s(l: &Literal) -> Vec<u32> {
    l.data::<u32>().expect("a u32 literal").to_vec()
}

/// An f32 array `0, 1, 2, ...` of these dimensions.
pub fn counting(dims: &[usize]) -> Literal {
    let n: usize = dims.iter().product();
    Literal::from_slice(dims, &(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap()
}

/// A fresh interpreter platform's executor (device 0 of `devices`).
pub fn executor(devices: usize) -> (Arc<dyn platform_api::Platform>, Arc<dyn StreamExecutor>) {
    let platform = registry::create_platform(
        "Interpreter",
        &PlatformOptions {
            device_count: Some(devices),
        },
    )
    .unwrap();
    let executor = platform.executor(0).unwrap();
    (platform, executor)
}

/// Runs `text` through the whole platform path on `executor`; `tweak` adjusts the
/// run options. Returns the result read back as a literal.
pub fn run_on_device(
    executor: &Arc<dyn StreamExecutor>,
    text: &str,
    args: &[Literal],
    tweak: impl FnOnce(&mut RunOptions),
) -> Result<Literal> {
    let compiler = InterpreterCompiler;
    let exe = compiler.compile(parse(text), executor, &CompileOptions::default())?;
    let stream = executor.clone().create_stream()?;
    let tm = registry::transfer_manager("Interpreter")?;
    let buffers = args
        .iter()
        .map(|a| tm.literal_to_device(&stream, a))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = buffers.iter().collect();
    let mut options = RunOptions::new(stream.clone());
    tweak(&mut options);
    let result = exe.execute_on_stream(&options, &refs)?;
    tm.transfer_literal_from_device(&stream, &result)
}
