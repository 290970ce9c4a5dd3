//! Thunks that run nested sequences: `while`, `conditional`, `call`, and a
//! fused computation run as a sequence (a fusion no block program covers).
//!
//! The nested sequences' arenas live in the instruction's scratch slice (they
//! never run at the same time). A `while` keeps its loop state in its own result
//! buffers: the initial value is copied in unless buffer assignment already put
//! it there (the operand died at the loop), the condition reads the state, and
//! the body overwrites it (the compiler's `WHILE_BODY_MODE`). The compiler
//! builds these from the sequences it compiled (`compiler::nested`).

use super::small_loop::SmallLoop;
use super::{AddressList, BufferSlice, ExecuteContext, RunState, Thunk, ThunkSequence};
use platform_api::{Error, Result};

fn scratch_ptr(ctx: &ExecuteContext<'_>, scratch: Option<BufferSlice>) -> *mut u8 {
    scratch
        .map(|s| ctx.ptr(s))
        .unwrap_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast())
}

fn ptrs(ctx: &ExecuteContext<'_>, slices: &[BufferSlice]) -> AddressList<*mut u8> {
    slices.iter().map(|s| ctx.ptr(*s)).collect()
}

/// How a `while` runs its iterations.
// One per loop instruction, built once: the size of the larger form costs
// nothing.
#[allow(clippy::large_enum_variant)]
pub enum LoopForm {
    /// The condition and the body as nested sequences.
    Sequences {
        condition: ThunkSequence,
        body: ThunkSequence,
    },
    /// One flat list of steps, when the loop's values are small (see
    /// [`super::small_loop`]); its arena is the instruction's scratch.
    Small(SmallLoop),
}

pub struct WhileThunk {
    pub name: String,
    pub form: LoopForm,
    pub init: Vec<BufferSlice>,
    pub state: Vec<BufferSlice>,
    pub scratch: Option<BufferSlice>,
}

/// Counts a loop's iteration `steps` (0-based) before its body runs: tells a
/// watcher, and stops a loop that reached the run's step limit.
#[inline]
pub fn count_iteration(run: &RunState, steps: u64, name: &str) -> Result<()> {
    if let Some(p) = &run.progress {
        p.loop_iteration();
    }
    match run.while_step_limit {
        Some(limit) if steps >= limit => Err(Error::out_of_range(format!(
            "while loop %{name} did not finish within the step limit of {limit} iterations"
        ))),
        _ => Ok(()),
    }
}

impl Thunk for WhileThunk {
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        "while"
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        for (from, to) in self.init.iter().zip(&self.state) {
            let (src, dst) = (ctx.ptr(*from), ctx.ptr(*to));
            if src != dst {
                // SAFETY: distinct buffers of the same size (buffer assignment).
                unsafe { std::ptr::copy_nonoverlapping(src, dst, to.size) };
            }
        }
        let state = ptrs(ctx, &self.state);
        let temp = scratch_ptr(ctx, self.scratch);
        let (condition, body) = match &self.form {
            LoopForm::Sequences { condition, body } => (condition, body),
            LoopForm::Small(small) => {
                // SAFETY: the state buffers are this instruction's results and
                // the scratch its own, of the sizes the small loop was checked
                // against when lowered.
                return unsafe { small.run(ctx.run, &state, temp, &self.name) };
            }
        };
        let mut steps: u64 = 0;
        loop {
            let mut keep_going = 0u8;
            // SAFETY: the state buffers hold the loop's parameter leaves; the
            // condition writes only the byte given as its output and its arena.
            unsafe { condition.run(ctx.run, &state, &[std::ptr::addr_of_mut!(keep_going)], temp)? };
            if keep_going == 0 {
                return Ok(());
            }
            count_iteration(ctx.run, steps, &self.name)?;
            // SAFETY: the body overwrites the state in place, as it was compiled
            // to (its results are its parameters).
            unsafe { body.run(ctx.run, &state, &state, temp)? };
            steps += 1;
        }
    }
}

pub struct ConditionalThunk {
    pub name: String,
    pub selector: BufferSlice,
    pub selector_is_pred: bool,
    pub branches: Vec<ThunkSequence>,
    pub branch_operands: Vec<Vec<BufferSlice>>,
    pub results: Vec<BufferSlice>,
    pub scratch: Option<BufferSlice>,
}

impl Thunk for ConditionalThunk {
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        if self.branches.len() == 1 && self.selector.size == 0 {
            "call"
        } else {
            "conditional"
        }
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        let branch = if self.branches.len() == 1 && self.selector.size == 0 {
            0
        } else if self.selector_is_pred {
            // SAFETY: the selector is a one-byte pred operand.
            let p = unsafe { ctx.ptr(self.selector).read() };
            // `true` runs the first branch, `false` the second.
            if p != 0 {
                0
            } else {
                1
            }
        } else {
            // SAFETY: the selector is an s32 scalar operand.
            let i = unsafe { ctx.ptr(self.selector).cast::<i32>().read() };
            // Out of range, negative included: the last branch, as in XLA
            // (lowering never builds a conditional without branches).
            usize::try_from(i)
                .ok()
                .filter(|&i| i < self.branches.len())
                .unwrap_or(self.branches.len().saturating_sub(1))
        };
        let params = ptrs(ctx, &self.branch_operands[branch]);
        let outputs = ptrs(ctx, &self.results);
        // SAFETY: operands and results come from buffer assignment; results are
        // distinct from operands, and the branch's arena is the scratch slice.
        unsafe {
            self.branches[branch].run(ctx.run, &params, &outputs, scratch_ptr(ctx, self.scratch))
        }
    }
}

/// A fused computation run as a nested thunk sequence.
pub struct SequenceFusion {
    pub name: String,
    pub sequence: ThunkSequence,
    pub operands: Vec<BufferSlice>,
    pub results: Vec<BufferSlice>,
    pub scratch: Option<BufferSlice>,
    /// Why it runs as a sequence (see [`Thunk::generic_path`]).
    pub why: String,
}

impl Thunk for SequenceFusion {
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        "fusion"
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        let params = ptrs(ctx, &self.operands);
        let outputs = ptrs(ctx, &self.results);
        let temp = self
            .scratch
            .map(|s| ctx.ptr(s))
            .unwrap_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast());
        // SAFETY: the slices come from the enclosing sequence's buffer
        // assignment, sized for this fusion's operands, results and arena; the
        // nested sequence only writes its results and its arena.
        unsafe { self.sequence.run(ctx.run, &params, &outputs, temp) }
    }
    fn generic_path(&self) -> Option<&str> {
        Some(&self.why)
    }
}
