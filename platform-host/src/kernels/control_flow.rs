//! `while`, `conditional` and `call`: thunks that run nested sequences.
//!
//! The nested sequences' arenas live in the instruction's scratch slice (they
//! never run at the same time). A `while` keeps its loop state in its own result
//! buffers: the initial value is copied in unless buffer assignment already put
//! it there (the operand died at the loop), the condition reads the state, and
//! the body overwrites it (see `WHILE_BODY_MODE`).

use crate::compiler::lower::Nested;
use crate::fusion::FusionPlan;
use crate::lowering::BlockProducer;
use crate::lowering::LowerCtx;
use crate::thunk::{BufferSlice, ExecuteContext, Thunk, ThunkSequence};
use platform_api::hlo::InstrId;
use platform_api::{Error, Result};

fn scratch_ptr(ctx: &ExecuteContext<'_>, scratch: Option<BufferSlice>) -> *mut u8 {
    scratch
        .map(|s| ctx.ptr(s))
        .unwrap_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast())
}

fn ptrs(ctx: &ExecuteContext<'_>, slices: &[BufferSlice]) -> Vec<*mut u8> {
    slices.iter().map(|s| ctx.ptr(*s)).collect()
}

/// Lowers a control-flow instruction whose nested sequences were compiled.
pub fn lower(ctx: &LowerCtx<'_>, id: InstrId, nested: Nested) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let name = instr.name.clone();
    let scratch = ctx.scratch(id);
    let results = ctx.result_leaves(id).to_vec();
    match nested {
        Nested::While { condition, body } => {
            let init = ctx.operand_leaves(instr, 0)?.to_vec();
            Ok(Box::new(WhileThunk {
                name,
                condition,
                body,
                init,
                state: results,
                scratch,
            }))
        }
        Nested::Conditional { branches } => {
            let selector = ctx.operand_slice(instr, 0)?;
            let selector_is_pred = ctx.operand_array(instr, 0)?.element_type.is_pred();
            let mut branch_operands = Vec::new();
            for k in 0..branches.len() {
                branch_operands.push(ctx.operand_leaves(instr, k + 1)?.to_vec());
            }
            Ok(Box::new(ConditionalThunk {
                name,
                selector,
                selector_is_pred,
                branches,
                branch_operands,
                results,
                scratch,
            }))
        }
        Nested::Call { callee } => {
            let mut operands = Vec::new();
            for k in 0..instr.operands.len() {
                operands.extend_from_slice(ctx.operand_leaves(instr, k)?);
            }
            Ok(Box::new(ConditionalThunk {
                name,
                selector: BufferSlice {
                    allocation: 0,
                    offset: 0,
                    size: 0,
                },
                selector_is_pred: false,
                branches: vec![callee],
                branch_operands: vec![operands],
                results,
                scratch,
            }))
        }
        Nested::Fusion(plan) => plan.into_thunk(fusion_operands(ctx, id)?, results, scratch),
    }
}

/// Every array leaf of fusion `id`'s operands, in order.
fn fusion_operands(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Vec<BufferSlice>> {
    let instr = ctx.instr(id);
    let mut operands = Vec::new();
    for k in 0..instr.operands.len() {
        operands.extend_from_slice(ctx.operand_leaves(instr, k)?);
    }
    Ok(operands)
}

/// Lowers fusion `id` with its operand `k` computed block by block by
/// `producer` (see [`crate::lowering::BlockProducer`]).
pub fn lower_fusion_with_producer(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    plan: FusionPlan,
    k: usize,
    producer: Box<dyn BlockProducer>,
) -> Result<Box<dyn Thunk>> {
    plan.into_thunk_with_producer(
        fusion_operands(ctx, id)?,
        ctx.result_leaves(id).to_vec(),
        ctx.scratch(id),
        k,
        producer,
    )
}

struct WhileThunk {
    name: String,
    condition: ThunkSequence,
    body: ThunkSequence,
    init: Vec<BufferSlice>,
    state: Vec<BufferSlice>,
    scratch: Option<BufferSlice>,
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
        let mut steps: u64 = 0;
        loop {
            let mut keep_going = 0u8;
            // SAFETY: the state buffers hold the loop's parameter leaves; the
            // condition writes only the byte given as its output and its arena.
            unsafe {
                self.condition
                    .run(ctx.run, &state, &[std::ptr::addr_of_mut!(keep_going)], temp)?
            };
            if keep_going == 0 {
                return Ok(());
            }
            if let Some(limit) = ctx.run.while_step_limit {
                if steps >= limit {
                    return Err(Error::out_of_range(format!(
                        "while loop %{} did not finish within the step limit of {limit} iterations",
                        self.name
                    )));
                }
            }
            // SAFETY: the body overwrites the state in place, as it was compiled
            // to (its results are its parameters).
            unsafe { self.body.run(ctx.run, &state, &state, temp)? };
            steps += 1;
        }
    }
}

struct ConditionalThunk {
    name: String,
    selector: BufferSlice,
    selector_is_pred: bool,
    branches: Vec<ThunkSequence>,
    branch_operands: Vec<Vec<BufferSlice>>,
    results: Vec<BufferSlice>,
    scratch: Option<BufferSlice>,
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
            if i < 0 || i as usize >= self.branches.len() {
                return Err(Error::out_of_range(format!(
                    "conditional %{}: branch index {i} is outside 0..{} (this platform rejects out-of-range indices instead of running the last branch)",
                    self.name,
                    self.branches.len()
                )));
            }
            i as usize
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
