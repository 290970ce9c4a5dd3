//! [`HostExecutable`]: a compiled entry computation and how one execution runs.
//!
//! `execute_async_on_stream` checks the arguments (count, shapes, row-major
//! layouts, device), allocates the result buffers (fresh ones, or the argument
//! or earlier result a result leaf *is*, as buffer assignment decided), writes
//! the result's tuple index tables, and enqueues one work item on the stream.
//! That item takes a temp arena, runs the entry sequence's thunks in order
//! (recording a profile span per thunk when asked) and gives the arena back.
//! The work item holds the argument and result allocations alive until it is
//! done.
//!
//! Arenas are kept for reuse (a few per device): a fresh multi-megabyte block
//! per execution would pay the operating system's first-touch page faults on
//! every run. Kept arenas stay allocated on their device (they show in its
//! memory usage) until the executable is dropped.

use crate::thunk::{OutputSource, RunState, ThunkSequence};
use crate::PLATFORM_NAME;
use platform_api::memory::{node_byte_size, preorder_subshapes};
use platform_api::{
    CompileOptions, DeviceAllocation, Error, Executable, HloModule, Result, RunOptions, Shape,
    ShapedBuffer, StreamExecutor,
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
}

/// A program compiled for the Host platform.
pub struct HostExecutable {
    module: HloModule,
    program: Arc<Program>,
    parameter_shapes: Vec<Shape>,
    parameter_names: Vec<String>,
    /// The result's shape on the device (row-major layouts).
    result_shape: Shape,
}

impl HostExecutable {
    pub(crate) fn new(
        module: HloModule,
        entry: ThunkSequence,
        options: &CompileOptions,
    ) -> Result<Self> {
        let comp = module.entry();
        let params = comp.parameters();
        let parameter_shapes = params
            .iter()
            .map(|&p| comp.instr(p).shape.without_layout())
            .collect();
        let parameter_names = params.iter().map(|&p| comp.instr(p).name.clone()).collect();
        let result_shape =
            crate::runtime::transfer::row_major_device_shape(&comp.root_instr().shape);
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
            result_shape,
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
            for (_, leaf) in arg.shape().leaves() {
                if let Some(layout) = &leaf.layout {
                    if leaf.rank() > 1 && !layout.is_row_major() {
                        return Err(Error::invalid_argument(format!(
                            "argument {i} (parameter %{name}) is laid out as {leaf}; the Host platform keeps arrays row-major on the device (use its transfer manager's device shape)"
                        )));
                    }
                }
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

    /// Allocates the result buffer, sharing argument or result allocations where
    /// buffer assignment said a result leaf is one of those.
    fn allocate_result(
        &self,
        executor: &Arc<dyn StreamExecutor>,
        param_leaves: &[Arc<DeviceAllocation>],
    ) -> Result<ShapedBuffer> {
        let sources = &self.program.entry.output_sources;
        let nodes_shapes = preorder_subshapes(&self.result_shape);
        let mut nodes: Vec<Option<Arc<DeviceAllocation>>> = vec![None; nodes_shapes.len()];
        let mut leaf_nodes: Vec<usize> = Vec::new();
        for (i, (_, shape)) in nodes_shapes.iter().enumerate() {
            if shape.is_array() {
                leaf_nodes.push(i);
            }
        }
        for (k, &node) in leaf_nodes.iter().enumerate() {
            let shape = nodes_shapes[node].1;
            let alloc = match sources.get(k).copied().unwrap_or(OutputSource::Written) {
                OutputSource::Written => DeviceAllocation::new(executor, node_byte_size(shape))?,
                OutputSource::Parameter(j) => param_leaves.get(j).cloned().ok_or_else(|| {
                    Error::internal(format!("result aliases missing argument leaf {j}"))
                })?,
                OutputSource::SameAs(m) => leaf_nodes
                    .get(m)
                    .and_then(|&n| nodes[n].clone())
                    .ok_or_else(|| {
                        Error::internal(format!("result leaf {k} repeats missing leaf {m}"))
                    })?,
            };
            nodes[node] = Some(alloc);
        }
        for (i, (_, shape)) in nodes_shapes.iter().enumerate() {
            if !shape.is_array() {
                nodes[i] = Some(DeviceAllocation::new(executor, node_byte_size(shape))?);
            }
        }
        let nodes: Vec<Arc<DeviceAllocation>> = nodes
            .into_iter()
            .map(|n| n.ok_or_else(|| Error::internal("result node without a buffer")))
            .collect::<Result<_>>()?;
        let buffer =
            ShapedBuffer::from_nodes(self.result_shape.clone(), executor.ordinal(), nodes)?;
        // Tuple index tables: fresh host memory nobody else sees yet, so they are
        // written here rather than through the stream.
        for (index, shape) in preorder_subshapes(&self.result_shape) {
            if let Shape::Tuple(elements) = shape {
                let table = buffer.buffer(&index)?.mem();
                for e in 0..elements.len() {
                    let mut child = index.clone();
                    child.push(e);
                    let addr = buffer.buffer(&child)?.mem().addr();
                    // SAFETY: the table holds 8 bytes per element and was just
                    // allocated for this result.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            addr.to_le_bytes().as_ptr(),
                            table.opaque.cast::<u8>().add(8 * e),
                            8,
                        )
                    };
                }
            }
        }
        Ok(buffer)
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
        let (result, run) = self.prepare(options, arguments)?;
        options.stream.host_callback(run)?;
        Ok(result)
    }

    /// A synchronous run goes through
    /// [`Stream::run_host_callback_and_wait`](platform_api::Stream::run_host_callback_and_wait):
    /// on an idle stream the program runs on the caller's thread, which
    /// saves a small program two thread hand-offs, most of its time.
    fn execute_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let (result, run) = self.prepare(options, arguments)?;
        options.stream.run_host_callback_and_wait(run)?;
        Ok(result)
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        self.peak_bytes()
    }
}

impl HostExecutable {
    /// Checks the arguments, allocates the result, and returns it with the
    /// work that computes it (to be run on `options.stream`).
    fn prepare(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<(ShapedBuffer, platform_api::HostCallback)> {
        let executor = options.stream.executor();
        if executor.platform_id() != PLATFORM_NAME {
            return Err(Error::invalid_argument(format!(
                "a Host executable cannot run on a {} stream",
                executor.platform_id()
            )));
        }
        self.check_arguments(&executor, arguments)?;
        let mut param_leaves: Vec<Arc<DeviceAllocation>> = Vec::new();
        for arg in arguments {
            for (_, _, alloc) in arg.leaves() {
                param_leaves.push(alloc.clone());
            }
        }
        let result = self.allocate_result(&executor, &param_leaves)?;
        let result_leaves: Vec<Arc<DeviceAllocation>> = result
            .leaves()
            .into_iter()
            .map(|(_, _, a)| a.clone())
            .collect();
        let params = Addresses(param_leaves.iter().map(|a| a.mem().opaque.cast()).collect());
        let outputs = Addresses(
            result_leaves
                .iter()
                .map(|a| a.mem().opaque.cast())
                .collect(),
        );
        let program = self.program.clone();
        let state = RunState {
            replica: options.replica,
            partition: options.partition,
            replica_count: program.replica_count,
            partition_count: program.partition_count,
            device_ordinal: executor.ordinal(),
            run_id: options.run_id,
            rng_seed: options.rng_seed,
            device_assignment: options.device_assignment.clone(),
            profile: options.profile.clone(),
            while_step_limit: options.while_step_limit,
            collective_sequence: AtomicU64::new(0),
            rng_state: AtomicU64::new(options.rng_seed),
            progress: options.progress.clone(),
        };
        let run: platform_api::HostCallback = Box::new(move || {
            let (params, outputs) = (params, outputs);
            // Keep every buffer the execution touches alive until it is done.
            let _keep = (&param_leaves, &result_leaves);
            let temp = program.take_arena(&executor)?;
            // SAFETY: parameters and results were checked against the program's
            // shapes and are kept alive above; the arena is this execution's
            // alone and has `temp_bytes` bytes, 64-byte aligned; stream ordering
            // keeps other work away from these buffers while this runs.
            let result = unsafe {
                program
                    .entry
                    .run(&state, &params.0, &outputs.0, temp.mem().opaque.cast())
            };
            program.give_back(&executor, temp);
            result
        });
        Ok((result, run))
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
