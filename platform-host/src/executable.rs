//! [`HostExecutable`]: a compiled entry computation and how one execution runs.
//!
//! An execution checks the arguments (count, shapes, row-major layouts,
//! device), allocates the result buffers (fresh ones, or the argument or
//! earlier result a result leaf *is*, as buffer assignment decided, following
//! a plan of the result's nodes made at compile time), writes the result's
//! tuple index tables, and runs the entry sequence's thunks in order
//! (recording a profile span per thunk when asked) on a temp arena.
//!
//! A synchronous execution on an idle stream runs on the calling thread
//! (`Stream::run_on_caller_if_idle`), borrowing the argument and result
//! buffers for the run: the launch of a small program then allocates only its
//! result. Otherwise (a busy stream, an asynchronous execution) it enqueues
//! one work item that holds the argument and result allocations alive until
//! it is done.
//!
//! Arenas are kept for reuse (a few per device): a fresh multi-megabyte block
//! per execution would pay the operating system's first-touch page faults on
//! every run. Kept arenas stay allocated on their device (they show in its
//! memory usage) until the executable is dropped. A program that needs no
//! temp bytes takes no arena.

use crate::thunk::{OutputSource, RunState, ThunkSequence};
use crate::PLATFORM_NAME;
use platform_api::memory::{node_byte_size, preorder_subshapes};
use platform_api::{
    ArrayShape, CompileOptions, DeviceAllocation, Error, Executable, HloModule, Result, RunOptions,
    Shape, ShapedBuffer, StreamExecutor,
};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

struct Program {
    entry: ThunkSequence,
    replica_count: usize,
    partition_count: usize,
    /// Arenas from earlier executions, ready for reuse, with their device.
    arenas: std::sync::Mutex<Vec<(usize, Arc<DeviceAllocation>)>>,
}

/// Arenas kept per executable.
const KEPT_ARENAS: usize = 4;

impl Program {
    fn take_arena(&self, executor: &Arc<dyn StreamExecutor>) -> Result<Arc<DeviceAllocation>> {
        let key = Arc::as_ptr(executor) as *const () as usize;
        if let Ok(mut kept) = self.arenas.lock() {
            if let Some(i) = kept.iter().position(|(k, _)| *k == key) {
                return Ok(kept.swap_remove(i).1);
            }
        }
        DeviceAllocation::new(executor, self.entry.temp_bytes)
    }

    fn give_back(&self, executor: &Arc<dyn StreamExecutor>, arena: Arc<DeviceAllocation>) {
        let key = Arc::as_ptr(executor) as *const () as usize;
        if let Ok(mut kept) = self.arenas.lock() {
            if kept.len() < KEPT_ARENAS {
                kept.push((key, arena));
            }
        }
    }

    /// Runs the entry sequence on the given leaf addresses with an arena of
    /// `executor`'s (none when the program needs no temp bytes).
    ///
    /// # Safety
    /// As [`ThunkSequence::run`] for `params` and `outputs`: the parameters
    /// and results were checked against the program's shapes and outlive
    /// the call, and nothing else uses them meanwhile.
    unsafe fn run(
        &self,
        executor: &Arc<dyn StreamExecutor>,
        state: &RunState,
        params: &[*mut u8],
        outputs: &[*mut u8],
    ) -> Result<()> {
        if self.entry.temp_bytes == 0 {
            // SAFETY: the caller's guarantees; no thunk touches a temp byte,
            // so an aligned dangling address stands for the empty arena.
            return unsafe {
                self.entry.run(
                    state,
                    params,
                    outputs,
                    std::ptr::without_provenance_mut(ARENA_ALIGNMENT),
                )
            };
        }
        let temp = self.take_arena(executor)?;
        // SAFETY: the caller's guarantees; the arena is this execution's
        // alone and has `temp_bytes` bytes, 64-byte aligned.
        let result = unsafe {
            self.entry
                .run(state, params, outputs, temp.mem().opaque.cast())
        };
        self.give_back(executor, temp);
        result
    }
}

/// The alignment the entry sequence may assume of its arena.
const ARENA_ALIGNMENT: usize = 64;

/// One node of the result buffer, in preorder, as every execution builds it
/// (worked out once, when the program is compiled).
#[derive(Clone, Copy, Debug)]
enum ResultNode {
    /// A fresh allocation of this many bytes: an array leaf the program
    /// writes, a tuple's index table, or a token (no bytes).
    Fresh(usize),
    /// Parameter leaf `k`'s allocation (buffer assignment made the result
    /// leaf that argument).
    Parameter(usize),
    /// The allocation of an earlier node (a result leaf that repeats an
    /// earlier one).
    SameAs(usize),
}

/// How one execution's result buffer is put together.
struct ResultPlan {
    nodes: Vec<ResultNode>,
    /// Every tuple node, with the nodes of its elements (what its index
    /// table points at).
    tables: Vec<(usize, Vec<usize>)>,
    /// The node of each array leaf, in preorder (the program's output leaves).
    leaves: Vec<usize>,
}

impl ResultPlan {
    fn new(shape: &Shape, sources: &[OutputSource]) -> Result<ResultPlan> {
        let mut plan = ResultPlan {
            nodes: Vec::new(),
            tables: Vec::new(),
            leaves: Vec::new(),
        };
        plan.add(shape, sources)?;
        Ok(plan)
    }

    /// Adds the nodes of `shape` in preorder; returns the first one's.
    fn add(&mut self, shape: &Shape, sources: &[OutputSource]) -> Result<usize> {
        let node = self.nodes.len();
        match shape {
            Shape::Array(_) => {
                let k = self.leaves.len();
                self.leaves.push(node);
                let planned = match sources.get(k).copied().unwrap_or(OutputSource::Written) {
                    OutputSource::Written => ResultNode::Fresh(node_byte_size(shape)),
                    OutputSource::Parameter(j) => ResultNode::Parameter(j),
                    OutputSource::SameAs(m) if m < k => ResultNode::SameAs(self.leaves[m]),
                    OutputSource::SameAs(m) => {
                        return Err(Error::internal(format!(
                            "result leaf {k} repeats leaf {m}, which does not come before it"
                        )))
                    }
                };
                self.nodes.push(planned);
            }
            Shape::Tuple(elements) => {
                self.nodes.push(ResultNode::Fresh(node_byte_size(shape)));
                let mut children = Vec::with_capacity(elements.len());
                for e in elements {
                    children.push(self.add(e, sources)?);
                }
                self.tables.push((node, children));
            }
            Shape::Token => self.nodes.push(ResultNode::Fresh(0)),
        }
        Ok(node)
    }
}

/// Leaf addresses for one run, on the stack for the usual few leaves.
enum LeafAddresses {
    Inline([*mut u8; INLINE_LEAVES], usize),
    Heap(Vec<*mut u8>),
}

const INLINE_LEAVES: usize = 8;

impl LeafAddresses {
    fn collect(leaves: impl ExactSizeIterator<Item = Result<*mut u8>>) -> Result<LeafAddresses> {
        let n = leaves.len();
        if n > INLINE_LEAVES {
            return Ok(LeafAddresses::Heap(leaves.collect::<Result<_>>()?));
        }
        let mut inline = [std::ptr::null_mut(); INLINE_LEAVES];
        for (slot, leaf) in inline.iter_mut().zip(leaves) {
            *slot = leaf?;
        }
        Ok(LeafAddresses::Inline(inline, n))
    }

    fn as_slice(&self) -> &[*mut u8] {
        match self {
            LeafAddresses::Inline(a, n) => &a[..*n],
            LeafAddresses::Heap(v) => v,
        }
    }
}

/// A program compiled for the Host platform.
pub struct HostExecutable {
    module: HloModule,
    program: Arc<Program>,
    parameter_shapes: Vec<Shape>,
    parameter_names: Vec<String>,
    /// Each parameter leaf's (argument, node of the argument's buffer), in
    /// preorder: where the program's parameter leaves are found.
    parameter_leaves: Vec<(usize, usize)>,
    /// The result's shape on the device (row-major layouts).
    result_shape: Shape,
    result_plan: ResultPlan,
}

impl HostExecutable {
    pub(crate) fn new(
        module: HloModule,
        entry: ThunkSequence,
        options: &CompileOptions,
    ) -> Result<Self> {
        let comp = module.entry();
        let params = comp.parameters();
        let parameter_shapes: Vec<Shape> = params
            .iter()
            .map(|&p| comp.instr(p).shape.without_layout())
            .collect();
        let parameter_leaves = parameter_shapes
            .iter()
            .enumerate()
            .flat_map(|(i, shape)| {
                preorder_subshapes(shape)
                    .into_iter()
                    .enumerate()
                    .filter(|(_, (_, s))| s.is_array())
                    .map(move |(node, _)| (i, node))
            })
            .collect();
        let parameter_names = params.iter().map(|&p| comp.instr(p).name.clone()).collect();
        let result_shape =
            crate::runtime::transfer::row_major_device_shape(&comp.root_instr().shape);
        let result_plan = ResultPlan::new(&result_shape, &entry.output_sources)?;
        Ok(HostExecutable {
            program: Arc::new(Program {
                entry,
                replica_count: options.replica_count,
                partition_count: options.num_partitions,
                arenas: std::sync::Mutex::new(Vec::new()),
            }),
            module,
            parameter_shapes,
            parameter_names,
            parameter_leaves,
            result_shape,
            result_plan,
        })
    }

    /// Bytes of the temp arena one execution allocates.
    pub fn temp_bytes(&self) -> usize {
        self.program.entry.temp_bytes
    }

    /// Number of top-level thunks (for tests and tools).
    pub fn thunk_count(&self) -> usize {
        self.program.entry.thunks.len()
    }

    /// The entry sequence's thunks as (name, category), in run order (for
    /// tests and tools that check what the compiler made of a program).
    pub fn thunk_names(&self) -> Vec<(String, String)> {
        self.program
            .entry
            .thunks
            .iter()
            .map(|t| (t.name().to_string(), t.category().to_string()))
            .collect()
    }

    fn check_arguments(
        &self,
        executor: &Arc<dyn StreamExecutor>,
        arguments: &[&ShapedBuffer],
    ) -> Result<()> {
        if arguments.len() != self.parameter_shapes.len() {
            return Err(Error::invalid_argument(format!(
                "{} takes {} argument(s); {} were given",
                self.module.name,
                self.parameter_shapes.len(),
                arguments.len()
            )));
        }
        for (i, (arg, want)) in arguments.iter().zip(&self.parameter_shapes).enumerate() {
            let name = &self.parameter_names[i];
            if !arg.shape().compatible(want) {
                return Err(Error::invalid_argument(format!(
                    "argument {i} (parameter %{name}) has shape {}; the program expects {want}",
                    arg.shape()
                )));
            }
            if let Some(leaf) = not_row_major(arg.shape()) {
                return Err(Error::invalid_argument(format!(
                    "argument {i} (parameter %{name}) is laid out as {leaf}; the Host platform keeps arrays row-major on the device (use its transfer manager's device shape)"
                )));
            }
            if arg.device_ordinal() != executor.ordinal() {
                return Err(Error::invalid_argument(format!(
                    "argument {i} (parameter %{name}) lives on device {}, but the stream runs on device {}",
                    arg.device_ordinal(),
                    executor.ordinal()
                )));
            }
        }
        Ok(())
    }

    /// The allocation of parameter leaf `k` among `arguments` (checked
    /// against the parameters' shapes).
    fn parameter_leaf<'a>(
        &self,
        arguments: &[&'a ShapedBuffer],
        k: usize,
    ) -> Result<&'a Arc<DeviceAllocation>> {
        self.parameter_leaves
            .get(k)
            .and_then(|&(arg, node)| arguments.get(arg)?.nodes().get(node))
            .ok_or_else(|| Error::internal(format!("the program has no parameter leaf {k}")))
    }

    /// Allocates the result buffer, sharing argument or result allocations where
    /// buffer assignment said a result leaf is one of those.
    fn allocate_result(
        &self,
        executor: &Arc<dyn StreamExecutor>,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let plan = &self.result_plan;
        let mut nodes: Vec<Arc<DeviceAllocation>> = Vec::with_capacity(plan.nodes.len());
        for node in &plan.nodes {
            let alloc = match *node {
                ResultNode::Fresh(bytes) => DeviceAllocation::new(executor, bytes)?,
                ResultNode::Parameter(k) => self.parameter_leaf(arguments, k)?.clone(),
                ResultNode::SameAs(n) => nodes
                    .get(n)
                    .cloned()
                    .ok_or_else(|| Error::internal(format!("result node {n} is missing")))?,
            };
            nodes.push(alloc);
        }
        // Tuple index tables: fresh host memory nobody else sees yet, so they are
        // written here rather than through the stream.
        for (table, children) in &plan.tables {
            let (Some(table), Some(last)) = (nodes.get(*table), children.last()) else {
                continue;
            };
            if nodes.len() <= *last || table.size() < 8 * children.len() {
                return Err(Error::internal("a result tuple's table does not fit"));
            }
            let table = table.mem().opaque.cast::<u8>();
            for (e, &child) in children.iter().enumerate() {
                let addr = nodes[child].mem().addr();
                // SAFETY: the table holds 8 bytes per element (checked above)
                // and was just allocated for this result.
                unsafe {
                    std::ptr::copy_nonoverlapping(addr.to_le_bytes().as_ptr(), table.add(8 * e), 8)
                };
            }
        }
        ShapedBuffer::from_nodes(self.result_shape.clone(), executor.ordinal(), nodes)
    }

    /// The state one execution's thunks share.
    fn run_state(&self, options: &RunOptions, device_ordinal: usize) -> RunState {
        RunState {
            replica: options.replica,
            partition: options.partition,
            replica_count: self.program.replica_count,
            partition_count: self.program.partition_count,
            device_ordinal,
            run_id: options.run_id,
            rng_seed: options.rng_seed,
            device_assignment: options.device_assignment.clone(),
            profile: options.profile.clone(),
            while_step_limit: options.while_step_limit,
            collective_sequence: AtomicU64::new(0),
            rng_state: AtomicU64::new(options.rng_seed),
            progress: options.progress.clone(),
        }
    }
}

/// The first array leaf of `shape` laid out other than row-major, if any.
fn not_row_major(shape: &Shape) -> Option<&ArrayShape> {
    match shape {
        Shape::Array(a) => a
            .layout
            .as_ref()
            .is_some_and(|l| a.rank() > 1 && !l.is_row_major())
            .then_some(a),
        Shape::Tuple(elements) => elements.iter().find_map(not_row_major),
        Shape::Token => None,
    }
}

/// Raw leaf addresses carried into a work item.
struct Addresses(Vec<*mut u8>);
// SAFETY: the addresses point into allocations the work item keeps alive; the
// stream's ordering keeps other users away while it runs.
unsafe impl Send for Addresses {}

impl Executable for HostExecutable {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let (executor, result) = self.prepare(options, arguments)?;
        let run = self.owned_work(options, executor, arguments, &result)?;
        options.stream.host_callback(run)?;
        Ok(result)
    }

    /// On an idle stream the program runs on the caller's thread
    /// ([`Stream::run_on_caller_if_idle`](platform_api::Stream::run_on_caller_if_idle)),
    /// which saves a small program two thread hand-offs, most of its time;
    /// there it borrows the arguments and the result for the run, so the
    /// launch boxes nothing and counts no references. A busy stream gets
    /// owned work, queued behind what it has.
    fn execute_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let (executor, result) = self.prepare(options, arguments)?;
        {
            let params = LeafAddresses::collect(
                (0..self.parameter_leaves.len())
                    .map(|k| Ok(self.parameter_leaf(arguments, k)?.mem().opaque.cast())),
            )?;
            let outputs = LeafAddresses::collect(self.result_plan.leaves.iter().map(|&n| {
                Ok(result
                    .nodes()
                    .get(n)
                    .ok_or_else(missing_node)?
                    .mem()
                    .opaque
                    .cast())
            }))?;
            let state = self.run_state(options, executor.ordinal());
            let mut run = || {
                // SAFETY: parameters and results were checked against the
                // program's shapes and are borrowed (`arguments`) or owned
                // (`result`) by this call, which outlives the run; the
                // stream runs nothing else meanwhile.
                unsafe {
                    self.program
                        .run(&executor, &state, params.as_slice(), outputs.as_slice())
                }
            };
            if let Some(ran) = options.stream.run_on_caller_if_idle(&mut run) {
                return ran.map(|()| result);
            }
        }
        let run = self.owned_work(options, executor, arguments, &result)?;
        options.stream.run_host_callback_and_wait(run)?;
        Ok(result)
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        self.peak_bytes()
    }
}

fn missing_node() -> Error {
    Error::internal("a result leaf's node is missing")
}

impl HostExecutable {
    /// Checks the stream and the arguments, and allocates the result.
    fn prepare(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<(Arc<dyn StreamExecutor>, ShapedBuffer)> {
        let executor = options.stream.executor();
        if executor.platform_id() != PLATFORM_NAME {
            return Err(Error::invalid_argument(format!(
                "a Host executable cannot run on a {} stream",
                executor.platform_id()
            )));
        }
        self.check_arguments(&executor, arguments)?;
        let result = self.allocate_result(&executor, arguments)?;
        Ok((executor, result))
    }

    /// The work that computes `result` from `arguments` as a stream item of
    /// its own: it keeps every buffer it touches alive until it is done.
    fn owned_work(
        &self,
        options: &RunOptions,
        executor: Arc<dyn StreamExecutor>,
        arguments: &[&ShapedBuffer],
        result: &ShapedBuffer,
    ) -> Result<platform_api::HostCallback> {
        let param_leaves = (0..self.parameter_leaves.len())
            .map(|k| self.parameter_leaf(arguments, k).cloned())
            .collect::<Result<Vec<_>>>()?;
        let result_leaves = self
            .result_plan
            .leaves
            .iter()
            .map(|&n| result.nodes().get(n).cloned().ok_or_else(missing_node))
            .collect::<Result<Vec<_>>>()?;
        let params = Addresses(param_leaves.iter().map(|a| a.mem().opaque.cast()).collect());
        let outputs = Addresses(
            result_leaves
                .iter()
                .map(|a| a.mem().opaque.cast())
                .collect(),
        );
        let program = self.program.clone();
        let state = self.run_state(options, executor.ordinal());
        Ok(Box::new(move || {
            let (params, outputs) = (params, outputs);
            // Keep every buffer the execution touches alive until it is done.
            let _keep = (&param_leaves, &result_leaves);
            // SAFETY: parameters and results were checked against the program's
            // shapes and are kept alive above; stream ordering keeps other work
            // away from these buffers while this runs.
            unsafe { program.run(&executor, &state, &params.0, &outputs.0) }
        }))
    }

    fn peak_bytes(&self) -> Option<u64> {
        let outputs: usize = self
            .program
            .entry
            .output_sources
            .iter()
            .zip(&self.program.entry.output_leaf_bytes)
            .filter(|(s, _)| matches!(s, OutputSource::Written))
            .map(|(_, b)| *b)
            .sum();
        let tables: usize = preorder_subshapes(&self.result_shape)
            .iter()
            .filter(|(_, s)| s.is_tuple())
            .map(|(_, s)| node_byte_size(s))
            .sum();
        Some((self.program.entry.temp_bytes + outputs + tables) as u64)
    }
}
