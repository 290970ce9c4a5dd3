//! Platform "Example": the smallest complete backend, written only against
//! `platform_api`'s public contracts. Copy this file to start a new backend.
//!
//! A backend is five pieces and three registrations:
//!
//! | piece | here | what a real backend does instead |
//! | --- | --- | --- |
//! | [`Platform`] | [`ExamplePlatform`]: one device | enumerates devices found by a driver |
//! | [`StreamExecutor`] | [`ExampleExecutor`]: host memory | allocates device memory, makes queues |
//! | [`Stream`] / [`Event`] | [`InlineStream`], [`ExampleEvent`]: run work at once | enqueue on a device queue |
//! | `TransferManager` | `GenericTransferManager` (shared) | the same, unless memory is not byte-addressable |
//! | [`Compiler`] / [`Executable`] | checks ops, then evaluates HLO directly | generates code |
//!
//! The registrations right below the constants (`inventory::submit!`) are the
//! only way anything finds the backend: the registry and the service name no
//! backend type. Linking the crate (or, here, the test binary) is what
//! registers it.
//!
//! The executable evaluates a small op subset — parameter, constant, the
//! elementwise ops (through `platform_api::semantics`, the one definition of
//! their numbers every backend shares), broadcast, reshape, tuple,
//! get-tuple-element and 2-D f32 dot — and the compiler refuses anything else
//! with `Unimplemented` naming the op, *at compile time*: a user learns that a
//! program cannot run before any data is moved.

use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::{DotDimensionNumbers, Op};
use platform_api::index::{for_each_index, linear_index};
use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::transfer::{layout_to_row_major, row_major_to_layout};
use platform_api::{
    inventory, semantics, CompileOptions, Compiler, DeviceDescription, DeviceMemoryBase,
    ElementType, Error, Event, EventStatus, Executable, GenericTransferManager, HloModule,
    HostCallback, Literal, MemoryUsage, Platform, PlatformOptions, Result, RunOptions, Shape,
    ShapedBuffer, Stream, StreamExecutor, TransferManager,
};
use std::alloc::Layout;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The registered name; also the key the compiler and transfer manager use.
pub const PLATFORM_NAME: &str = "Example";
pub const ALIASES: &[&str] = &["ex", "skeleton"];
/// Lowest of all: a template must never become anyone's default platform.
pub const PRIORITY: i32 = 5;

// ---------------------------------------------------------------- registration

inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: ALIASES,
        priority: PRIORITY,
        // A probe must be cheap and side-effect free: it runs for every listing.
        // A hardware backend would look for its driver and answer
        // `Unavailable("libfoo.so not found")` instead of failing.
        probe: || Availability::Available { devices: 1 },
        // `options.device_count` is ignored: this platform always has one
        // device. (Host-memory platforms may honour it, hardware ones cap it.)
        create: |_options: &PlatformOptions| Ok(Arc::new(ExamplePlatform::new()) as Arc<dyn Platform>),
    }
}
inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: || Arc::new(ExampleCompiler) }
}
inventory::submit! {
    // Our memory is host memory, so the generic byte-copying manager serves.
    TransferManagerRegistration {
        platform: PLATFORM_NAME,
        create: || Arc::new(GenericTransferManager::new(PLATFORM_NAME)),
    }
}

// ---------------------------------------------------------------- platform

/// One device, made up front (devices are cheap here). `executor(i)` must hand
/// out the same `Arc` every time: callers compare and cache them.
pub struct ExamplePlatform {
    device: Arc<ExampleExecutor>,
}

impl ExamplePlatform {
    pub fn new() -> Self {
        ExamplePlatform {
            device: Arc::new(ExampleExecutor::default()),
        }
    }
}

impl Platform for ExamplePlatform {
    fn id(&self) -> &'static str {
        PLATFORM_NAME
    }
    fn device_count(&self) -> usize {
        1
    }
    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        match ordinal {
            0 => Ok(self.device.clone()),
            _ => Err(Error::out_of_range(format!(
                "Example has 1 device; device {ordinal} was asked for"
            ))),
        }
    }
}

// ---------------------------------------------------------------- executor

/// The device: 64-byte-aligned host allocations, with a table of live ones so
/// `deallocate` can refuse a pointer it never handed out and `memory_usage`
/// is exact (leak checks rely on it).
#[derive(Default)]
pub struct ExampleExecutor {
    live: Mutex<HashMap<usize, usize>>, // address -> size
}

const ALIGN: usize = 64;

impl ExampleExecutor {
    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<usize, usize>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl StreamExecutor for ExampleExecutor {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }
    fn ordinal(&self) -> usize {
        0
    }
    fn description(&self) -> DeviceDescription {
        DeviceDescription {
            name: "Example (host memory, inline streams)".into(),
            core_count: 1,
            ..Default::default()
        }
    }
    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        if size == 0 {
            return Ok(DeviceMemoryBase::NULL); // the contract allows it
        }
        let layout = Layout::from_size_align(size, ALIGN)
            .map_err(|e| Error::resource_exhausted(format!("{size} bytes: {e}")))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(Error::resource_exhausted(format!(
                "Example: out of memory for {size} bytes"
            )));
        }
        self.live().insert(ptr as usize, size);
        Ok(DeviceMemoryBase::new(ptr.cast(), size))
    }
    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        // Only free what we allocated, once; anything else is ignored.
        if let Some(size) = self.live().remove(&(mem.opaque as usize)) {
            // SAFETY: the table proves `allocate` made it with this size and alignment.
            unsafe {
                std::alloc::dealloc(
                    mem.opaque.cast(),
                    Layout::from_size_align_unchecked(size, ALIGN),
                )
            }
        }
    }
    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        Ok(Arc::new(InlineStream {
            executor: self,
            error: Mutex::new(None),
        }))
    }
    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
        Ok(Arc::new(ExampleEvent(Mutex::new(EventStatus::Pending))))
    }
    fn synchronize_all_activity(&self) -> Result<()> {
        Ok(()) // streams run work as it is enqueued: nothing is ever pending
    }
    fn memory_usage(&self) -> MemoryUsage {
        let live = self.live();
        let bytes = live.values().sum::<usize>() as u64;
        MemoryUsage {
            bytes_in_use: bytes,
            peak_bytes_in_use: bytes, // a real backend tracks the peak too
            live_allocations: live.len() as u64,
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- streams and events

/// A stream that runs each piece of work in the call that enqueues it. What is
/// left of the stream contract is its error rule: a failure while work runs is
/// *kept*, later work is skipped, and `block_host_until_done` returns the
/// error once and clears it.
pub struct InlineStream {
    executor: Arc<ExampleExecutor>,
    error: Mutex<Option<Error>>,
}

impl InlineStream {
    /// Runs `work` now unless an earlier piece failed; keeps its error.
    fn run(&self, work: impl FnOnce() -> Result<()>) -> Result<()> {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            if let Err(e) = work() {
                *slot = Some(e);
            }
        }
        Ok(()) // enqueueing itself succeeded
    }
}

/// Checks a copy of `len` bytes against a device buffer. Zero-length copies
/// never touch memory (a zero-size allocation is a null handle, and raw copies
/// from or to null are undefined even for zero bytes), so callers skip them.
fn check_len(mem: DeviceMemoryBase, len: usize, what: &str) -> Result<()> {
    if len > 0 && (mem.is_null() || len > mem.size) {
        return Err(Error::invalid_argument(format!(
            "{what}: {len} bytes do not fit a device buffer of {} bytes",
            mem.size
        )));
    }
    Ok(())
}

impl Stream for InlineStream {
    fn executor(&self) -> Arc<dyn StreamExecutor> {
        self.executor.clone()
    }
    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()> {
        check_len(dst, src.len(), "host-to-device copy")?;
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` holds at least `src.len()` bytes (checked) of our memory.
        self.run(|| unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.opaque.cast(), src.len());
            Ok(())
        })
    }
    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        check_len(src, len, "device-to-host copy")?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the caller guarantees `dst` for `len` bytes; `src` was checked.
        self.run(|| unsafe {
            std::ptr::copy(src.opaque.cast::<u8>(), dst, len);
            Ok(())
        })
    }
    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        check_len(dst, len, "device-to-device copy")?;
        check_len(src, len, "device-to-device copy")?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges were checked against their buffers.
        self.run(|| unsafe {
            std::ptr::copy(src.opaque.cast::<u8>(), dst.opaque.cast::<u8>(), len);
            Ok(())
        })
    }
    fn host_callback(&self, callback: HostCallback) -> Result<()> {
        self.run(callback)
    }
    fn record_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = event
            .as_any()
            .downcast_ref::<ExampleEvent>()
            .ok_or_else(|| {
                Error::invalid_argument("an Example stream can only record Example events")
            })?;
        let failed = self.error.lock().map(|e| e.is_some()).unwrap_or(true);
        *event.0.lock().unwrap_or_else(|p| p.into_inner()) = if failed {
            EventStatus::Error
        } else {
            EventStatus::Complete
        };
        Ok(())
    }
    fn wait_for_event(&self, _event: &Arc<dyn Event>) -> Result<()> {
        Ok(()) // whoever recorded it has already run everything before it
    }
    fn block_host_until_done(&self) -> Result<()> {
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A marker: complete as soon as an inline stream records it.
pub struct ExampleEvent(Mutex<EventStatus>);

impl Event for ExampleEvent {
    fn status(&self) -> EventStatus {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn synchronize(&self) -> Result<()> {
        match self.status() {
            EventStatus::Error => Err(Error::internal(
                "the recording stream failed before the event",
            )),
            _ => Ok(()),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- compiler

/// "Compiling" is checking: every instruction must be one the executable can
/// evaluate, so an unsupported program fails here, naming the op.
pub struct ExampleCompiler;

fn the_2d_f32_matmul() -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dims: vec![1],
        rhs_contracting_dims: vec![0],
        ..Default::default()
    }
}

fn check_supported(module: &HloModule) -> Result<()> {
    for instr in &module.entry().instructions {
        let supported = match &instr.op {
            Op::Parameter { .. } | Op::Constant { .. } | Op::Unary(_) | Op::Binary(_) => true,
            Op::Compare { .. } | Op::Select | Op::Clamp | Op::Convert => true,
            Op::Broadcast { .. } | Op::Reshape | Op::Tuple | Op::GetTupleElement { .. } => true,
            Op::Dot { dnums, .. } => {
                *dnums == the_2d_f32_matmul()
                    && instr.shape.element_type() == Some(ElementType::F32)
                    && instr.shape.rank() == 2
            }
            _ => false,
        };
        if !supported {
            let what = match instr.op {
                Op::Dot { .. } => "dot other than a 2-D f32 matrix product".to_string(),
                _ => instr.opcode().to_string(),
            };
            return Err(Error::unimplemented(format!(
                "the Example platform does not implement {what} (%{})",
                instr.name
            )));
        }
    }
    Ok(())
}

impl Compiler for ExampleCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }
    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<HloModule> {
        verify_module(&module)?; // no optimisations: the HLO runs as written
        Ok(module)
    }
    fn run_backend(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        check_supported(&module)?;
        Ok(Arc::new(ExampleExecutable {
            module: Arc::new(module),
        }))
    }
}

// ---------------------------------------------------------------- executable

/// Runs by evaluating the entry computation on literals read from the argument
/// buffers (which are host memory on this platform).
pub struct ExampleExecutable {
    module: Arc<HloModule>,
}

impl Executable for ExampleExecutable {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        // 1. Check what can be checked before anything is enqueued.
        let executor = options.stream.executor();
        if executor.platform_id() != PLATFORM_NAME {
            return Err(Error::invalid_argument(
                "an Example executable runs on Example streams only",
            ));
        }
        let params = self.parameter_shapes();
        if arguments.len() != params.len() {
            return Err(Error::invalid_argument(format!(
                "{} takes {} arguments; {} were given",
                self.module.name,
                params.len(),
                arguments.len()
            )));
        }
        for (i, (a, p)) in arguments.iter().zip(&params).enumerate() {
            if !a.shape().compatible(p) {
                return Err(Error::invalid_argument(format!(
                    "argument {i} has shape {}, parameter {i} is {p}",
                    a.shape()
                )));
            }
        }
        // 2. Allocate the result and write its tuple index tables (on the stream).
        let result =
            ShapedBuffer::allocate(&executor, &self.result_shape().with_default_layouts())?;
        GenericTransferManager::new(PLATFORM_NAME)
            .write_tuple_index_tables(&options.stream, &result)?;
        // 3. Enqueue the computation. The callback owns clones (Arcs) of
        //    everything, so buffers stay alive until it has run.
        let (module, out) = (self.module.clone(), result.clone());
        let args: Vec<ShapedBuffer> = arguments.iter().map(|a| (*a).clone()).collect();
        options.stream.host_callback(Box::new(move || {
            let values = args.iter().map(read_buffer).collect::<Result<Vec<_>>>()?;
            write_buffer(&out, &evaluate(&module, values)?)
        }))?;
        Ok(result)
    }
}

/// A device value as a literal (a tuple node's elements come from its leaves).
fn read_buffer(buffer: &ShapedBuffer) -> Result<Literal> {
    match buffer.shape() {
        Shape::Tuple(elements) => Ok(Literal::tuple(
            (0..elements.len())
                .map(|i| read_buffer(&buffer.sub_buffer(&[i])?))
                .collect::<Result<_>>()?,
        )),
        Shape::Array(array) => {
            let mem = buffer.root_buffer();
            let len = array.byte_size();
            check_len(mem, len, "argument")?;
            let bytes: &[u8] = if len == 0 {
                &[]
            } else {
                // SAFETY: Example memory is host memory, at least `len` bytes (checked).
                unsafe { std::slice::from_raw_parts(mem.opaque.cast::<u8>(), len) }
            };
            Literal::from_bytes(
                buffer.shape().without_layout(),
                &layout_to_row_major(bytes, array),
            )
        }
        Shape::Token => Ok(Literal::token()),
    }
}

/// Writes a literal's leaves into a result buffer of the same shape.
fn write_buffer(buffer: &ShapedBuffer, value: &Literal) -> Result<()> {
    for (index, shape, node) in buffer.leaves() {
        let leaf = index.iter().try_fold(value, |v, &i| {
            v.tuple_elements()
                .get(i)
                .ok_or_else(|| Error::internal("result shape mismatch"))
        })?;
        let bytes = row_major_to_layout(leaf.bytes()?, shape.array_or_err()?);
        check_len(node.mem(), bytes.len(), "result")?;
        if bytes.is_empty() {
            continue;
        }
        // SAFETY: the node is our host memory with room for `bytes` (checked).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), node.mem().opaque.cast(), bytes.len())
        };
    }
    Ok(())
}

/// Evaluates the entry computation, one instruction at a time, in order.
fn evaluate(module: &HloModule, args: Vec<Literal>) -> Result<Literal> {
    let comp = module.entry();
    let mut values: Vec<Literal> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let operand = |i: usize| -> Result<&Literal> {
            values
                .get(instr.operand(i)?.index())
                .ok_or_else(|| Error::internal("operand after user"))
        };
        let value = match &instr.op {
            Op::Parameter { number } => args
                .get(*number)
                .cloned()
                .ok_or_else(|| Error::internal("missing argument"))?,
            Op::Constant { literal } => literal.clone(),
            Op::Unary(op) => semantics::unary(*op, operand(0)?, &instr.shape)?,
            Op::Binary(op) => semantics::binary(*op, operand(0)?, operand(1)?, &instr.shape)?,
            Op::Compare {
                direction,
                compare_type,
            } => semantics::compare(*direction, *compare_type, operand(0)?, operand(1)?)?,
            Op::Select => semantics::select(operand(0)?, operand(1)?, operand(2)?)?,
            Op::Clamp => semantics::clamp(operand(0)?, operand(1)?, operand(2)?)?,
            Op::Convert => semantics::convert(
                operand(0)?,
                instr.shape.element_type().unwrap_or(ElementType::F32),
            )?,
            Op::Reshape => operand(0)?.reshape(instr.shape.dims())?,
            Op::Broadcast { dimensions } => broadcast(operand(0)?, &instr.shape, dimensions)?,
            Op::Tuple => Literal::tuple(
                (0..instr.operands.len())
                    .map(|i| operand(i).cloned())
                    .collect::<Result<_>>()?,
            ),
            Op::GetTupleElement { index } => operand(0)?
                .tuple_elements()
                .get(*index)
                .cloned()
                .ok_or_else(|| Error::internal("tuple index out of range"))?,
            Op::Dot { .. } => matmul(operand(0)?, operand(1)?)?,
            _ => {
                return Err(Error::unimplemented(format!(
                    "Example: {} (%{})",
                    instr.opcode(),
                    instr.name
                )))
            }
        };
        values.push(value);
    }
    values
        .into_iter()
        .nth(comp.root.index())
        .ok_or_else(|| Error::internal("no root value"))
}

/// Result element at `index` is operand element at `index[dimensions[i]]`
/// along each operand dimension `i`; elements are copied as raw bytes.
fn broadcast(x: &Literal, shape: &Shape, dimensions: &[usize]) -> Result<Literal> {
    let (src, dims) = (x.bytes()?, x.dims());
    let width = shape.element_type().map_or(1, |t| t.byte_size());
    let strides = platform_api::shape::row_major_strides(dims);
    let mut out = Vec::with_capacity(shape.element_count() * width);
    let mut at = vec![0usize; dims.len()];
    for_each_index(shape.dims(), |index| {
        for (a, &d) in at.iter_mut().zip(dimensions) {
            *a = index[d];
        }
        let from = linear_index(&at, &strides) * width;
        out.extend_from_slice(&src[from..from + width]);
    });
    Literal::from_bytes(shape.without_layout(), &out)
}

/// `[m, k] x [k, n] -> [m, n]` in f32, accumulating along k in order.
fn matmul(a: &Literal, b: &Literal) -> Result<Literal> {
    let (&[m, k], &[_, n]) = (a.dims(), b.dims()) else {
        return Err(Error::internal("matmul operands must be 2-D"));
    };
    let (a, b) = (a.data::<f32>()?, b.data::<f32>()?);
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0, |acc, p| acc + a[i * k + p] * b[p * n + j]);
        }
    }
    Literal::from_slice(&[m, n], &c)
}
