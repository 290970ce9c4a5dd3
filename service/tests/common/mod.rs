//! A tiny platform for the service's own tests: "ServiceTestHost".
//!
//! It exists so the client can be tested without depending on how far any real
//! backend has come, and so tests can observe things a real backend hides: how
//! many compiles ran, how many streams exist, which run ids and replicas an
//! execution saw. It is registered with `inventory::submit!` exactly as a
//! backend crate registers itself, so it is found by name through the registry.
//!
//! Devices, memory, streams and the executable's plumbing are the platform
//! kit's (`platform_api::kit`): host memory with a ledger, streams that run
//! every operation at once on the calling thread and keep the first error until
//! `block_host_until_done`. The executable evaluates a handful of ops on `f32`
//! arrays (parameter, constant, add, subtract, multiply, maximum, tuple,
//! get-tuple-element, replica-id) and reports one profile span per instruction.
//! Any other op is `Unimplemented`, naming it.

#![allow(dead_code)]

use platform_api::hlo::{BinaryOp, Op};
use platform_api::kit::{
    HostDevice, HostDeviceConfig, HostDevices, LiteralExecutable, LiteralProgram,
};
use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::{
    CompileOptions, Compiler, DeviceDescription, Error, Executable, GenericTransferManager,
    HloModule, Literal, Platform, PlatformOptions, Result, RunOptions, StreamExecutor,
};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const NAME: &str = "ServiceTestHost";

/// Names of the modules the test compiler compiled in this process, one entry
/// per compile (to tell cache hits from misses).
pub static COMPILED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A gate executions of modules named "gated" wait at (for up to 10 s) until a
/// test opens it: lets a test prove that waiting for a device does not hold up
/// an async runtime's only worker thread.
pub static GATE: (Mutex<bool>, std::sync::Condvar) = (Mutex::new(false), std::sync::Condvar::new());

pub fn open_gate() {
    *GATE.0.lock().unwrap() = true;
    GATE.1.notify_all();
}

fn wait_at_gate() -> Result<()> {
    let guard = GATE.0.lock().unwrap();
    let (open, timeout) = GATE
        .1
        .wait_timeout_while(guard, std::time::Duration::from_secs(10), |open| !*open)
        .unwrap();
    if *open && !timeout.timed_out() {
        Ok(())
    } else {
        Err(Error::new(
            platform_api::Code::DeadlineExceeded,
            "the gate was never opened",
        ))
    }
}

/// How many times a module of this name was compiled.
pub fn compiles_of(module: &str) -> usize {
    COMPILED
        .lock()
        .unwrap()
        .iter()
        .filter(|m| *m == module)
        .count()
}
/// (module name, replica, run id) of every execution in this process.
pub static RUNS: Mutex<Vec<(String, usize, u64)>> = Mutex::new(Vec::new());

platform_api::inventory::submit! {
    PlatformRegistration {
        name: NAME,
        aliases: &["service-test"],
        priority: 1,
        probe: || Availability::Available { devices: 1 },
        create: create_platform,
    }
}
platform_api::inventory::submit! {
    CompilerRegistration { platform: NAME, create: || Arc::new(TestCompiler) }
}
platform_api::inventory::submit! {
    TransferManagerRegistration { platform: NAME, create: || Arc::new(GenericTransferManager::new(NAME)) }
}

fn describe(_ordinal: usize) -> DeviceDescription {
    DeviceDescription {
        name: NAME.into(),
        ..DeviceDescription::default()
    }
}

/// Devices of the platform kit: host memory with a ledger, inline streams.
fn create_platform(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    let config = HostDeviceConfig::inline(NAME, describe);
    Ok(Arc::new(HostDevices::new(
        config,
        options.device_count.unwrap_or(1),
    )?))
}

/// Streams ever created on `executor` (a device of this platform).
pub fn streams_created(executor: &Arc<dyn StreamExecutor>) -> u64 {
    executor
        .as_any()
        .downcast_ref::<HostDevice>()
        .map_or(0, HostDevice::streams_created)
}

struct TestCompiler;

impl Compiler for TestCompiler {
    fn platform_id(&self) -> &'static str {
        NAME
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
        COMPILED.lock().unwrap().push(module.name.clone());
        Ok(Arc::new(LiteralExecutable::new(
            NAME,
            TestProgram { module },
        )))
    }
}

struct TestProgram {
    module: HloModule,
}

impl TestProgram {
    fn evaluate(&self, options: &RunOptions, args: Vec<Literal>) -> Result<Literal> {
        let entry = self.module.entry();
        let mut values: Vec<Option<Literal>> = vec![None; entry.instructions.len()];
        for id in entry.ids() {
            let instr = entry.instr(id);
            let start = Instant::now();
            let operand = |i: usize| -> Result<&Literal> {
                let op = instr.operand(i)?;
                values[op.index()]
                    .as_ref()
                    .ok_or_else(|| Error::internal("operand not evaluated"))
            };
            let value = match &instr.op {
                Op::Parameter { number } => args
                    .get(*number)
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("missing argument"))?,
                Op::Constant { literal } => literal.clone(),
                Op::ReplicaId => Literal::scalar(options.replica as u32),
                Op::Tuple => Literal::tuple(
                    (0..instr.operands.len())
                        .map(|i| operand(i).cloned())
                        .collect::<Result<_>>()?,
                ),
                Op::GetTupleElement { index } => operand(0)?
                    .tuple_elements()
                    .get(*index)
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("bad tuple index"))?,
                Op::Binary(op) => {
                    let f: fn(f32, f32) -> f32 = match op {
                        BinaryOp::Add => |a, b| a + b,
                        BinaryOp::Subtract => |a, b| a - b,
                        BinaryOp::Multiply => |a, b| a * b,
                        BinaryOp::Maximum => |a, b| a.max(b),
                        other => {
                            return Err(Error::unimplemented(format!(
                                "{other:?} in %{}",
                                instr.name
                            )))
                        }
                    };
                    let (a, b) = (operand(0)?.data::<f32>()?, operand(1)?.data::<f32>()?);
                    let out: Vec<f32> = a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect();
                    Literal::from_slice(instr.shape.dims(), &out)?
                }
                other => {
                    return Err(Error::unimplemented(format!(
                        "op {} (%{}) is not supported by {NAME}",
                        other.opcode(),
                        instr.name
                    )))
                }
            };
            if let Some(sink) = &options.profile {
                sink.record(instr.name.clone(), instr.opcode().to_string(), start, 0);
            }
            values[id.index()] = Some(value);
        }
        values[entry.root.index()]
            .take()
            .ok_or_else(|| Error::internal("root not evaluated"))
    }
}

impl LiteralProgram for TestProgram {
    fn module(&self) -> &HloModule {
        &self.module
    }
    fn run(&self, arguments: Vec<Literal>, options: &RunOptions) -> Result<Literal> {
        RUNS.lock()
            .unwrap()
            .push((self.module.name.clone(), options.replica, options.run_id));
        if self.module.name == "gated" {
            wait_at_gate()?;
        }
        self.evaluate(options, arguments)
    }
}
