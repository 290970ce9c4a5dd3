//! The parts of an [`Executable`] every host-memory backend writes the same
//! way: checking arguments, allocating the result with its tuple index tables,
//! and moving literals in and out of host-memory buffers; and
//! [`LiteralExecutable`], which does all of it around a program that computes
//! on literals ([`LiteralProgram`]).

use crate::transfer::{layout_to_row_major, row_major_to_layout};
use crate::{
    DeviceAllocation, Error, Executable, GenericTransferManager, HloModule, Literal, Result,
    RunOptions, Shape, ShapedBuffer, StreamExecutor, TransferManager,
};
use std::sync::Arc;

/// The stream's executor, checked to belong to `platform_id`.
pub fn check_platform(platform_id: &str, options: &RunOptions) -> Result<Arc<dyn StreamExecutor>> {
    let executor = options.stream.executor();
    if executor.platform_id() != platform_id {
        return Err(Error::invalid_argument(format!(
            "a {platform_id} executable cannot run on a stream of platform {}",
            executor.platform_id()
        )));
    }
    Ok(executor)
}

/// Checks `arguments` against the entry parameters of `module`: their number,
/// and each shape (naming both shapes when they differ).
pub fn check_arguments(module: &HloModule, arguments: &[&ShapedBuffer]) -> Result<()> {
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
    Ok(())
}

/// A buffer for `module`'s result (default layouts) on the stream's device,
/// with its tuple index tables written (in stream order).
pub fn allocate_result(module: &HloModule, options: &RunOptions) -> Result<ShapedBuffer> {
    let executor = options.stream.executor();
    let shape = module.entry().root_instr().shape.with_default_layouts();
    GenericTransferManager::new(executor.platform_id()).allocate(&options.stream, &shape)
}

/// The first `len` bytes of a host-memory allocation.
fn host_bytes(node: &DeviceAllocation, len: usize) -> Result<&[u8]> {
    if node.size() < len || (len > 0 && node.mem().is_null()) {
        return Err(Error::invalid_argument(format!(
            "a buffer of {} bytes cannot hold a value of {len} bytes",
            node.size()
        )));
    }
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: the allocation is host memory of at least `len` bytes, kept
    // alive by `node`; stream order keeps writers away while it is read.
    Ok(unsafe { std::slice::from_raw_parts(node.mem().opaque.cast::<u8>(), len) })
}

/// Reads a host-memory buffer as a row-major literal. Call it from stream
/// work (a host callback), where earlier writes are complete.
pub fn read_literal(buffer: &ShapedBuffer) -> Result<Literal> {
    match buffer.shape() {
        Shape::Tuple(elements) => Ok(Literal::tuple(
            (0..elements.len())
                .map(|i| read_literal(&buffer.sub_buffer(&[i])?))
                .collect::<Result<_>>()?,
        )),
        Shape::Array(array) => {
            let bytes = host_bytes(buffer.buffer(&[])?, array.byte_size())?;
            Literal::from_bytes(
                buffer.shape().without_layout(),
                &layout_to_row_major(bytes, array),
            )
        }
        Shape::Token => Ok(Literal::token()),
    }
}

/// Writes `value` into a host-memory buffer of a compatible shape, in the
/// buffer's layout (index tables are left as they are). Call it from stream
/// work.
pub fn write_literal(buffer: &ShapedBuffer, value: &Literal) -> Result<()> {
    if !value.shape().compatible(buffer.shape()) {
        return Err(Error::internal(format!(
            "the program produced {}, but its result shape is {}",
            value.shape(),
            buffer.shape()
        )));
    }
    for (index, shape, node) in buffer.leaves() {
        let leaf = index.iter().try_fold(value, |v, &i| {
            v.tuple_elements()
                .get(i)
                .ok_or_else(|| Error::internal("result tuple shorter than its shape"))
        })?;
        let array = shape.array_or_err()?;
        let bytes = row_major_to_layout(leaf.bytes()?, array);
        // Checks the size; the write goes through the allocation's own pointer.
        host_bytes(node, bytes.len())?;
        if !bytes.is_empty() {
            // SAFETY: the node is host memory of at least `bytes.len()` bytes
            // (checked); stream order makes this the only user.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    node.mem().opaque.cast::<u8>(),
                    bytes.len(),
                )
            }
        }
    }
    Ok(())
}

/// A compiled program that computes on literals: all a simple backend writes
/// of its executable.
///
/// # Threading
/// `run` is called on stream work, possibly from several streams at once.
pub trait LiteralProgram: Send + Sync + 'static {
    /// The module as compiled (after passes and legalization).
    fn module(&self) -> &HloModule;

    /// Computes the entry's result from its arguments (row-major literals, one
    /// per parameter, checked against the parameter shapes).
    fn run(&self, arguments: Vec<Literal>, options: &RunOptions) -> Result<Literal>;
}

/// An [`Executable`] around a [`LiteralProgram`]: checks the stream's platform
/// and the arguments, allocates the result, and enqueues one host callback
/// that reads the arguments, runs the program and writes the result.
pub struct LiteralExecutable<P> {
    platform_id: &'static str,
    program: Arc<P>,
}

impl<P: LiteralProgram> LiteralExecutable<P> {
    pub fn new(platform_id: &'static str, program: P) -> Self {
        LiteralExecutable {
            platform_id,
            program: Arc::new(program),
        }
    }

    /// The program.
    pub fn program(&self) -> &P {
        &self.program
    }
}

impl<P: LiteralProgram> Executable for LiteralExecutable<P> {
    fn module(&self) -> &HloModule {
        self.program.module()
    }

    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        check_platform(self.platform_id, options)?;
        check_arguments(self.program.module(), arguments)?;
        let result = allocate_result(self.program.module(), options)?;
        let args: Vec<ShapedBuffer> = arguments.iter().map(|a| (*a).clone()).collect();
        let (program, out, run_options) = (self.program.clone(), result.clone(), options.clone());
        options.stream.host_callback(Box::new(move || {
            let values = args.iter().map(read_literal).collect::<Result<Vec<_>>>()?;
            write_literal(&out, &program.run(values, &run_options)?)
        }))?;
        Ok(result)
    }
}
