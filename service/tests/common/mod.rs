//! A tiny platform for the service's own tests: "ServiceTestHost".
//!
//! It exists so the client can be tested without depending on how far any real
//! backend has come, and so tests can observe things a real backend hides: how
//! many compiles ran, how many streams exist, which run ids and replicas an
//! execution saw. It is registered with `inventory::submit!` exactly as a
//! backend crate registers itself, so it is found by name through the registry.
//!
//! Memory is host memory (64-byte aligned). Streams run every operation at once
//! on the calling thread and keep the first error until
//! `block_host_until_done`. The executable evaluates a handful of ops on `f32`
//! arrays (parameter, constant, add, subtract, multiply, maximum, tuple,
//! get-tuple-element, replica-id) and reports one profile span per instruction.
//! Any other op is `Unimplemented`, naming it.

#![allow(dead_code)]

use platform_api::hlo::{BinaryOp, Op};
use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::{
    CompileOptions, Compiler, DeviceDescription, DeviceMemoryBase, Error, Event, EventStatus,
    Executable, GenericTransferManager, HloModule, HostCallback, Literal, MemoryUsage, Platform,
    PlatformOptions, Result, RunOptions, ShapedBuffer, Stream, StreamExecutor, TransferManager,
};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
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
/// Streams created in this process.
pub static STREAMS_CREATED: AtomicUsize = AtomicUsize::new(0);
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

fn create_platform(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    let count = options.device_count.unwrap_or(1);
    Ok(Arc::new(TestPlatform {
        executors: (0..count)
            .map(|ordinal| {
                Arc::new(TestExecutor {
                    ordinal,
                    usage: Mutex::new(MemoryUsage::default()),
                })
            })
            .collect(),
    }))
}

struct TestPlatform {
    executors: Vec<Arc<TestExecutor>>,
}

impl Platform for TestPlatform {
    fn id(&self) -> &'static str {
        NAME
    }
    fn device_count(&self) -> usize {
        self.executors.len()
    }
    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        self.executors
            .get(ordinal)
            .map(|e| e.clone() as Arc<dyn StreamExecutor>)
            .ok_or_else(|| Error::out_of_range(format!("no device {ordinal}")))
    }
}

pub struct TestExecutor {
    ordinal: usize,
    usage: Mutex<MemoryUsage>,
}

const ALIGN: usize = 64;

impl StreamExecutor for TestExecutor {
    fn platform_id(&self) -> &'static str {
        NAME
    }
    fn ordinal(&self) -> usize {
        self.ordinal
    }
    fn description(&self) -> DeviceDescription {
        DeviceDescription {
            name: NAME.into(),
            ..DeviceDescription::default()
        }
    }
    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        if size == 0 {
            return Ok(DeviceMemoryBase::NULL);
        }
        let layout = std::alloc::Layout::from_size_align(size, ALIGN)
            .map_err(|e| Error::resource_exhausted(e.to_string()))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::resource_exhausted(format!("{size} bytes")));
        }
        let mut u = self.usage.lock().unwrap();
        u.bytes_in_use += size as u64;
        u.peak_bytes_in_use = u.peak_bytes_in_use.max(u.bytes_in_use);
        u.live_allocations += 1;
        Ok(DeviceMemoryBase::new(ptr.cast(), size))
    }
    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        if mem.is_null() {
            return;
        }
        let layout = std::alloc::Layout::from_size_align(mem.size, ALIGN).unwrap();
        // SAFETY: the caller passes memory from `allocate` with this size.
        unsafe { std::alloc::dealloc(mem.opaque.cast(), layout) };
        let mut u = self.usage.lock().unwrap();
        u.bytes_in_use -= mem.size as u64;
        u.live_allocations -= 1;
    }
    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        STREAMS_CREATED.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(TestStream {
            executor: self,
            error: Mutex::new(None),
        }))
    }
    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
        Ok(Arc::new(TestEvent))
    }
    fn synchronize_all_activity(&self) -> Result<()> {
        Ok(())
    }
    fn memory_usage(&self) -> MemoryUsage {
        *self.usage.lock().unwrap()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct TestStream {
    executor: Arc<TestExecutor>,
    error: Mutex<Option<Error>>,
}

impl TestStream {
    fn run(&self, work: impl FnOnce() -> Result<()>) -> Result<()> {
        let mut error = self.error.lock().unwrap();
        if error.is_none() {
            if let Err(e) = work() {
                *error = Some(e);
            }
        }
        Ok(())
    }
}

impl Stream for TestStream {
    fn executor(&self) -> Arc<dyn StreamExecutor> {
        self.executor.clone()
    }
    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()> {
        if dst.size < src.len() {
            return Err(Error::invalid_argument("copy larger than its destination"));
        }
        self.run(|| {
            // SAFETY: `dst` holds at least `src.len()` bytes (checked above).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.opaque.cast(), src.len()) };
            Ok(())
        })
    }
    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        if src.size < len {
            return Err(Error::invalid_argument("copy larger than its source"));
        }
        self.run(|| {
            // SAFETY: the caller guarantees `dst` is valid for `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(src.opaque.cast::<u8>(), dst, len) };
            Ok(())
        })
    }
    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        self.run(|| {
            // SAFETY: both regions come from this device and hold `len` bytes.
            unsafe { std::ptr::copy(src.opaque.cast::<u8>(), dst.opaque.cast::<u8>(), len) };
            Ok(())
        })
    }
    fn host_callback(&self, callback: HostCallback) -> Result<()> {
        self.run(callback)
    }
    fn record_event(&self, _event: &Arc<dyn Event>) -> Result<()> {
        Ok(())
    }
    fn wait_for_event(&self, _event: &Arc<dyn Event>) -> Result<()> {
        Ok(())
    }
    fn block_host_until_done(&self) -> Result<()> {
        match self.error.lock().unwrap().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct TestEvent;

impl Event for TestEvent {
    fn status(&self) -> EventStatus {
        EventStatus::Complete
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
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
        Ok(Arc::new(TestExecutable { module }))
    }
}

struct TestExecutable {
    module: HloModule,
}

impl TestExecutable {
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

impl Executable for TestExecutable {
    fn module(&self) -> &HloModule {
        &self.module
    }
    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        RUNS.lock()
            .unwrap()
            .push((self.module.name.clone(), options.replica, options.run_id));
        if self.module.name == "gated" {
            wait_at_gate()?;
        }
        let tm = GenericTransferManager::new(NAME);
        let args = arguments
            .iter()
            .map(|b| tm.transfer_literal_from_device(&options.stream, b))
            .collect::<Result<Vec<_>>>()?;
        let result = self.evaluate(options, args)?;
        let shape = tm.device_shape(result.shape());
        let out = tm.allocate(&options.stream, &shape)?;
        tm.transfer_literal_to_device(&options.stream, &result, &out)?;
        Ok(out)
    }
}
