//! Lowering a computation to a [`ThunkSequence`].
//!
//! [`compile_computation`] runs in three steps:
//! 1. compile the nested computations of control flow and fusions first (each is
//!    a sequence of its own), which tells how much scratch their instruction
//!    needs for the nested arena;
//! 2. assign buffers ([`buffer_assignment::assign`]);
//! 3. lower each instruction that defines values to a thunk
//!    ([`crate::kernels::lower`]), with a [`LowerCtx`] that hands it its
//!    operands' and results' slices; then append the final copies.

use super::buffer_assignment::{self, NestedNeeds, SequenceMode};
use super::nested::{self, compile_nested, Nested};
use super::plan_dump;
use crate::kernels;
use crate::kernels::gather_scatter::MaskedGatherPlan;
use crate::lowering::{BlockProducer, LowerCtx};
use crate::thunk::{thunk, BufferSlice, Thunk, ThunkSequence};
use platform_api::hlo::{CompId, HloComputation, InstrId, Op};
use platform_api::passes::dump::{Dump, DUMP_OPTION};
use platform_api::profile::instruction_args;
use platform_api::{CompileOptions, Error, EventArgs, HloModule, Result};

/// A gather that runs inside the fusion after it.
struct FusedGather {
    gather: InstrId,
    how: GatherInFusion,
}

enum GatherInFusion {
    /// As the producer of the fusion's operand `operand`, block by block
    /// (see [`BlockProducer`]).
    Producer {
        operand: usize,
        producer: Box<dyn BlockProducer>,
    },
    /// The fusion is the select of a masked gather: one thunk does both
    /// ([`kernels::gather_scatter::MaskedGather`]).
    Masked(Box<kernels::gather_scatter::MaskedGather>),
}

/// The (gather, fusion) pairs where the gather is lowered just before the
/// fusion, its only user, and the gather's result is not the computation's.
fn gather_fusion_pairs(
    comp: &HloComputation,
    nested: &[Option<Nested>],
) -> Vec<(InstrId, InstrId)> {
    let users = comp.users();
    let lowered: Vec<InstrId> = comp
        .ids()
        .filter(|&id| {
            let op = &comp.instr(id).op;
            !buffer_assignment::is_alias(op)
                && !matches!(op, Op::Parameter { .. } | Op::Constant { .. })
        })
        .collect();
    lowered
        .windows(2)
        .map(|pair| (pair[0], pair[1]))
        .filter(|&(gather, fusion)| {
            matches!(nested[fusion.index()], Some(Nested::Fusion(_)))
                && matches!(comp.instr(gather).op, Op::Gather { .. })
                && comp.root != gather
                && users[gather.index()] == [fusion]
        })
        .collect()
}

/// Per fusion, the masked gather it and the gather before it are (see
/// [`MaskedGatherPlan`]), decided before buffers are assigned: a plan may
/// leave the indices' fusion without room.
fn masked_gather_plans(
    module: &HloModule,
    comp: &HloComputation,
    pairs: &[(InstrId, InstrId)],
    options: &CompileOptions,
) -> Vec<Option<MaskedGatherPlan>> {
    let mut plans: Vec<Option<MaskedGatherPlan>> =
        (0..comp.instructions.len()).map(|_| None).collect();
    for &(gather, fusion) in pairs {
        plans[fusion.index()] = MaskedGatherPlan::new(module, comp, gather, fusion, options);
    }
    plans
}

/// For each fusion, the gather lowered just before it that can run inside it:
/// a row gather whose result is used once, by that fusion, either as the
/// gathered branch of the masked select `jnp.take` emits (`masked`), or as an
/// operand the fusion reads only at each block's own positions; in both cases
/// where nothing the fusion writes (results, scratch) lies over what is read
/// (the gather now runs while the fusion writes). A masked plan that left
/// values without room must be taken (buffer assignment kept what it reads
/// alive until the fusion, so nothing it reads can have been overwritten).
fn fused_gathers(
    ctx: &LowerCtx<'_>,
    nested: &[Option<Nested>],
    pairs: &[(InstrId, InstrId)],
    masked: &mut [Option<MaskedGatherPlan>],
) -> Result<Vec<Option<FusedGather>>> {
    let mut fused: Vec<Option<FusedGather>> = (0..nested.len()).map(|_| None).collect();
    for &(gather, fusion) in pairs {
        let Some(Nested::Fusion(plan)) = &nested[fusion.index()] else {
            continue;
        };
        let mut written = ctx.result_leaves(fusion).to_vec();
        written.extend(ctx.scratch(fusion));
        let overlaps = |a: &BufferSlice, b: &BufferSlice| {
            a.allocation == b.allocation
                && a.offset < b.offset + b.size
                && b.offset < a.offset + a.size
        };
        let reads_written =
            |reads: &[BufferSlice]| reads.iter().any(|r| written.iter().any(|w| overlaps(r, w)));
        if let Some(masked) = masked[fusion.index()].take() {
            let elides = !masked.elided().is_empty();
            match masked.into_kernel(ctx, fusion) {
                Some(kernel) if !reads_written(&kernel.reads()) => {
                    fused[fusion.index()] = Some(FusedGather {
                        gather,
                        how: GatherInFusion::Masked(Box::new(kernel)),
                    });
                    continue;
                }
                _ if elides => {
                    return Err(Error::internal(format!(
                        "%{}: the masked gather whose indices were left without room cannot run",
                        ctx.instr(fusion).name
                    )))
                }
                _ => {}
            }
        }
        let fusion_instr = ctx.instr(fusion);
        let Some(operand) = fusion_instr.operands.iter().position(|&o| o == gather) else {
            continue;
        };
        if !plan.accepts_producer_for(operand) {
            continue;
        }
        let Some(row_gather) = kernels::gather_scatter::RowGather::new(ctx, gather) else {
            continue;
        };
        if !reads_written(&row_gather.reads()) {
            fused[fusion.index()] = Some(FusedGather {
                gather,
                how: GatherInFusion::Producer {
                    operand,
                    producer: Box::new(row_gather),
                },
            });
        }
    }
    Ok(fused)
}

/// Compiles computation `comp_id` of `module` to a thunk sequence with calling
/// convention `mode`.
pub fn compile_computation(
    module: &HloModule,
    comp_id: CompId,
    mode: SequenceMode,
    options: &CompileOptions,
    profile_thunks: bool,
) -> Result<ThunkSequence> {
    // Nested computations recurse through here: see `hlo::stack`.
    platform_api::hlo::stack::deep(|| {
        compile_computation_on_this_stack(module, comp_id, mode, options, profile_thunks)
    })
}

fn compile_computation_on_this_stack(
    module: &HloModule,
    comp_id: CompId,
    mode: SequenceMode,
    options: &CompileOptions,
    profile_thunks: bool,
) -> Result<ThunkSequence> {
    let comp = module
        .computations
        .get(comp_id.index())
        .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", comp_id.0)))?;
    let n = comp.instructions.len();

    // 1. Nested sequences.
    let mut nested: Vec<Option<Nested>> = Vec::with_capacity(n);
    let mut scratch_bytes = vec![0usize; n];
    let mut fusion_in_place = vec![Vec::new(); n];
    for (i, instr) in comp.instructions.iter().enumerate() {
        let plan = compile_nested(module, instr, options)
            .map_err(|e| e.context(format_args!("in %{}", instr.name)))?;
        if let Some(p) = &plan {
            scratch_bytes[i] = p.scratch_bytes();
        }
        if let Some(p) = &plan {
            fusion_in_place[i] = p.fusion_in_place().to_vec();
        }
        nested.push(plan);
    }

    // 2. Buffers, told what the plans need (never recompiling them).
    let pairs = gather_fusion_pairs(comp, &nested);
    let mut masked = masked_gather_plans(module, comp, &pairs, options);
    let mut elided = vec![false; n];
    let mut extra_reads = vec![Vec::new(); n];
    for (i, plan) in masked.iter().enumerate() {
        if let Some(plan) = plan {
            for id in plan.elided() {
                elided[id.index()] = true;
            }
            extra_reads[i] = plan.reads(comp);
            // The kernel reads the table, the indices and the mask's
            // arrays while it writes: its result may lie over the gather's
            // buffer only (which it does not read).
            let operands = &comp.instructions[i].operands;
            fusion_in_place[i].retain(|p| operands.get(p.operand) == Some(&plan.gather()));
        }
    }
    let needs = NestedNeeds {
        scratch_bytes: &scratch_bytes,
        fusion_in_place: &fusion_in_place,
        elided: &elided,
        extra_reads: &extra_reads,
    };
    let assignment = buffer_assignment::assign(module, comp, mode, &needs)?;

    // 3. Thunks.
    let ctx = LowerCtx {
        module,
        comp,
        leaf_slices: &assignment.leaf_slices,
        scratch: &assignment.scratch,
        options,
    };
    let mut thunks: Vec<Box<dyn Thunk>> = Vec::new();
    let mut event_args: Vec<Option<EventArgs>> = Vec::new();
    let mut fused = fused_gathers(&ctx, &nested, &pairs, &mut masked)?;
    let inside_fusions: Vec<InstrId> = fused.iter().flatten().map(|f| f.gather).collect();
    for (i, plan) in nested.into_iter().enumerate() {
        let instr = &comp.instructions[i];
        let id = InstrId(i as u32);
        if buffer_assignment::is_alias(&instr.op)
            || matches!(instr.op, Op::Parameter { .. } | Op::Constant { .. })
            || inside_fusions.contains(&id)
            || elided[i]
        {
            continue;
        }
        let t = match (plan, fused[i].take().map(|g| g.how)) {
            (Some(Nested::Fusion(_)), Some(GatherInFusion::Masked(masked))) => {
                masked.into_thunk(instr.name.clone())
            }
            (Some(Nested::Fusion(plan)), Some(GatherInFusion::Producer { operand, producer })) => {
                nested::lower_fusion_with_producer(&ctx, id, plan, operand, producer)?
            }
            (Some(plan), _) => nested::lower_nested(&ctx, id, plan)?,
            (None, _) => kernels::lower(&ctx, id)?,
        };
        event_args.push(profile_thunks.then(|| {
            let args = instruction_args(Some(module), instr);
            match t.generic_path() {
                Some(why) => {
                    let mut v = args.to_vec();
                    v.push(("generic_path", why.to_string()));
                    v.into()
                }
                None => args,
            }
        }));
        thunks.push(t);
    }
    // A fusion's inner sequence is part of its fusion's line in the plan.
    let dump = if mode == nested::FUSED_MODE {
        None
    } else {
        Dump::open(options.debug_option(DUMP_OPTION), module)?
    };
    if let Some(dump) = dump {
        let text = plan_dump::plan_text(module, comp, &assignment, &thunks);
        dump.text(&format!("host-plan.{}", comp.name), "txt", &text)?;
    }
    if !assignment.final_copies.is_empty() {
        let copies = assignment.final_copies.clone();
        thunks.push(thunk(
            format!("{}.results", comp.name),
            "copy",
            move |ctx| {
                for c in &copies {
                    // SAFETY: buffer assignment made source and destination
                    // distinct buffers of `c.src.size` bytes.
                    unsafe {
                        std::ptr::copy(ctx.ptr(c.src), ctx.ptr(c.dst), c.src.size);
                    }
                }
                Ok(())
            },
        ));
        event_args.push(None);
    }
    Ok(ThunkSequence {
        name: comp.name.clone(),
        thunks,
        allocations: assignment.allocations,
        temp_bytes: assignment.temp_bytes,
        parameter_leaf_bytes: assignment.parameter_leaf_bytes,
        output_leaf_bytes: assignment.output_leaf_bytes,
        output_sources: assignment.output_sources,
        profile_thunks,
        event_args,
    })
}
