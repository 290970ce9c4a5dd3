//! A compiled CUDA program: one CUDA C translation unit holding every kernel,
//! and a host-side schedule of thunks (kernel launches, copies, loops,
//! branches, custom calls) over buffers at fixed offsets of one arena.
//!
//! The program is device-independent: compiling it needs no driver, only the
//! module. Turning `source` into PTX for an architecture is NVRTC's job
//! ([`crate::nvrtc`]); running the schedule is [`crate::run`]'s, on any
//! [`crate::run::KernelDevice`] (a CUDA stream, or the host emulator the tests
//! use to check the generated code without a GPU).

use platform_api::hlo::Shape;

/// Where a buffer lives. Every array value the schedule touches is one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferRef {
    /// `bytes` at `offset` in the run's arena (one allocation per run, sized
    /// [`Program::arena_bytes`]).
    Arena { offset: u64 },
    /// Leaf `leaf` (preorder over the entry parameters' array leaves) of the
    /// caller's arguments.
    Parameter { leaf: usize },
    /// Leaf `leaf` of the result the caller receives.
    Result { leaf: usize },
}

/// One kernel of [`Program::source`].
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The `extern "C" __global__` function's name.
    pub name: String,
    /// How many `char*` parameters it takes (each a buffer pointer).
    pub params: usize,
}

/// A launch shape: a one-dimensional grid of one-dimensional blocks. Kernels
/// loop over their elements with a grid stride, so any grid is correct and the
/// size only sets the parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: u32,
    pub block: u32,
}

/// One step of the schedule, executed in order on one stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Thunk {
    /// Launches `kernel` (an index into [`Program::kernels`]) with `args`.
    Launch {
        kernel: usize,
        dims: LaunchDims,
        args: Vec<BufferRef>,
    },
    /// Copies `bytes` from `src` to `dst` (device to device; never overlapping).
    Copy {
        dst: BufferRef,
        src: BufferRef,
        bytes: u64,
    },
    /// Writes constant bytes (a literal of the program) into `dst`.
    Upload { dst: BufferRef, data: usize },
    /// `while`: runs `condition`, reads the `pred` it wrote at `predicate`,
    /// and while it is true runs `body` and again `condition`.
    While {
        condition: Vec<Thunk>,
        predicate: BufferRef,
        body: Vec<Thunk>,
    },
    /// `conditional`: reads the branch index (`s32`, or `pred` where
    /// `index_is_pred`: true runs branch 0) and runs that branch; an index out
    /// of range runs the last branch, as XLA does.
    Conditional {
        index: BufferRef,
        index_is_pred: bool,
        branches: Vec<Vec<Thunk>>,
    },
    /// A custom call with XLA's GPU ABI: `buffers` are the operands' then the
    /// results' array leaves in preorder.
    CustomCall {
        /// The instruction (for the target name, api version and opaque bytes).
        instruction: String,
        target: String,
        api_version: platform_api::hlo::CustomCallApiVersion,
        opaque: Vec<u8>,
        buffers: Vec<BufferRef>,
    },
}

/// A compiled module; see the module docs.
#[derive(Clone, Debug)]
pub struct Program {
    /// The module's name (for messages and file names).
    pub name: String,
    /// CUDA C: every kernel of the program, after [`crate::codegen::PRELUDE`].
    pub source: String,
    pub kernels: Vec<Kernel>,
    /// Bytes of the arena a run allocates for its intermediates.
    pub arena_bytes: u64,
    /// Constant data the schedule's `Upload`s copy from.
    pub constants: Vec<Vec<u8>>,
    pub schedule: Vec<Thunk>,
    /// The entry's parameter shapes (array leaves in preorder are the
    /// `BufferRef::Parameter` leaves) and result shape.
    pub parameter_shapes: Vec<Shape>,
    pub result_shape: Shape,
}
