//! Thunks: the compiled form of a Host program.
//!
//! # Model
//! The backend lowers a computation to a [`ThunkSequence`]: a list of [`Thunk`]s
//! run in order, and a table of *allocations* the thunks' operands and results
//! live in. A thunk never names memory directly; it holds [`BufferSlice`]s
//! (allocation index, byte offset, byte size) fixed at compile time by buffer
//! assignment, and resolves them through the [`ExecuteContext`] it is run with,
//! which knows each allocation's base address for this execution:
//!
//! * [`Allocation::Parameter`]: an array leaf of a parameter, supplied by the
//!   caller (the argument buffers of an execution, or the operands of a nested
//!   computation);
//! * [`Allocation::Output`]: an array leaf of the result, supplied by the caller
//!   (fresh buffers of an execution, or the result slices of the instruction
//!   running a nested computation);
//! * [`Allocation::Temp`]: the sequence's temp arena, one block per run, in which
//!   buffer assignment packs every other value by liveness;
//! * [`Allocation::Constant`]: bytes baked into the executable.
//!
//! Control flow (`while`, `conditional`, `call`) and fusions own nested
//! sequences; the instruction that runs one reserves a scratch slice of its own
//! arena for the nested arena.
//!
//! # Adding a kernel
//! Implement [`Thunk`] (or build one from a closure with [`FnThunk`]); read
//! inputs with [`ExecuteContext::input`] and write outputs with
//! [`ExecuteContext::output`] (or raw pointers from [`ExecuteContext::ptr`] when a
//! result may share memory with an operand, see `compiler::buffer_assignment`).

pub mod nested;
pub mod small_loop;

use platform_api::{DeviceAssignment, Error, EventArgs, ProfileSink, Progress, Result};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A per-run list of addresses that stays on the stack for the few entries
/// of a small fusion or nested sequence; a loop with a tiny body runs those
/// per iteration, where allocating and freeing such lists were a fifth of
/// its time.
pub type AddressList<T> = SmallVec<[T; 8]>;

/// Allocations of a sequence whose address table lives on the stack.
const INLINE_ALLOCATIONS: usize = 16;

/// A byte range of one allocation of a [`ThunkSequence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferSlice {
    /// Index into the sequence's allocation table.
    pub allocation: u32,
    pub offset: usize,
    pub size: usize,
}

/// Where an allocation of a sequence comes from at run time.
#[derive(Clone, Debug)]
pub enum Allocation {
    /// Array leaf `leaf` (preorder over all parameters' array leaves) of the
    /// parameters.
    Parameter { leaf: usize },
    /// Array leaf `leaf` of the result.
    Output { leaf: usize },
    /// The temp arena.
    Temp,
    /// Bytes owned by the sequence (8-byte aligned).
    Constant(Arc<ConstantBytes>),
}

/// Constant bytes, 8-byte aligned so any element type can be read in place.
#[derive(Debug, Default)]
pub struct ConstantBytes {
    words: Vec<u64>,
    len: usize,
}

impl ConstantBytes {
    pub fn new(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        ConstantBytes {
            words,
            len: bytes.len(),
        }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.len]
    }
    fn base(&self) -> *mut u8 {
        // Never written through: buffer assignment gives constants read-only slices.
        self.words.as_ptr().cast_mut().cast()
    }
}

/// State of one execution shared by every thunk it runs, nested ones included.
pub struct RunState {
    pub replica: usize,
    pub partition: usize,
    pub replica_count: usize,
    pub partition_count: usize,
    pub device_ordinal: usize,
    pub run_id: u64,
    pub rng_seed: u64,
    pub device_assignment: Option<Arc<DeviceAssignment>>,
    pub profile: Option<Arc<ProfileSink>>,
    pub while_step_limit: Option<u64>,
    /// Counts collectives as they run, so replicas match their n-th collectives.
    pub collective_sequence: AtomicU64,
    /// State of `rng` / `rng-get-and-update-state`, advanced as they run.
    pub rng_state: AtomicU64,
    /// Where loop iterations are counted for a watcher, if anyone watches.
    pub progress: Option<Arc<Progress>>,
}

impl RunState {
    /// A state for a single-device run with no profile (tests, tools).
    pub fn simple() -> Self {
        RunState {
            replica: 0,
            partition: 0,
            replica_count: 1,
            partition_count: 1,
            device_ordinal: 0,
            run_id: 0,
            rng_seed: 0,
            device_assignment: None,
            profile: None,
            while_step_limit: None,
            collective_sequence: AtomicU64::new(0),
            rng_state: AtomicU64::new(0),
            progress: None,
        }
    }

    /// The next collective's sequence number.
    pub fn next_collective(&self) -> u64 {
        self.collective_sequence.fetch_add(1, Ordering::Relaxed)
    }
}

/// What a thunk runs against: base addresses for its sequence's allocations and
/// the execution's [`RunState`].
pub struct ExecuteContext<'a> {
    bases: &'a [*mut u8],
    /// Bytes behind each base, for bounds checks in debug builds.
    sizes: &'a [usize],
    pub run: &'a RunState,
}

// SAFETY: the context is a table of addresses; which thread touches which bytes is
// governed by buffer assignment and the thunks' own partitioning of their work.
unsafe impl Sync for ExecuteContext<'_> {}
// SAFETY: as above.
unsafe impl Send for ExecuteContext<'_> {}

impl<'a> ExecuteContext<'a> {
    /// The address of a slice's first byte.
    #[inline]
    pub fn ptr(&self, slice: BufferSlice) -> *mut u8 {
        debug_assert!(
            slice.offset + slice.size <= self.sizes[slice.allocation as usize],
            "slice {slice:?} outside its allocation"
        );
        // `offset` lies within the allocation, as buffer assignment checked.
        self.bases[slice.allocation as usize].wrapping_add(slice.offset)
    }

    /// A slice's bytes as elements of `T`, read-only.
    ///
    /// # Safety
    /// Nothing may write the slice while the returned reference lives (buffer
    /// assignment guarantees this for a thunk's operands, unless the thunk's
    /// result was assigned the same memory: see `buffer_assignment`).
    #[inline]
    pub unsafe fn input<T: bytemuck::Pod>(&self, slice: BufferSlice) -> &'a [T] {
        let n = slice.size / std::mem::size_of::<T>().max(1);
        // SAFETY: buffer assignment aligns every slice for its element type and
        // keeps it inside its allocation; the caller rules out concurrent writes.
        unsafe { std::slice::from_raw_parts(self.ptr(slice).cast::<T>(), n) }
    }

    /// A slice's bytes as elements of `T`, writable.
    ///
    /// # Safety
    /// No other reference to the slice's bytes may exist while the returned one
    /// lives (true of a thunk's result unless it shares memory with an operand).
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn output<T: bytemuck::Pod>(&self, slice: BufferSlice) -> &'a mut [T] {
        let n = slice.size / std::mem::size_of::<T>().max(1);
        // SAFETY: as for `input`; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(slice).cast::<T>(), n) }
    }
}

/// One step of a compiled program.
///
/// # Contract
/// `execute` reads its operands' slices and writes its results' slices through
/// `ctx`, and nothing else. It may use the compute pool for parallel work and
/// must return only when all of it has finished. Errors are reported as `Err`
/// (the sequence adds the instruction's name); kernels do not panic on data
/// (indices out of range are clamped or rejected as the op's semantics say).
pub trait Thunk: Send + Sync {
    /// The HLO instruction this thunk runs (for errors and profiles).
    fn name(&self) -> &str;
    /// What kind of work it is: the opcode (`"dot"`), `"fusion"`, `"copy"`.
    fn category(&self) -> &str;
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()>;
    /// `Some(why)` when the thunk runs its op on a generic path: a loop
    /// element by element, an evaluator of scalar programs, a fusion that
    /// materialises its intermediates. `why` names what the op lacks to
    /// take a fast form; profiles show it next to the op's time.
    fn generic_path(&self) -> Option<&str> {
        None
    }
}

/// A thunk made of a closure.
pub struct FnThunk<F> {
    name: String,
    category: String,
    run: F,
    generic: Option<String>,
}

impl<F> FnThunk<F>
where
    F: Fn(&ExecuteContext<'_>) -> Result<()> + Send + Sync + 'static,
{
    pub fn new(name: impl Into<String>, category: impl Into<String>, run: F) -> Self {
        FnThunk {
            name: name.into(),
            category: category.into(),
            run,
            generic: None,
        }
    }
}

impl<F> Thunk for FnThunk<F>
where
    F: Fn(&ExecuteContext<'_>) -> Result<()> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        &self.category
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        (self.run)(ctx)
    }
    fn generic_path(&self) -> Option<&str> {
        self.generic.as_deref()
    }
}

/// Boxes a closure as a thunk.
pub fn thunk(
    name: impl Into<String>,
    category: impl Into<String>,
    run: impl Fn(&ExecuteContext<'_>) -> Result<()> + Send + Sync + 'static,
) -> Box<dyn Thunk> {
    Box::new(FnThunk::new(name, category, run))
}

/// Boxes a closure as a thunk that runs on a generic path, `why` (`None`:
/// a fast one); see [`Thunk::generic_path`].
pub fn thunk_on_path(
    name: impl Into<String>,
    category: impl Into<String>,
    why: Option<String>,
    run: impl Fn(&ExecuteContext<'_>) -> Result<()> + Send + Sync + 'static,
) -> Box<dyn Thunk> {
    let mut t = FnThunk::new(name, category, run);
    t.generic = why;
    Box::new(t)
}

/// How an entry computation's result leaf is produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputSource {
    /// Written into a fresh output buffer.
    Written,
    /// It is parameter leaf `k`: the argument buffer is returned.
    Parameter(usize),
    /// It is the same value as result leaf `k` (which comes earlier).
    SameAs(usize),
}

/// A compiled computation: thunks in order over a table of allocations.
pub struct ThunkSequence {
    /// The computation's name (for errors).
    pub name: String,
    pub thunks: Vec<Box<dyn Thunk>>,
    pub allocations: Vec<Allocation>,
    /// Bytes of the temp arena one run needs.
    pub temp_bytes: usize,
    /// Bytes each parameter leaf and output leaf has (what callers must supply).
    pub parameter_leaf_bytes: Vec<usize>,
    pub output_leaf_bytes: Vec<usize>,
    /// How each result leaf is produced (all `Written` except for an entry
    /// computation, whose results may be arguments or repeat each other).
    pub output_sources: Vec<OutputSource>,
    /// Whether to record a profile span per thunk when the run has a profile.
    pub profile_thunks: bool,
    /// Per thunk, the details of the instruction it runs for profile events.
    pub event_args: Vec<Option<EventArgs>>,
}

impl ThunkSequence {
    /// Runs every thunk in order. `params` and `outputs` are the leaf addresses
    /// of the parameters and results (one per leaf, in preorder); `temp` is a
    /// block of at least `temp_bytes` bytes, 64-byte aligned.
    ///
    /// # Safety
    /// Every address must be valid for the bytes its leaf needs, `temp` for
    /// `temp_bytes`; output and temp memory must not be used by anyone else while
    /// this runs, and parameters must not be written by anyone else.
    pub unsafe fn run(
        &self,
        run: &RunState,
        params: &[*mut u8],
        outputs: &[*mut u8],
        temp: *mut u8,
    ) -> Result<()> {
        // Nested sequences (calls, loops, branches) recurse through here:
        // see `hlo::stack`.
        // SAFETY: the caller's guarantees, passed on unchanged.
        platform_api::hlo::stack::deep(|| unsafe {
            self.run_on_this_stack(run, params, outputs, temp)
        })
    }

    /// [`ThunkSequence::run`] without the stack check.
    ///
    /// # Safety
    /// As [`ThunkSequence::run`].
    unsafe fn run_on_this_stack(
        &self,
        run: &RunState,
        params: &[*mut u8],
        outputs: &[*mut u8],
        temp: *mut u8,
    ) -> Result<()> {
        if params.len() != self.parameter_leaf_bytes.len()
            || outputs.len() != self.output_leaf_bytes.len()
        {
            return Err(Error::internal(format!(
                "{}: called with {} parameter and {} output buffers; needs {} and {}",
                self.name,
                params.len(),
                outputs.len(),
                self.parameter_leaf_bytes.len(),
                self.output_leaf_bytes.len()
            )));
        }
        let n = self.allocations.len();
        let resolve = |a: &Allocation| match a {
            Allocation::Parameter { leaf } => (params[*leaf], self.parameter_leaf_bytes[*leaf]),
            Allocation::Output { leaf } => (outputs[*leaf], self.output_leaf_bytes[*leaf]),
            Allocation::Temp => (temp, self.temp_bytes),
            Allocation::Constant(c) => (c.base(), c.len()),
        };
        // The tables of a small sequence (what a loop body or condition
        // compiles to) live on the stack: a loop with a tiny body runs them
        // per iteration, where allocating and freeing were a fifth of its time.
        if n <= INLINE_ALLOCATIONS {
            let mut bases = [std::ptr::null_mut::<u8>(); INLINE_ALLOCATIONS];
            let mut sizes = [0usize; INLINE_ALLOCATIONS];
            for (k, a) in self.allocations.iter().enumerate() {
                (bases[k], sizes[k]) = resolve(a);
            }
            return self.run_thunks(run, &bases[..n], &sizes[..n]);
        }
        let (bases, sizes): (Vec<*mut u8>, Vec<usize>) =
            self.allocations.iter().map(resolve).unzip();
        self.run_thunks(run, &bases, &sizes)
    }

    /// Runs every thunk against the allocations at `bases`.
    fn run_thunks(&self, run: &RunState, bases: &[*mut u8], sizes: &[usize]) -> Result<()> {
        let ctx = ExecuteContext { bases, sizes, run };
        let profile = if self.profile_thunks {
            run.profile.as_deref()
        } else {
            None
        };
        for (i, t) in self.thunks.iter().enumerate() {
            let start = profile.map(|_| Instant::now());
            t.execute(&ctx)
                .map_err(|e| e.context(format_args!("%{} ({})", t.name(), t.category())))?;
            if let (Some(p), Some(start)) = (profile, start) {
                let args = self.event_args.get(i).cloned().flatten();
                p.record_with_args(t.name(), t.category(), start, p.this_thread(), args);
            }
        }
        Ok(())
    }
}

/// A block of temp memory for one run of a sequence: 64-byte aligned, zeroed.
pub struct TempBlock {
    words: Vec<Align64>,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Align64([u8; 64]);

impl TempBlock {
    pub fn new(bytes: usize) -> Self {
        TempBlock {
            words: vec![Align64([0; 64]); bytes.div_ceil(64)],
        }
    }
    pub fn ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }
}
