//! Nested sequences: what `while`, `conditional`, `call` and fusions that no
//! block program covers run, compiled before their computation's buffers are
//! assigned ([`compile_nested`]) and lowered to the thunks of
//! [`crate::thunk::nested`] once buffers are known ([`lower_nested`]).

use super::buffer_assignment::{OutputMode, SequenceMode};
use super::lower::compile_computation;
use super::small_loop;
use crate::fusion;
use crate::lowering::{BlockProducer, LowerCtx};
use crate::thunk::nested::{ConditionalThunk, LoopForm, SequenceFusion, WhileThunk};
use crate::thunk::small_loop::SmallLoop;
use crate::thunk::{BufferSlice, Thunk, ThunkSequence};
use platform_api::hlo::{CompId, FusionKind, HloInstruction, InstrId, Op};
use platform_api::{CompileOptions, Error, HloModule, Result, Shape};

/// Nested sequences an instruction runs, compiled before its computation's
/// buffers are assigned.
pub enum Nested {
    While(LoopForm),
    Conditional {
        branches: Vec<ThunkSequence>,
    },
    Call {
        callee: ThunkSequence,
    },
    /// A fusion running as a block program.
    Fusion(fusion::FusionPlan),
    /// A `dot → fusion → dot` chain run a block of rows at a time.
    Chain(fusion::chain::ChainPlan),
    /// A fusion no block program covers: its computation as a nested
    /// sequence, and the operands its result may be written over.
    FusedSequence {
        sequence: ThunkSequence,
        in_place: Vec<fusion::InPlace>,
        /// Why no block program covers it (for profiles).
        why: String,
    },
}

impl Nested {
    /// Scratch the instruction needs for the nested arena(s) (they never run at
    /// the same time, so they share it).
    pub fn scratch_bytes(&self) -> usize {
        match self {
            Nested::While(LoopForm::Sequences { condition, body }) => {
                condition.temp_bytes.max(body.temp_bytes)
            }
            Nested::While(LoopForm::Small(small)) => small.arena_bytes,
            Nested::Conditional { branches } => {
                branches.iter().map(|b| b.temp_bytes).max().unwrap_or(0)
            }
            Nested::Call { callee } => callee.temp_bytes,
            Nested::Fusion(plan) => plan.scratch_bytes(),
            Nested::Chain(_) => 0,
            Nested::FusedSequence { sequence, .. } => sequence.temp_bytes,
        }
    }

    /// For a fusion, the operands its results may be written over.
    pub fn fusion_in_place(&self) -> &[fusion::InPlace] {
        match self {
            Nested::Fusion(plan) => plan.in_place_operands(),
            Nested::FusedSequence { in_place, .. } => in_place,
            _ => &[],
        }
    }
}

/// The calling convention of a fused computation: read-only parameters; the
/// result may be the same memory as an operand (in-place fusion), so only the
/// root instruction writes it.
pub const FUSED_MODE: SequenceMode = SequenceMode {
    params_writable: false,
    outputs: OutputMode::Separate {
        absorb: false,
        alias_results: false,
    },
};

/// The calling convention of a `while` condition, a branch or a called
/// computation: read-only parameters, results into the caller's buffers.
pub const NESTED_MODE: SequenceMode = SequenceMode {
    params_writable: false,
    outputs: OutputMode::Separate {
        absorb: true,
        alias_results: false,
    },
};

/// The calling convention of a `while` body: it may overwrite the loop state,
/// and leaves its results in it.
pub const WHILE_BODY_MODE: SequenceMode = SequenceMode {
    params_writable: true,
    outputs: OutputMode::IntoParams,
};

pub fn compile_nested(
    module: &HloModule,
    instr: &HloInstruction,
    options: &CompileOptions,
) -> Result<Option<Nested>> {
    Ok(Some(match &instr.op {
        Op::While { condition, body } => {
            let condition_comp = module.computation(*condition);
            let pred = Shape::scalar(platform_api::ElementType::Pred);
            if !condition_comp.root_instr().shape.compatible(&pred) {
                return Err(Error::invalid_argument(format!(
                    "while condition {} returns {}, not pred[]",
                    condition_comp.name,
                    condition_comp.root_instr().shape
                )));
            }
            match small_loop_of(module, instr, options)? {
                Some(small) => Nested::While(LoopForm::Small(small)),
                None => Nested::While(LoopForm::Sequences {
                    condition: compile_computation(module, *condition, NESTED_MODE, options, true)?,
                    body: compile_computation(module, *body, WHILE_BODY_MODE, options, true)?,
                }),
            }
        }
        Op::Conditional { branches } => Nested::Conditional {
            branches: branches
                .iter()
                .map(|b| compile_computation(module, *b, NESTED_MODE, options, true))
                .collect::<Result<_>>()?,
        },
        Op::Call { to_apply, .. } => Nested::Call {
            callee: compile_computation(module, *to_apply, NESTED_MODE, options, true)?,
        },
        Op::Fusion { kind, calls } => {
            // The chain pass's fusions; any other `kCustom` fusion (XLA's)
            // is no chain and says so at debug level.
            if *kind == FusionKind::Custom {
                match fusion::chain::plan(module, instr, options) {
                    Ok(chain) => return Ok(Some(Nested::Chain(chain))),
                    Err(why) => tracing::debug!("%{}: {why}", instr.name),
                }
            }
            match fusion::plan(module, instr, options) {
                Ok(plan) => Nested::Fusion(plan),
                Err(why) => {
                    tracing::debug!("%{}: fused computation runs unfused: {why}", instr.name);
                    Nested::FusedSequence {
                        sequence: compile_computation(module, *calls, FUSED_MODE, options, false)?,
                        in_place: sequence_in_place_operands(module, *calls, instr),
                        why: format!(
                            "the fusion runs op by op, every intermediate in memory ({why})"
                        ),
                    }
                }
            }
        }
        _ => return Ok(None),
    }))
}

/// The loop as a small loop, when the options allow it (the default, but
/// not with fusion off: that runs every instruction on its own) and it
/// qualifies.
fn small_loop_of(
    module: &HloModule,
    instr: &HloInstruction,
    options: &CompileOptions,
) -> Result<Option<SmallLoop>> {
    if !small_loop::enabled(options)?
        || fusion::Strategy::from_options(options)? != fusion::Strategy::Block
    {
        return Ok(None);
    }
    match small_loop::compile(module, instr) {
        Ok(small) => Ok(Some(small)),
        Err(why) => {
            tracing::debug!("%{}: runs as nested sequences: {why}", instr.name);
            Ok(None)
        }
    }
}

/// The fallback's in-place operands (see the module doc).
fn sequence_in_place_operands(
    module: &HloModule,
    fused: CompId,
    instr: &HloInstruction,
) -> Vec<fusion::InPlace> {
    let Some(comp) = module.computations.get(fused.index()) else {
        return Vec::new();
    };
    let root = comp.root_instr();
    if !root.op.is_elementwise() || matches!(root.op, Op::Copy) || !root.shape.is_array() {
        return Vec::new();
    }
    // For each instruction: does every path from it to the root go through
    // same-shaped elementwise instructions only? Computed from the root down.
    let n = comp.instructions.len();
    let users = comp.users();
    let mut elementwise_to_root = vec![false; n];
    for i in (0..n).rev() {
        let id = platform_api::hlo::InstrId(i as u32);
        if id == comp.root {
            elementwise_to_root[i] = true;
            continue;
        }
        let me = comp.instr(id);
        let uses = &users[i];
        elementwise_to_root[i] = !uses.is_empty()
            && uses.iter().all(|&u| {
                let user = comp.instr(u);
                elementwise_to_root[u.index()]
                    && user.op.is_elementwise()
                    && !matches!(user.op, Op::Copy)
                    && user.shape.dims() == me.shape.dims()
            });
    }
    comp.parameters()
        .into_iter()
        .filter_map(|p| match comp.instr(p).op {
            Op::Parameter { number } if elementwise_to_root[p.index()] => Some(number),
            _ => None,
        })
        .filter(|&number| number < instr.operands.len())
        .map(|operand| fusion::InPlace {
            result: 0,
            operand,
            elementwise: true,
        })
        .collect()
}

/// Lowers a control-flow instruction whose nested sequences were compiled.
pub fn lower_nested(ctx: &LowerCtx<'_>, id: InstrId, nested: Nested) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let name = instr.name.clone();
    let scratch = ctx.scratch(id);
    let results = ctx.result_leaves(id).to_vec();
    match nested {
        Nested::While(form) => {
            let init = ctx.operand_leaves(instr, 0)?.to_vec();
            if let LoopForm::Small(small) = &form {
                let sizes: Vec<usize> = results.iter().map(|s| s.size).collect();
                if sizes != small.state_bytes
                    || (small.arena_bytes > 0 && scratch.is_none_or(|s| s.size < small.arena_bytes))
                {
                    return Err(Error::internal(format!(
                        "%{name}: the state buffers ({sizes:?} bytes) or the scratch do not fit the small loop's ({:?}, {} bytes)",
                        small.state_bytes, small.arena_bytes
                    )));
                }
            }
            Ok(Box::new(WhileThunk {
                name,
                form,
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
        Nested::Chain(plan) => plan.into_thunk(fusion_operands(ctx, id)?, ctx.result_slice(id)?),
        Nested::FusedSequence { sequence, why, .. } => {
            let operands = fusion_operands(ctx, id)?;
            let fits = |got: &[BufferSlice], want: &[usize]| {
                got.len() == want.len() && got.iter().zip(want).all(|(g, &w)| g.size >= w)
            };
            if !fits(&operands, &sequence.parameter_leaf_bytes)
                || !fits(&results, &sequence.output_leaf_bytes)
                || (sequence.temp_bytes > 0 && scratch.is_none_or(|s| s.size < sequence.temp_bytes))
            {
                return Err(Error::internal(format!(
                    "%{name}: the fused sequence's operands, results or scratch do not fit its buffers"
                )));
            }
            Ok(Box::new(SequenceFusion {
                name,
                sequence,
                operands,
                results,
                scratch,
                why,
            }))
        }
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
    plan: fusion::FusionPlan,
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
