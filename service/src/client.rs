//! [`LocalClient`]: compile HLO once, run it many times, from many threads.
//!
//! The client owns a [`Backend`], a [`CompileCache`] and a small pool of streams
//! per device. It offers three ways to run a compiled program:
//!
//! * on host values ([`LocalClient::execute`]): arguments are copied to the
//!   device, the program runs, the result is copied back;
//! * on device-resident values ([`LocalClient::to_device`],
//!   [`LocalClient::execute_buffers`], [`LocalClient::to_literal`]): the caller
//!   keeps [`DeviceBuffer`]s between runs and pays for transfers only when it
//!   asks; dropping (or [`LocalClient::release`]-ing) a buffer frees it;
//! * on several replicas at once ([`LocalClient::execute_replicated`]): one
//!   thread per replica, devices from the platform's placer, one shared
//!   `run_id` so the replicas meet at their collectives.
//!
//! Every execution takes its own stream from the pool (or creates one), runs
//! to completion on it and gives it back, so any number of threads can run the
//! same executable at once. Executions are synchronous: when a call returns, the
//! stream has finished all the work it enqueued, so buffers can be dropped or
//! read without further synchronisation.

use crate::backend::Backend;
use crate::cache::{CacheKey, CompileCache, Fingerprint};
use crate::profile::record_span;
use platform_api::{
    CompileOptions, ComputationPlacer, DeviceAssignment, Error, Executable, HloModule, Literal,
    ProfileSink, Progress, Result, RunOptions, Shape, ShapedBuffer, Stream, StreamExecutor,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// One entry parameter of a program, as the user's module declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// The parameter instruction's name (without `%`).
    pub name: String,
    pub shape: Shape,
}

/// A compiled program ready to run on its client's backend.
pub struct LoadedExecutable {
    executable: Arc<dyn Executable>,
    key: CacheKey,
    module_name: String,
    parameters: Vec<Parameter>,
    result_shape: Shape,
    /// Each parameter's shape on the device (the layout buffers must have).
    device_parameter_shapes: Vec<Shape>,
    /// Per parameter, the id of the last [`DeviceBuffer`] found to have
    /// exactly its device shape, which is also compatible with the
    /// parameter's (0: none yet): that buffer passes both checks again at
    /// the cost of one load, where comparing shapes is most of the checks'
    /// time in a small program's launch.
    exact_arguments: Vec<AtomicU64>,
    compile_time: Duration,
    /// The launch's device assignment and the placer that made it: worked
    /// out on the first single-device execution of a launch and reused by
    /// the next ones with the same placer (a repeated small collective
    /// otherwise pays the placer's allocations every call).
    assignment: OnceLock<(Arc<dyn ComputationPlacer>, Arc<DeviceAssignment>)>,
}

impl LoadedExecutable {
    /// The backend's executable.
    pub fn executable(&self) -> &Arc<dyn Executable> {
        &self.executable
    }
    /// The fingerprint of the module's canonical text.
    pub fn fingerprint(&self) -> Fingerprint {
        self.key.fingerprint
    }
    /// The platform it was compiled for.
    pub fn platform(&self) -> &'static str {
        self.key.platform
    }
    pub fn options(&self) -> &CompileOptions {
        &self.key.options
    }
    /// The module's name (`HloModule name`).
    pub fn name(&self) -> &str {
        &self.module_name
    }
    /// The entry parameters, in parameter-number order.
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }
    pub fn result_shape(&self) -> &Shape {
        &self.result_shape
    }
    /// How long the compile that produced this executable took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }
    /// Device memory one execution needs beyond its arguments, if the backend knows.
    pub fn peak_memory_bytes(&self) -> Option<u64> {
        self.executable.peak_memory_bytes()
    }

    /// Checks argument shapes (layouts ignored) against the parameters.
    fn check_argument_shapes<'a>(
        &self,
        shapes: impl ExactSizeIterator<Item = &'a Shape>,
    ) -> Result<()> {
        if shapes.len() != self.parameters.len() {
            return Err(Error::invalid_argument(format!(
                "module {} takes {} argument(s) but {} were given",
                self.module_name,
                self.parameters.len(),
                shapes.len()
            )));
        }
        for (i, (shape, param)) in shapes.zip(&self.parameters).enumerate() {
            if !shape.compatible(&param.shape) {
                return Err(Error::invalid_argument(format!(
                    "argument {i} has shape {} but parameter {i} (%{}) of module {} expects {}",
                    shape.without_layout(),
                    param.name,
                    self.module_name,
                    param.shape.without_layout()
                )));
            }
        }
        Ok(())
    }
}

impl LoadedExecutable {
    /// [`LoadedExecutable::check_argument_shapes`] for device buffers, which
    /// a buffer that passed before with exactly the parameter's device
    /// shape passes again without comparing shapes.
    fn check_buffer_shapes(&self, args: &[&DeviceBuffer]) -> Result<()> {
        let known = args.len() == self.exact_arguments.len()
            && args
                .iter()
                .zip(&self.exact_arguments)
                .all(|(arg, exact)| exact.load(Ordering::Relaxed) == arg.id);
        if known {
            return Ok(());
        }
        self.check_argument_shapes(args.iter().map(|b| b.shape()))?;
        for (i, arg) in args.iter().enumerate() {
            if self.is_exact(i, arg) {
                if let Some(exact) = self.exact_arguments.get(i) {
                    exact.store(arg.id, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }

    /// Whether `arg` has exactly parameter `i`'s device shape (remembered,
    /// or compared), so it needs no relayout.
    fn is_exact(&self, i: usize, arg: &DeviceBuffer) -> bool {
        self.exact_arguments
            .get(i)
            .is_some_and(|e| e.load(Ordering::Relaxed) == arg.id)
            || self
                .device_parameter_shapes
                .get(i)
                .is_some_and(|want| arg.shape() == want)
    }
}

impl std::fmt::Debug for LoadedExecutable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedExecutable")
            .field("module", &self.module_name)
            .field("platform", &self.key.platform)
            .field("fingerprint", &self.key.fingerprint.to_string())
            .finish()
    }
}

/// The outcome of [`LocalClient::compile`].
#[derive(Clone, Debug)]
pub struct Compiled {
    pub executable: Arc<LoadedExecutable>,
    /// True when the program came from the compile cache.
    pub cache_hit: bool,
    /// Time this call took (a hit is fast; a miss includes verification and compilation).
    pub elapsed: Duration,
}

/// How to run one execution.
#[derive(Clone, Debug, Default)]
pub struct ExecuteOptions {
    /// The device to run on (for host-value executions and buffer executions
    /// with no arguments; otherwise the arguments' device).
    pub device: usize,
    /// Where to record spans: the client's transfers and execution, plus
    /// whatever the backend reports per instruction.
    pub profile: Option<Arc<ProfileSink>>,
    /// Seed for `rng` instructions.
    pub rng_seed: u64,
    /// Bound on `while` iterations (`None`: unbounded).
    pub while_step_limit: Option<u64>,
    /// Counters the platform bumps as it runs (loop iterations), for a watcher.
    pub progress: Option<Arc<Progress>>,
}

/// The outcome of an execution on host values.
#[derive(Clone, Debug)]
pub struct Execution {
    pub result: Literal,
    /// Time from launch until the device finished (transfers excluded).
    pub execute_time: Duration,
    /// Time including argument and result transfers.
    pub total_time: Duration,
}

/// The outcome of an execution on device buffers.
#[derive(Debug)]
pub struct BufferExecution {
    pub result: DeviceBuffer,
    /// Time from launch until the device finished.
    pub execute_time: Duration,
}

/// A value kept on a device between executions. Dropping it frees its device
/// memory (unless another buffer shares it: results may alias arguments).
#[derive(Clone, Debug)]
pub struct DeviceBuffer {
    buffer: ShapedBuffer,
    /// Unique in the process (clones share it, and their shape): an
    /// executable remembers the last buffer it found of exactly each
    /// parameter's device shape by this, and checks that buffer again
    /// without comparing shapes. A buffer's shape never changes.
    id: u64,
}

static NEXT_BUFFER_ID: AtomicU64 = AtomicU64::new(1);

impl DeviceBuffer {
    fn new(buffer: ShapedBuffer) -> DeviceBuffer {
        DeviceBuffer {
            buffer,
            id: NEXT_BUFFER_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The on-device shape (with its layout).
    pub fn shape(&self) -> &Shape {
        self.buffer.shape()
    }
    pub fn device_ordinal(&self) -> usize {
        self.buffer.device_ordinal()
    }
    /// Bytes of device memory this value refers to.
    pub fn byte_size(&self) -> usize {
        self.buffer.byte_size()
    }
    pub fn shaped_buffer(&self) -> &ShapedBuffer {
        &self.buffer
    }
    /// Splits a tuple value into its elements (sharing memory).
    pub fn decompose_tuple(&self) -> Result<Vec<DeviceBuffer>> {
        Ok(self
            .buffer
            .decompose_tuple()?
            .into_iter()
            .map(DeviceBuffer::new)
            .collect())
    }
}

/// Streams not in use, per device. An execution borrows one and returns it.
struct StreamPool {
    free: Vec<Mutex<Vec<Arc<dyn Stream>>>>,
}

/// More idle streams than this per device are dropped rather than kept.
const MAX_IDLE_STREAMS_PER_DEVICE: usize = 16;

impl StreamPool {
    fn new(devices: usize) -> Self {
        StreamPool {
            free: (0..devices).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    fn acquire<'a>(&'a self, executor: &Arc<dyn StreamExecutor>) -> Result<PooledStream<'a>> {
        let ordinal = executor.ordinal();
        let pooled = self
            .free
            .get(ordinal)
            .and_then(|f| f.lock().ok())
            .and_then(|mut f| f.pop());
        let stream = match pooled {
            Some(s) => s,
            None => executor.clone().create_stream()?,
        };
        Ok(PooledStream {
            pool: self,
            ordinal,
            stream: Some(stream),
        })
    }
}

/// A stream on loan from the pool; goes back when dropped.
struct PooledStream<'a> {
    pool: &'a StreamPool,
    ordinal: usize,
    stream: Option<Arc<dyn Stream>>,
}

impl PooledStream<'_> {
    fn get(&self) -> Result<&Arc<dyn Stream>> {
        self.stream
            .as_ref()
            .ok_or_else(|| Error::internal("pooled stream used after release"))
    }
}

impl Drop for PooledStream<'_> {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            if let Some(Ok(mut free)) = self.pool.free.get(self.ordinal).map(|f| f.lock()) {
                if free.len() < MAX_IDLE_STREAMS_PER_DEVICE {
                    free.push(stream);
                }
            }
        }
    }
}

/// On failure, waits for whatever the stream still has queued (a launch that
/// failed halfway may have enqueued work that uses buffers about to be dropped),
/// then passes the error on. The stream's own error, if any, is cleared by the
/// wait; the first error is the one worth reporting.
fn drain_on_error<T>(stream: &Arc<dyn Stream>, result: Result<T>) -> Result<T> {
    if result.is_err() {
        let _ = stream.block_host_until_done();
    }
    result
}

/// Whether two executors are the same object (not merely the same ordinal).
fn same_executor(a: &Arc<dyn StreamExecutor>, b: &Arc<dyn StreamExecutor>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

/// Compiles and runs HLO programs on one backend. Share it freely (`Arc`): all
/// methods take `&self` and may run concurrently.
pub struct LocalClient {
    backend: Arc<Backend>,
    cache: CompileCache<LoadedExecutable>,
    streams: StreamPool,
}

/// A run id unique in this process. The collectives' in-process meetings
/// are keyed by run id (and, on the Host, not by client or module), so two
/// clients' concurrent runs must never share one: a per-client counter let
/// the first runs of two clients meet each other's devices.
fn next_run_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl LocalClient {
    pub fn new(backend: Arc<Backend>) -> LocalClient {
        let devices = backend.device_count();
        LocalClient {
            backend,
            cache: CompileCache::new(),
            streams: StreamPool::new(devices),
        }
    }

    /// A client for the platform `name` (see [`Backend::new`]): `None` picks the
    /// highest-priority available platform; names and aliases match without
    /// regard to case.
    ///
    /// ```
    /// use service::LocalClient;
    /// use platform_api::{CompileOptions, Literal};
    ///
    /// let client = LocalClient::for_platform(Some("interpreter"))?;
    /// let compiled = client.compile_text(
    ///     "HloModule axpy
    ///      ENTRY e {
    ///        a = f32[] parameter(0)
    ///        x = f32[3] parameter(1)
    ///        y = f32[3] parameter(2)
    ///        aa = f32[3] broadcast(a), dimensions={}
    ///        ax = f32[3] multiply(aa, x)
    ///        ROOT r = f32[3] add(ax, y)
    ///      }",
    ///     &CompileOptions::default(),
    /// )?;
    /// let out = client.execute(
    ///     &compiled.executable,
    ///     &[
    ///         Literal::scalar(2f32),
    ///         Literal::vector(&[1f32, 2.0, 3.0]),
    ///         Literal::vector(&[10f32, 20.0, 30.0]),
    ///     ],
    /// )?;
    /// assert_eq!(out.data::<f32>()?, &[12.0, 24.0, 36.0]);
    /// # Ok::<(), platform_api::Error>(())
    /// ```
    ///
    /// A name nobody registered is `NotFound`, and the message lists the
    /// registered platforms:
    ///
    /// ```
    /// let err = service::LocalClient::for_platform(Some("no-such-device")).unwrap_err();
    /// assert_eq!(err.code(), platform_api::Code::NotFound);
    /// assert!(err.message().contains("Interpreter"));
    /// ```
    pub fn for_platform(name: Option<&str>) -> Result<LocalClient> {
        Ok(LocalClient::new(Arc::new(Backend::new(name)?)))
    }

    pub fn backend(&self) -> &Arc<Backend> {
        &self.backend
    }

    pub fn platform_name(&self) -> &'static str {
        self.backend.platform_name()
    }

    /// Verifies and compiles `module`, or returns the cached executable compiled
    /// from the same canonical text with the same options.
    pub fn compile(&self, module: &HloModule, options: &CompileOptions) -> Result<Compiled> {
        let start = Instant::now();
        let text = module.to_text();
        let key = CacheKey {
            fingerprint: Fingerprint::of(&text),
            platform: self.platform_name(),
            options: options.clone(),
        };
        let (executable, cache_hit) = self
            .cache
            .get_or_compile(key.clone(), || self.compile_uncached(module, key))?;
        let elapsed = start.elapsed();
        tracing::debug!(
            module = %module.name,
            platform = self.platform_name(),
            fingerprint = %executable.fingerprint(),
            cache_hit,
            elapsed_ms = elapsed.as_secs_f64() * 1e3,
            "compile"
        );
        Ok(Compiled {
            executable,
            cache_hit,
            elapsed,
        })
    }

    /// Parses HLO or StableHLO text and compiles it (see
    /// [`LocalClient::compile`], [`crate::program::parse_program`]).
    pub fn compile_text(&self, text: &str, options: &CompileOptions) -> Result<Compiled> {
        self.compile(&crate::program::parse_program(text)?, options)
    }

    fn compile_uncached(&self, module: &HloModule, key: CacheKey) -> Result<LoadedExecutable> {
        let start = Instant::now();
        let platform = self.platform_name();
        platform_api::hlo::verifier::verify_module(module)
            .map_err(|e| e.context(format!("module {} does not verify", module.name)))?;
        let entry = module.entry();
        let parameters: Vec<Parameter> = entry
            .parameters()
            .into_iter()
            .map(|id| {
                let instr = entry.instr(id);
                Parameter {
                    name: instr.name.clone(),
                    shape: instr.shape.clone(),
                }
            })
            .collect();
        let result_shape = entry.root_instr().shape.clone();
        let executor = self.backend.executor(0)?;
        let executable = self
            .backend
            .compiler()
            .compile(module.clone(), executor, &key.options)
            .map_err(|e| e.context(format!("compiling module {} for {platform}", module.name)))?;
        let compiled_parameters = executable.parameter_shapes();
        if compiled_parameters.len() != parameters.len() {
            return Err(Error::internal(format!(
                "the {platform} compiler changed module {}'s parameter count from {} to {}",
                module.name,
                parameters.len(),
                compiled_parameters.len()
            )));
        }
        let transfer_manager = self.backend.transfer_manager();
        let device_parameter_shapes: Vec<Shape> = compiled_parameters
            .iter()
            .map(|s| transfer_manager.device_shape(s))
            .collect();
        let exact_arguments = device_parameter_shapes
            .iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(LoadedExecutable {
            executable,
            key,
            module_name: module.name.clone(),
            parameters,
            result_shape,
            device_parameter_shapes,
            exact_arguments,
            compile_time: start.elapsed(),
            assignment: OnceLock::new(),
        })
    }

    /// Programs in the compile cache.
    pub fn cached_programs(&self) -> usize {
        self.cache.len()
    }

    /// Empties the compile cache.
    pub fn clear_cache(&self) {
        self.cache.clear()
    }

    /// Runs `exe` on host values and returns its result. Arguments are checked
    /// against the parameters first; a mismatch names both shapes:
    ///
    /// ```
    /// use platform_api::{CompileOptions, Literal};
    /// let client = service::LocalClient::for_platform(Some("interpreter"))?;
    /// let neg = client.compile_text(
    ///     "HloModule n ENTRY e { x = f32[2] parameter(0) ROOT r = f32[2] negate(x) }",
    ///     &CompileOptions::default(),
    /// )?;
    /// let err = client
    ///     .execute(&neg.executable, &[Literal::vector(&[1f32, 2.0, 3.0])])
    ///     .unwrap_err();
    /// assert!(err.message().contains("f32[3]") && err.message().contains("f32[2]"), "{err}");
    /// # Ok::<(), platform_api::Error>(())
    /// ```
    pub fn execute(&self, exe: &LoadedExecutable, args: &[Literal]) -> Result<Literal> {
        Ok(self
            .execute_with(exe, args, &ExecuteOptions::default())?
            .result)
    }

    /// Runs `exe` on host values with options, reporting times.
    pub fn execute_with(
        &self,
        exe: &LoadedExecutable,
        args: &[Literal],
        options: &ExecuteOptions,
    ) -> Result<Execution> {
        self.check_platform(exe)?;
        exe.check_argument_shapes(args.iter().map(Literal::shape))?;
        let executor = self.backend.executor(options.device)?;
        let pooled = self.streams.acquire(executor)?;
        let stream = pooled.get()?;
        let profile = options.profile.as_deref();
        let start = Instant::now();

        let arguments = drain_on_error(stream, self.upload_arguments(stream, exe, args))?;
        record_span(
            profile,
            || format!("{}: arguments to device", exe.name()),
            "transfer",
            start,
        );

        let launch = Instant::now();
        let run_options = self.run_options(stream, options, None, 0, 0, 0);
        let refs: Vec<&ShapedBuffer> = arguments.iter().collect();
        let result = drain_on_error(
            stream,
            exe.executable.execute_on_stream(&run_options, &refs),
        )
        .map_err(|e| {
            e.context(format!(
                "running module {} on {}",
                exe.name(),
                exe.platform()
            ))
        })?;
        let execute_time = launch.elapsed();
        record_span(
            profile,
            || format!("execute {}", exe.name()),
            "execute",
            launch,
        );

        let fetch = Instant::now();
        let literal = drain_on_error(
            stream,
            self.backend
                .transfer_manager()
                .take_literal_from_device(stream, result),
        )?;
        record_span(
            profile,
            || format!("{}: result to host", exe.name()),
            "transfer",
            fetch,
        );
        tracing::debug!(
            module = exe.name(),
            execute_ms = execute_time.as_secs_f64() * 1e3,
            "executed"
        );
        Ok(Execution {
            result: literal,
            execute_time,
            total_time: start.elapsed(),
        })
    }

    fn run_options(
        &self,
        stream: &Arc<dyn Stream>,
        options: &ExecuteOptions,
        assignment: Option<Arc<DeviceAssignment>>,
        replica: usize,
        partition: usize,
        run_id: u64,
    ) -> RunOptions {
        let run_id = if run_id == 0 { next_run_id() } else { run_id };
        RunOptions {
            stream: stream.clone(),
            device_assignment: assignment,
            replica,
            partition,
            run_id,
            rng_seed: options.rng_seed,
            profile: options.profile.clone(),
            while_step_limit: options.while_step_limit,
            progress: options.progress.clone(),
        }
    }

    fn check_platform(&self, exe: &LoadedExecutable) -> Result<()> {
        if exe.platform() != self.platform_name() {
            return Err(Error::invalid_argument(format!(
                "module {} was compiled for {}, not for this client's platform {}",
                exe.name(),
                exe.platform(),
                self.platform_name()
            )));
        }
        Ok(())
    }

    fn upload_arguments(
        &self,
        stream: &Arc<dyn Stream>,
        exe: &LoadedExecutable,
        args: &[Literal],
    ) -> Result<Vec<ShapedBuffer>> {
        args.iter()
            .zip(&exe.device_parameter_shapes)
            .map(|(literal, shape)| self.upload(stream, literal, shape))
            .collect()
    }

    fn upload(
        &self,
        stream: &Arc<dyn Stream>,
        literal: &Literal,
        device_shape: &Shape,
    ) -> Result<ShapedBuffer> {
        let tm = self.backend.transfer_manager();
        let buffer = tm.allocate(stream, device_shape)?;
        tm.transfer_literal_to_device(stream, literal, &buffer)?;
        Ok(buffer)
    }

    /// Copies `literal` to device `device` and keeps it there, in the device's
    /// default layout for its shape.
    pub fn to_device(&self, literal: &Literal, device: usize) -> Result<DeviceBuffer> {
        let device_shape = self
            .backend
            .transfer_manager()
            .device_shape(literal.shape());
        self.to_device_as(literal, &device_shape, device)
    }

    /// Copies `literal` to device `device` in the layout `exe` wants for
    /// parameter `parameter`, so executions need no relayout.
    pub fn to_device_for(
        &self,
        exe: &LoadedExecutable,
        parameter: usize,
        literal: &Literal,
        device: usize,
    ) -> Result<DeviceBuffer> {
        let param = exe.parameters.get(parameter).ok_or_else(|| {
            Error::invalid_argument(format!(
                "module {} has {} parameter(s); there is no parameter {parameter}",
                exe.name(),
                exe.parameters.len()
            ))
        })?;
        if !literal.shape().compatible(&param.shape) {
            return Err(Error::invalid_argument(format!(
                "a value of shape {} cannot be parameter {parameter} (%{}) of module {}, which expects {}",
                literal.shape().without_layout(),
                param.name,
                exe.name(),
                param.shape.without_layout()
            )));
        }
        self.to_device_as(literal, &exe.device_parameter_shapes[parameter], device)
    }

    fn to_device_as(
        &self,
        literal: &Literal,
        device_shape: &Shape,
        device: usize,
    ) -> Result<DeviceBuffer> {
        let executor = self.backend.executor(device)?;
        let pooled = self.streams.acquire(executor)?;
        let stream = pooled.get()?;
        let buffer = drain_on_error(stream, self.upload(stream, literal, device_shape))?;
        // Transfers only enqueue; the buffer is handed out ready to use.
        stream.block_host_until_done()?;
        Ok(DeviceBuffer::new(buffer))
    }

    /// Copies a device value back to the host.
    pub fn to_literal(&self, buffer: &DeviceBuffer) -> Result<Literal> {
        let executor = self.check_owned(buffer)?;
        self.transfer_on(executor, |tm, stream| {
            tm.transfer_literal_from_device(stream, &buffer.buffer)
        })
    }

    /// Moves a device value to the host, giving up the device buffer. Where
    /// the device's memory is host memory (the Host platform) large arrays are
    /// handed to the literal instead of copied; elsewhere this copies, like
    /// [`LocalClient::to_literal`].
    pub fn into_literal(&self, buffer: DeviceBuffer) -> Result<Literal> {
        let executor = self.check_owned(&buffer)?;
        self.transfer_on(executor, move |tm, stream| {
            tm.take_literal_from_device(stream, buffer.buffer)
        })
    }

    /// Runs a transfer on a pooled stream of `executor`, draining the stream
    /// if it fails.
    fn transfer_on(
        &self,
        executor: &Arc<dyn StreamExecutor>,
        transfer: impl FnOnce(&dyn platform_api::TransferManager, &Arc<dyn Stream>) -> Result<Literal>,
    ) -> Result<Literal> {
        let pooled = self.streams.acquire(executor)?;
        let stream = pooled.get()?;
        drain_on_error(stream, transfer(&**self.backend.transfer_manager(), stream))
    }

    /// Frees a device value now (the same as dropping it; memory shared with
    /// other live buffers stays until they go too).
    pub fn release(&self, buffer: DeviceBuffer) {
        drop(buffer);
    }

    /// The executor a buffer lives on, checking that it is one of this client's.
    fn check_owned(&self, buffer: &DeviceBuffer) -> Result<&Arc<dyn StreamExecutor>> {
        let executor = self.backend.executor(buffer.device_ordinal())?;
        let owner = buffer.buffer.nodes().first().map(|n| n.executor());
        match owner {
            Some(owner) if same_executor(owner, executor) => Ok(executor),
            _ => Err(Error::invalid_argument(format!(
                "a buffer of shape {} does not belong to this client's {} device {}",
                buffer.shape(),
                self.platform_name(),
                buffer.device_ordinal()
            ))),
        }
    }

    /// Runs `exe` on device values; the result stays on the device. Arguments
    /// whose layout differs from what the program wants are converted (through
    /// the host) for this call.
    pub fn execute_buffers(
        &self,
        exe: &LoadedExecutable,
        args: &[&DeviceBuffer],
        options: &ExecuteOptions,
    ) -> Result<BufferExecution> {
        self.check_platform(exe)?;
        exe.check_buffer_shapes(args)?;
        let device = match args.first() {
            Some(first) => first.device_ordinal(),
            None => options.device,
        };
        self.execute_buffers_on(exe, args, options, device, None, 0, 0, 0)
    }

    /// Runs one device, `(replica, partition)`, of `exe`'s launch on device
    /// values, alone in this process (as [`LocalClient::execute_device`]
    /// does, the other devices running elsewhere and meeting this one
    /// through the installed collectives transport); the arguments must live
    /// on that device ([`LocalClient::device_of`]), and the result stays there.
    /// An application that keeps its arrays on the device pays no upload or
    /// download per run.
    pub fn execute_device_buffers(
        &self,
        exe: &LoadedExecutable,
        args: &[&DeviceBuffer],
        options: &ExecuteOptions,
        replica: usize,
        partition: usize,
    ) -> Result<BufferExecution> {
        self.check_platform(exe)?;
        exe.check_buffer_shapes(args)?;
        let assignment = self.assignment_for(exe, replica, partition)?;
        let device = assignment.device(replica, partition)?;
        let run_id = next_run_id();
        self.execute_buffers_on(
            exe,
            args,
            options,
            device,
            Some(assignment),
            replica,
            partition,
            run_id,
        )
    }

    /// The device ordinal that runs `(replica, partition)` of `exe`'s launch
    /// (the platform's placer decides): where the arguments of
    /// [`LocalClient::execute_device_buffers`] belong.
    pub fn device_of(
        &self,
        exe: &LoadedExecutable,
        replica: usize,
        partition: usize,
    ) -> Result<usize> {
        self.assignment_for(exe, replica, partition)?
            .device(replica, partition)
    }

    /// The device assignment of `exe`'s launch, checking that `(replica,
    /// partition)` is one of its devices.
    fn assignment_for(
        &self,
        exe: &LoadedExecutable,
        replica: usize,
        partition: usize,
    ) -> Result<Arc<DeviceAssignment>> {
        let replicas = exe.options().replica_count.max(1);
        let partitions = exe.options().num_partitions.max(1);
        if replica >= replicas || partition >= partitions {
            return Err(Error::invalid_argument(format!(
                "device (replica {replica}, partition {partition}) is outside module {}'s \
                 {replicas} replica(s) x {partitions} partition(s)",
                exe.name()
            )));
        }
        let placer = self.backend.placer();
        // An executable run by a client with another placer gets that
        // placer's assignment, not the cached one.
        if let Some((by, cached)) = exe.assignment.get() {
            if Arc::ptr_eq(by, placer) {
                return Ok(cached.clone());
            }
        }
        let assignment = Arc::new(placer.assign_devices(replicas, partitions)?);
        let _ = exe.assignment.set((placer.clone(), assignment.clone()));
        Ok(assignment)
    }

    /// [`LocalClient::execute_buffers`] on `device`, as `(replica,
    /// partition)` of the launch `assignment` (`None`: a single-device run).
    #[allow(clippy::too_many_arguments)]
    fn execute_buffers_on(
        &self,
        exe: &LoadedExecutable,
        args: &[&DeviceBuffer],
        options: &ExecuteOptions,
        device: usize,
        assignment: Option<Arc<DeviceAssignment>>,
        replica: usize,
        partition: usize,
        run_id: u64,
    ) -> Result<BufferExecution> {
        for (i, arg) in args.iter().enumerate() {
            self.check_owned(arg)?;
            if arg.device_ordinal() != device {
                return Err(Error::invalid_argument(format!(
                    "argument {i} is on device {} but this execution runs on device {device}; \
                     all arguments of one execution must be on its device",
                    arg.device_ordinal()
                )));
            }
        }
        let executor = self.backend.executor(device)?;
        let pooled = self.streams.acquire(executor)?;
        let stream = pooled.get()?;

        // Relayout where needed; the converted copies live until the run ends
        // (none, and nothing allocated for them, when every layout is right).
        let mut converted: Vec<Option<ShapedBuffer>> = Vec::new();
        for (i, (arg, want)) in args.iter().zip(&exe.device_parameter_shapes).enumerate() {
            if !exe.is_exact(i, arg) {
                if converted.is_empty() {
                    converted.resize_with(args.len(), || None);
                }
                let tm = self.backend.transfer_manager();
                let literal =
                    drain_on_error(stream, tm.transfer_literal_from_device(stream, &arg.buffer))?;
                converted[i] = Some(drain_on_error(stream, self.upload(stream, &literal, want))?);
            }
        }
        let refs: Vec<&ShapedBuffer> = args
            .iter()
            .enumerate()
            .map(|(i, arg)| match converted.get(i) {
                Some(Some(conv)) => conv,
                _ => &arg.buffer,
            })
            .collect();

        let launch = Instant::now();
        let run_options = self.run_options(stream, options, assignment, replica, partition, run_id);
        let result = drain_on_error(
            stream,
            exe.executable.execute_on_stream(&run_options, &refs),
        )
        .map_err(|e| {
            e.context(format!(
                "running module {} on {}",
                exe.name(),
                exe.platform()
            ))
        })?;
        let execute_time = launch.elapsed();
        record_span(
            options.profile.as_deref(),
            || format!("execute {}", exe.name()),
            "execute",
            launch,
        );
        Ok(BufferExecution {
            result: DeviceBuffer::new(result),
            execute_time,
        })
    }

    /// Runs `exe` as every (replica, partition) its compile options name, each on
    /// its own thread and on the device the platform's placer assigns, sharing
    /// one `run_id`. `args[r * num_partitions + p]` are the arguments of replica
    /// `r`, partition `p`; results come back in the same order.
    ///
    /// The backend needs at least `replica_count * num_partitions` devices:
    /// create it with [`Backend::with_options`] and a device count.
    pub fn execute_replicated(
        &self,
        exe: &LoadedExecutable,
        args: &[Vec<Literal>],
        options: &ExecuteOptions,
    ) -> Result<Vec<Literal>> {
        self.check_platform(exe)?;
        let replicas = exe.options().replica_count.max(1);
        let partitions = exe.options().num_partitions.max(1);
        let instances = replicas.checked_mul(partitions).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{replicas} replica(s) x {partitions} partition(s) overflows"
            ))
        })?;
        if args.len() != instances {
            return Err(Error::invalid_argument(format!(
                "module {} was compiled for {replicas} replica(s) x {partitions} partition(s) and needs \
                 {instances} argument lists; {} were given",
                exe.name(),
                args.len()
            )));
        }
        if instances > self.backend.device_count() {
            return Err(Error::invalid_argument(format!(
                "module {} needs {instances} devices but this {} backend has {}; create the backend \
                 with PlatformOptions {{ device_count: Some({instances}), .. }}",
                exe.name(),
                self.platform_name(),
                self.backend.device_count()
            )));
        }
        for (i, a) in args.iter().enumerate() {
            exe.check_argument_shapes(a.iter().map(Literal::shape))
                .map_err(|e| {
                    e.context(format!(
                        "replica {} partition {}",
                        i / partitions,
                        i % partitions
                    ))
                })?;
        }
        let assignment = Arc::new(self.backend.placer().assign_devices(replicas, partitions)?);
        let run_id = next_run_id();

        let results: Vec<Result<Literal>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..instances)
                .map(|i| {
                    let (replica, partition) = (i / partitions, i % partitions);
                    let assignment = assignment.clone();
                    let args = &args[i];
                    std::thread::Builder::new()
                        .name(format!("replica-{replica}-{partition}"))
                        .spawn_scoped(scope, move || {
                            self.run_one_replica(
                                exe, args, options, assignment, replica, partition, run_id,
                            )
                            .map_err(|e| {
                                e.context(format!("replica {replica} partition {partition}"))
                            })
                        })
                })
                .collect();
            // A replica whose thread could not start fails; the others then
            // fail too at their first collective, after its timeout, instead
            // of waiting for it forever.
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(Error::internal("a replica's thread panicked"))),
                    Err(e) => Err(Error::resource_exhausted(format!(
                        "could not start a thread for a replica: {e}"
                    ))),
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// Runs one device, `(replica, partition)`, of `exe`'s launch, alone in
    /// this process: the other devices run elsewhere (other MPI ranks) and
    /// meet this one through the installed collectives transport
    /// (`evaluator::collectives::set_transport`).
    pub fn execute_device(
        &self,
        exe: &LoadedExecutable,
        args: &[Literal],
        options: &ExecuteOptions,
        replica: usize,
        partition: usize,
    ) -> Result<Literal> {
        self.check_platform(exe)?;
        let assignment = self.assignment_for(exe, replica, partition)?;
        exe.check_argument_shapes(args.iter().map(Literal::shape))?;
        let run_id = next_run_id();
        self.run_one_replica(exe, args, options, assignment, replica, partition, run_id)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_one_replica(
        &self,
        exe: &LoadedExecutable,
        args: &[Literal],
        options: &ExecuteOptions,
        assignment: Arc<DeviceAssignment>,
        replica: usize,
        partition: usize,
        run_id: u64,
    ) -> Result<Literal> {
        let device = assignment.device(replica, partition)?;
        let executor = self.backend.executor(device)?;
        let pooled = self.streams.acquire(executor)?;
        let stream = pooled.get()?;
        let arguments = drain_on_error(stream, self.upload_arguments(stream, exe, args))?;
        let refs: Vec<&ShapedBuffer> = arguments.iter().collect();
        let run_options = self.run_options(
            stream,
            options,
            Some(assignment),
            replica,
            partition,
            run_id,
        );
        let launch = Instant::now();
        let result = drain_on_error(
            stream,
            exe.executable.execute_on_stream(&run_options, &refs),
        )?;
        record_span(
            options.profile.as_deref(),
            || format!("execute {} (replica {replica})", exe.name()),
            "execute",
            launch,
        );
        drain_on_error(
            stream,
            self.backend
                .transfer_manager()
                .take_literal_from_device(stream, result),
        )
    }
}

impl std::fmt::Debug for LocalClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalClient")
            .field("backend", &self.backend)
            .field("cached_programs", &self.cached_programs())
            .finish()
    }
}
