//! [`InterpreterExecutable`]: runs a planned module on host memory.
//!
//! One execution:
//! 1. at enqueue time, checks the argument count and each argument's shape
//!    against the entry parameters (layouts may differ: arguments are read in
//!    their own layout), allocates the result buffer and writes its tuple index
//!    tables;
//! 2. enqueues (and, the stream being inline, runs) a host callback that reads
//!    the arguments into values, evaluates the entry computation, and writes the
//!    result leaves in the layouts of the result buffer's shape.
//!
//! Errors found at enqueue time are returned directly; errors raised while
//! evaluating (a step limit, a bad branch index, an unimplemented op) are kept
//! by the stream and come back from `block_host_until_done`, as the
//! [`Executable`] contract says.

use crate::platform::PLATFORM_NAME;
use platform_api::evaluator::ops::strided::{copy_box, View};
use platform_api::evaluator::value::Value;
use platform_api::evaluator::{EvalHooks, Evaluator, PreparedModule, RunContext};
use platform_api::hlo::HloInstruction;
use platform_api::memory::ShapedBuffer;
use platform_api::transfer::layout_strides;
use platform_api::{
    ArrayShape, CompileOptions, DeviceAllocation, Error, Executable, HloModule, Literal,
    ProfileSink, Result, RunOptions, Shape,
};
use std::sync::Arc;
use std::time::Instant;

/// What the evaluator asks of the Interpreter platform: custom calls through
/// the custom-call registry (for this platform), timings into the run's profile.
struct InterpreterHooks {
    profile: Option<Arc<ProfileSink>>,
}

impl EvalHooks for InterpreterHooks {
    fn custom_call(&self, instr: &HloInstruction, operands: &[&Literal]) -> Result<Literal> {
        platform_api::custom_call::call_host_target(PLATFORM_NAME, instr, operands)
    }

    fn wants_timing(&self) -> bool {
        self.profile.is_some()
    }

    fn instruction_done(&self, instr: &HloInstruction, started: Instant, replica: usize) {
        if let Some(sink) = &self.profile {
            sink.record(
                instr.name.clone(),
                instr.opcode().name(),
                started,
                replica as u64,
            );
        }
    }
}

struct Program {
    prepared: PreparedModule,
    /// Replicas and partitions the program was compiled for (used when a run has
    /// no device assignment).
    replica_count: usize,
    partition_count: usize,
}

/// A module ready to run on the interpreter.
pub struct InterpreterExecutable {
    program: Arc<Program>,
}

impl InterpreterExecutable {
    pub fn new(module: HloModule, options: &CompileOptions) -> Result<Self> {
        let contract = platform_api::semantics::contraction::fp_contract_option(
            options.debug_option("fp_contract"),
        )?;
        let replica_count = module
            .config
            .replica_count
            .unwrap_or(options.replica_count)
            .max(1);
        let partition_count = module
            .config
            .num_partitions
            .unwrap_or(options.num_partitions)
            .max(1);
        Ok(InterpreterExecutable {
            program: Arc::new(Program {
                prepared: PreparedModule::new(module, contract)?,
                replica_count,
                partition_count,
            }),
        })
    }

    /// Evaluates the entry computation on host literals directly, without device
    /// buffers (for tests and tools that want the reference value of a module).
    pub fn evaluate_literals(&self, args: Vec<Literal>, ctx: &RunContext) -> Result<Literal> {
        self.program.prepared.evaluate(args, ctx)
    }
}

impl Executable for InterpreterExecutable {
    fn module(&self) -> &HloModule {
        self.program.prepared.module()
    }

    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let executor = options.stream.executor();
        if executor.platform_id() != PLATFORM_NAME {
            return Err(Error::invalid_argument(format!(
                "an interpreter executable cannot run on a stream of platform {}",
                executor.platform_id()
            )));
        }
        let program = self.program.clone();
        let module = program.prepared.module();
        let entry = module.entry();
        let params = entry.parameters();
        if arguments.len() != params.len() {
            return Err(Error::invalid_argument(format!(
                "{} takes {} arguments, but {} were given",
                module.name,
                params.len(),
                arguments.len()
            )));
        }
        for (i, (arg, &param)) in arguments.iter().zip(&params).enumerate() {
            let expected = &entry.instr(param).shape;
            if !arg.shape().compatible(expected) {
                return Err(Error::invalid_argument(format!(
                    "argument for parameter {i} (%{}) has shape {}, but the parameter's shape is {expected}",
                    entry.instr(param).name,
                    arg.shape()
                )));
            }
        }
        let result_shape = entry.root_instr().shape.with_default_layouts();
        let result = ShapedBuffer::allocate(&executor, &result_shape)?;
        write_index_tables(&result)?;

        let ctx = RunContext {
            replica: options.replica,
            partition: options.partition,
            replica_count: options
                .device_assignment
                .as_ref()
                .map_or(program.replica_count, |d| d.replica_count()),
            partition_count: options
                .device_assignment
                .as_ref()
                .map_or(program.partition_count, |d| d.computation_count()),
            run_id: options.run_id,
            rng_seed: options.rng_seed,
            hooks: Some(Arc::new(InterpreterHooks {
                profile: options.profile.clone(),
            })),
            while_step_limit: options.while_step_limit,
        };
        let args: Vec<ShapedBuffer> = arguments.iter().map(|a| (*a).clone()).collect();
        let out = result.clone();
        options.stream.host_callback(Box::new(move || {
            let values = args.iter().map(read_value).collect::<Result<Vec<_>>>()?;
            let prepared = &program.prepared;
            let mut evaluator = Evaluator::new(prepared.module(), prepared.plan(), &ctx);
            let value = evaluator.run_entry(values)?;
            write_value(&out, &value)
        }))?;
        Ok(result)
    }
}

/// The host bytes of an allocation of an interpreter device.
fn host_bytes(node: &DeviceAllocation, len: usize) -> Result<&[u8]> {
    if node.executor().platform_id() != PLATFORM_NAME {
        return Err(Error::invalid_argument(format!(
            "a buffer of platform {} was passed to the interpreter",
            node.executor().platform_id()
        )));
    }
    if node.size() < len {
        return Err(Error::invalid_argument(format!(
            "a buffer of {} bytes holds a value of {len} bytes",
            node.size()
        )));
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: interpreter allocations are host memory of at least `len` bytes, kept
    // alive by the `DeviceAllocation` borrowed for the slice's lifetime; stream work
    // is inline, so no other writer is running.
    Ok(unsafe { std::slice::from_raw_parts(node.mem().opaque.cast::<u8>(), len) })
}

/// Runs `f` on the host bytes of an allocation of an interpreter device, writable.
fn with_host_bytes_mut<R>(
    node: &DeviceAllocation,
    len: usize,
    f: impl FnOnce(&mut [u8]) -> Result<R>,
) -> Result<R> {
    host_bytes(node, len)?;
    if len == 0 {
        return f(&mut []);
    }
    // SAFETY: as in `host_bytes`; the result buffer was allocated by this execution
    // and nothing else reads or writes its memory until the execution returns it,
    // and the slice does not outlive `f`.
    let bytes = unsafe { std::slice::from_raw_parts_mut(node.mem().opaque.cast::<u8>(), len) };
    f(bytes)
}

/// Reads an argument buffer into a (logical, row-major) value.
fn read_value(buffer: &ShapedBuffer) -> Result<Value> {
    fn read(buffer: &ShapedBuffer, shape: &Shape, index: &mut Vec<usize>) -> Result<Value> {
        match shape {
            Shape::Token => Ok(Value::Token),
            Shape::Tuple(elements) => {
                let mut parts = Vec::with_capacity(elements.len());
                for (i, e) in elements.iter().enumerate() {
                    index.push(i);
                    parts.push(read(buffer, e, index)?);
                    index.pop();
                }
                Ok(Value::Tuple(parts))
            }
            Shape::Array(array) => {
                let node = buffer.buffer(index)?;
                let physical = host_bytes(node, array.byte_size())?;
                let mut literal =
                    Literal::zeros(&Shape::array(array.element_type, array.dims.clone()));
                let size = array.element_type.byte_size();
                copy_box(
                    size,
                    &array.dims,
                    literal.bytes_mut()?,
                    &View::row_major(&array.dims),
                    physical,
                    &physical_view(array),
                )?;
                Ok(Value::from_literal(literal))
            }
        }
    }
    read(buffer, &buffer.shape().clone(), &mut Vec::new())
}

/// Writes a value's array leaves into `buffer`, in the layouts of its shape.
fn write_value(buffer: &ShapedBuffer, value: &Value) -> Result<()> {
    if !value.matches(buffer.shape()) {
        return Err(Error::internal(format!(
            "the program produced {}, but its result shape is {}",
            value.shape_text(),
            buffer.shape()
        )));
    }
    for (index, shape, node) in buffer.leaves() {
        let mut v = value;
        for &i in &index {
            v = v
                .tuple()?
                .get(i)
                .ok_or_else(|| Error::internal("result tuple too short"))?;
        }
        let array = shape.array_or_err()?;
        let size = array.element_type.byte_size();
        let src = v.array()?.bytes()?;
        with_host_bytes_mut(node, array.byte_size(), |dst| {
            copy_box(
                size,
                &array.dims,
                dst,
                &physical_view(array),
                src,
                &View::row_major(&array.dims),
            )
        })?;
    }
    Ok(())
}

/// Where each logical element of `array` lies in device memory: the strides of
/// its layout (the transfer module's definition), row-major when it has none.
fn physical_view(array: &ArrayShape) -> View {
    let has_layout = array
        .layout
        .as_ref()
        .is_some_and(|l| l.minor_to_major.len() == array.rank());
    if !has_layout {
        return View::row_major(&array.dims);
    }
    View {
        offset: 0,
        strides: layout_strides(array)
            .into_iter()
            .map(|s| s as isize)
            .collect(),
    }
}

/// Writes each tuple node's table of element addresses (8 bytes each, little-endian).
fn write_index_tables(buffer: &ShapedBuffer) -> Result<()> {
    for (index, shape) in platform_api::memory::preorder_subshapes(buffer.shape()) {
        if let Shape::Tuple(elements) = shape {
            let mut table = Vec::with_capacity(elements.len() * 8);
            for i in 0..elements.len() {
                let mut child = index.clone();
                child.push(i);
                table.extend_from_slice(&buffer.buffer(&child)?.mem().addr().to_le_bytes());
            }
            with_host_bytes_mut(buffer.buffer(&index)?, table.len(), |dst| {
                dst.copy_from_slice(&table);
                Ok(())
            })?;
        }
    }
    Ok(())
}
