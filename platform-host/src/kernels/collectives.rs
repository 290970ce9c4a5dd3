//! Collectives across the executions of one multi-device launch: all-reduce,
//! all-gather, reduce-scatter, all-to-all, collective-permute,
//! collective-broadcast.
//!
//! Every collective is a rendezvous exchange ([`crate::runtime::rendezvous`])
//! followed by local arithmetic. Participants are identified by global device
//! ids (`replica * partition_count + partition`), grouped by XLA's group mode
//! for the op (cross-replica, cross-partition, cross-replica-and-partition,
//! flattened ids), which [`platform_api::hlo::analysis::collective_groups`]
//! decides for this backend and the reference evaluator alike.
//!
//! When a launch spans processes (MPI), the process's installed
//! `evaluator::collectives::Transport` does the exchange instead of the
//! in-process rendezvous; the arithmetic after it is the same.
//!
//! An empty replica group list means one group of everyone. Reductions combine
//! contributions in rank order with the reducer (typed for `add`/`max`/...,
//! the vectorized scalar evaluator otherwise).

use super::scalar_program::{binary_reducer, ScalarProgram};
use super::strided::StridedCopy;
use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::lowering::LowerCtx;
use crate::runtime::rendezvous::{exchange, RendezvousKey};
use crate::thunk::{thunk, BufferSlice, ExecuteContext, RunState, Thunk};
use platform_api::hlo::analysis::collective_groups::{participants, Devices};
use platform_api::hlo::{CompId, InstrId, Op};
use platform_api::{ArrayShape, Error, Result};
use std::sync::Arc;

/// (this participant's rank, the group, every participant's data in rank order).
type Meeting = (usize, Vec<usize>, Arc<Vec<Vec<u8>>>);

/// Exchanges `data` with this execution's group (XLA's group mode for the
/// op of the instruction named in `op`).
fn meet((op, name): &(Op, String), run: &RunState, data: Vec<u8>) -> Result<Meeting> {
    let (group, rank) = group_of(op, run)?;
    // Across processes, the installed transport carries the exchange.
    if let Some(transport) = platform_api::evaluator::collectives::transport() {
        let all = transport.exchange(name, &group, rank, data)?;
        return Ok((rank, group, Arc::new(all)));
    }
    let key = RendezvousKey {
        run_id: run.run_id,
        sequence: run.next_collective(),
        group: group.clone(),
    };
    let all = exchange(&key, rank, data)?;
    Ok((rank, group, all))
}

/// The group this execution meets for `op` (global device ids) and its
/// place in it.
fn group_of(op: &Op, run: &RunState) -> Result<(Vec<usize>, usize)> {
    participants(
        op,
        Devices {
            replica: run.replica,
            partition: run.partition,
            replica_count: run.replica_count.max(1),
            partition_count: run.partition_count.max(1),
        },
    )
}

/// An all-reduce across processes in two phases
/// (`evaluator::collectives::all_reduce_two_phase`: an all-to-all of chunks,
/// each process reducing its chunk in rank order, an all-gather of the
/// reduced chunks), when a transport is installed and finds the contribution
/// big enough; `false` leaves it to the one-round [`meet`].
fn all_reduce_remote(
    (op, name): &(Op, String),
    ctx: &ExecuteContext<'_>,
    operand_leaves: &[BufferSlice],
    results: &[BufferSlice],
    reducers: &[(Reducer, usize)],
) -> Result<bool> {
    let Some(transport) = platform_api::evaluator::collectives::transport() else {
        return Ok(false);
    };
    let total: usize = operand_leaves.iter().map(|s| s.size).sum();
    let mut leaves = Vec::with_capacity(reducers.len());
    for ((_, count), (leaf, out)) in reducers.iter().zip(operand_leaves.iter().zip(results)) {
        // Chunks split at element boundaries: a packed sub-byte layout (or an
        // empty array) stays with the one-round exchange.
        if *count == 0 || leaf.size % count != 0 || out.size != leaf.size {
            return Ok(false);
        }
        leaves.push((*count, leaf.size / count));
    }
    let (group, rank) = group_of(op, ctx.run)?;
    match transport.two_phase_from(group.len()) {
        Some(from) if group.len() > 1 && total >= from => {}
        _ => return Ok(false),
    }
    platform_api::evaluator::collectives::all_reduce_two_phase(
        transport.as_ref(),
        name,
        &group,
        rank,
        &leaves,
        &mut |leaf, range, data| {
            let s = operand_leaves[leaf];
            // SAFETY: `range` lies inside the operand leaf's `s.size` bytes
            // (element ranges of its element count).
            data.extend_from_slice(unsafe {
                std::slice::from_raw_parts(ctx.ptr(s).add(range.start), range.len())
            });
        },
        &mut |leaf, acc, x| {
            let (reducer, _) = &reducers[leaf];
            reducer.apply(acc, x, acc.len() / leaves[leaf].1);
            Ok(())
        },
        &mut |leaf, offset, bytes| {
            // SAFETY: the bytes of an element range of the result leaf, which
            // has the operand leaf's size (checked above); every operand byte
            // was read before the first write, so an in-place all-reduce is fine.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    ctx.ptr(results[leaf]).add(offset),
                    bytes.len(),
                )
            };
        },
    )?;
    Ok(true)
}

/// An all-reduce of one array across processes straight from the operand's
/// buffer into the result's (`Transport::all_reduce_into`), where the
/// installed transport has that path: no packing, no intermediate copy of
/// the contribution or of the result. `false` leaves it to
/// [`all_reduce_remote`] and [`meet`] (several leaves, an operand that shares
/// the result's memory, a packed sub-byte layout, a transport without it).
fn all_reduce_direct(
    (op, name): &(Op, String),
    ctx: &ExecuteContext<'_>,
    operand_leaves: &[BufferSlice],
    results: &[BufferSlice],
    reducers: &[(Reducer, usize)],
) -> Result<bool> {
    let ([leaf], [out], [(reducer, count)]) = (operand_leaves, results, reducers) else {
        return Ok(false);
    };
    if *count == 0 || leaf.size % count != 0 || out.size != leaf.size {
        return Ok(false);
    }
    let Some(transport) = platform_api::evaluator::collectives::transport() else {
        return Ok(false);
    };
    let (src, dst) = (ctx.ptr(*leaf), ctx.ptr(*out));
    let len = leaf.size;
    if (src as usize) < dst as usize + len && (dst as usize) < src as usize + len {
        return Ok(false);
    }
    let (group, rank) = group_of(op, ctx.run)?;
    let width = len / count;
    // SAFETY: the operand and result leaves each hold `len` bytes and do not
    // overlap (checked above); nothing else touches them while this thunk runs.
    let (src, dst) = unsafe {
        (
            std::slice::from_raw_parts(src.cast_const(), len),
            std::slice::from_raw_parts_mut(dst, len),
        )
    };
    transport.all_reduce_into(name, &group, rank, src, dst, width, &mut |acc, x| {
        reducer.apply(acc, x, acc.len() / width);
        Ok(())
    })
}

fn read_leaves(ctx: &ExecuteContext<'_>, leaves: &[BufferSlice]) -> Vec<u8> {
    let mut data = Vec::new();
    for s in leaves {
        // SAFETY: an operand leaf of `s.size` bytes.
        data.extend_from_slice(unsafe { std::slice::from_raw_parts(ctx.ptr(*s), s.size) });
    }
    data
}

/// Combines contributions elementwise with a reducer.
enum Reducer {
    Typed(Kernel),
    General(Arc<ScalarProgram>),
}

impl Reducer {
    fn new(ctx: &LowerCtx<'_>, comp: CompId, ty: platform_api::ElementType) -> Result<Reducer> {
        if let Some((op, t)) = binary_reducer(ctx.module, comp) {
            if t == ty {
                return Ok(Reducer::Typed(ops::binary(op, t, t)?));
            }
        }
        let p = ScalarProgram::compile(ctx.module, comp)?;
        if p.param_count() != 2 || p.output_types() != [ty] {
            return Err(Error::invalid_argument(
                "the reducer must combine two scalars of the operand's type",
            ));
        }
        Ok(Reducer::General(Arc::new(p)))
    }

    /// `acc = reduce(acc, x)` over `n` elements.
    fn apply(&self, acc: &mut [u8], x: &[u8], n: usize) {
        match self {
            Reducer::Typed(k) => {
                let dst = acc.as_mut_ptr();
                // SAFETY: `acc` and `x` hold `n` elements of the reducer's
                // type; the destination is exactly the first operand.
                unsafe { k.call(&[Arg::Ptr(dst.cast_const()), Arg::Ptr(x.as_ptr())], dst, n) }
            }
            Reducer::General(p) => {
                let copy = acc.to_vec();
                // SAFETY: both inputs hold `n` elements; `acc` has room for `n`.
                unsafe { p.eval_batch(&[copy.as_ptr(), x.as_ptr()], n, 0, acc.as_mut_ptr()) };
            }
        }
    }
}

/// The parts of an asynchronous start's result beside the collective's own
/// result: element 0, the operands as they came in, and the context values
/// after the result (a collective-permute-start's u32[] scalars). Both are
/// empty for a synchronous collective (and all-reduce-start, whose value is
/// its result alone).
#[derive(Clone)]
struct StartParts {
    /// (operand leaf, the start's element-0 leaf it is copied to).
    echo: Vec<(BufferSlice, BufferSlice)>,
    /// Leaves written with zeros: nothing on this platform reads them.
    context: Vec<BufferSlice>,
}

impl StartParts {
    /// Splits the result leaves of `instr` into the start's parts and the
    /// collective's result (all of them for a synchronous collective).
    fn split(
        instr: &platform_api::hlo::HloInstruction,
        operand_leaves: &[BufferSlice],
        leaves: &[BufferSlice],
    ) -> Result<(StartParts, Vec<BufferSlice>, platform_api::Shape)> {
        let none = StartParts {
            echo: Vec::new(),
            context: Vec::new(),
        };
        match &instr.op {
            Op::AllGatherStart { .. } | Op::CollectivePermuteStart { .. } => {}
            _ => return Ok((none, leaves.to_vec(), instr.shape.clone())),
        }
        let name = &instr.name;
        let elements = instr.shape.tuple_shapes();
        let (Some(inputs), Some(result)) = (elements.first(), elements.get(1)) else {
            return Err(Error::invalid_argument(format!(
                "%{name}: a {} returns a tuple of at least (operands, results), not {}",
                instr.opcode(),
                instr.shape
            )));
        };
        let (n_in, n_out) = (inputs.leaves().len(), result.leaves().len());
        let (echo, rest) = leaves.split_at(n_in.min(leaves.len()));
        if echo.len() != operand_leaves.len()
            || echo
                .iter()
                .zip(operand_leaves)
                .any(|(e, o)| e.size != o.size)
            || rest.len() < n_out
        {
            return Err(Error::invalid_argument(format!(
                "%{name}: the start's element 0 {inputs} is not its operands"
            )));
        }
        let (out, context) = rest.split_at(n_out);
        Ok((
            StartParts {
                echo: operand_leaves
                    .iter()
                    .copied()
                    .zip(echo.iter().copied())
                    .collect(),
                context: context.to_vec(),
            },
            out.to_vec(),
            result.clone(),
        ))
    }

    /// Writes the operands into element 0 and zeros into the context.
    fn finish(&self, ctx: &ExecuteContext<'_>) {
        for (from, to) in &self.echo {
            // SAFETY: two leaves of `from.size` bytes (checked when split);
            // `copy` allows them to be the same memory.
            unsafe { std::ptr::copy(ctx.ptr(*from).cast_const(), ctx.ptr(*to), from.size) };
        }
        for c in &self.context {
            // SAFETY: a result leaf of `c.size` bytes.
            unsafe { std::ptr::write_bytes(ctx.ptr(*c), 0, c.size) };
        }
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let name = instr.name.clone();
    let category = instr.opcode().name();
    if let Some(form) = platform_api::evaluator::collectives::unsupported_form(instr) {
        return Err(Error::unimplemented(form));
    }
    let mut operand_leaves = Vec::new();
    for k in 0..instr.operands.len() {
        operand_leaves.extend_from_slice(ctx.operand_leaves(instr, k)?);
    }
    // An asynchronous start runs as its synchronous form into element 1 of
    // its result (the done only aliases that element), then fills the rest.
    let (start, results, out_shape) =
        StartParts::split(instr, &operand_leaves, ctx.result_leaves(id))?;
    let leaf_shapes: Vec<ArrayShape> = (0..instr.operands.len())
        .flat_map(|k| {
            ctx.operand(instr, k)
                .map(|o| {
                    o.shape
                        .leaves()
                        .into_iter()
                        .map(|(_, a)| a.clone())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    match &instr.op {
        Op::AllReduce { to_apply, .. } | Op::AllReduceStart { to_apply, .. } => {
            let reducers: Vec<(Reducer, usize)> = leaf_shapes
                .iter()
                .map(|a| {
                    Ok((
                        Reducer::new(ctx, *to_apply, a.element_type)?,
                        a.element_count(),
                    ))
                })
                .collect::<Result<_>>()?;
            if results.len() != operand_leaves.len() {
                return Err(Error::invalid_argument(format!(
                    "all-reduce %{name}: result and operands differ"
                )));
            }
            let op = (instr.op.clone(), name.clone());
            Ok(thunk(name, category, move |ctx| {
                if all_reduce_direct(&op, ctx, &operand_leaves, &results, &reducers)?
                    || all_reduce_remote(&op, ctx, &operand_leaves, &results, &reducers)?
                {
                    return Ok(());
                }
                let (_, _, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                let mut offset = 0;
                for ((reducer, n), out) in reducers.iter().zip(&results) {
                    let len = out.size;
                    let mut acc = all[0][offset..offset + len].to_vec();
                    for contribution in all.iter().skip(1) {
                        reducer.apply(&mut acc, &contribution[offset..offset + len], *n);
                    }
                    // SAFETY: the result leaf holds `len` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), ctx.ptr(*out), len) };
                    offset += len;
                }
                Ok(())
            }))
        }
        Op::AllGather { dimension, .. } | Op::AllGatherStart { dimension, .. } => {
            let (shape, out) = single(&leaf_shapes, &results, &name)?;
            let d = *dimension;
            if d >= shape.rank() {
                return Err(Error::invalid_argument(format!(
                    "all-gather %{name}: dimension {d} out of range"
                )));
            }
            let result_shape = out_shape.as_array().cloned().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "all-gather %{name} must produce an array, not {out_shape}"
                ))
            })?;
            let op = (instr.op.clone(), name.clone());
            Ok(thunk(name, category, move |ctx| {
                let (_, group, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                if result_shape.dims[d] != shape.dims[d] * group.len() {
                    return Err(Error::invalid_argument(format!(
                        "all-gather of {shape} over {} participants cannot give {result_shape}",
                        group.len()
                    )));
                }
                let plan = place_block(&shape, &result_shape, d);
                for (r, part) in all.iter().enumerate() {
                    let at = r * shape.dims[d] * plan.1;
                    // SAFETY: block r of the result along `d`.
                    unsafe { plan.0.run(part.as_ptr(), ctx.ptr(out).add(at)) };
                }
                start.finish(ctx);
                Ok(())
            }))
        }
        Op::ReduceScatter {
            dimension,
            to_apply,
            ..
        } => {
            let (shape, out) = single(&leaf_shapes, &results, &name)?;
            let d = *dimension;
            let result_shape = ctx.result_array(instr)?.clone();
            if d >= shape.rank() {
                return Err(Error::invalid_argument(format!(
                    "reduce-scatter %{name}: dimension {d} out of range"
                )));
            }
            let reducer = Reducer::new(ctx, *to_apply, shape.element_type)?;
            let op = (instr.op.clone(), name.clone());
            Ok(thunk(name, category, move |ctx| {
                let (rank, group, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                let n = shape.element_count();
                let mut acc = all[0].clone();
                for c in all.iter().skip(1) {
                    reducer.apply(&mut acc, c, n);
                }
                if shape.dims[d] != result_shape.dims[d] * group.len() {
                    return Err(Error::invalid_argument(format!(
                        "reduce-scatter of {shape} over {} participants cannot give {result_shape}",
                        group.len()
                    )));
                }
                // Take block `rank` along `d`.
                let w = shape.element_type.byte_size();
                let strides = StridedCopy::row_major(&shape.dims);
                let copy = StridedCopy::new(
                    w,
                    &result_shape.dims,
                    &strides,
                    &StridedCopy::row_major(&result_shape.dims),
                );
                let start = (rank * result_shape.dims[d]) as isize * strides[d] * w as isize;
                // SAFETY: the block lies inside the reduced array.
                unsafe { copy.run(acc.as_ptr().offset(start), ctx.ptr(out)) };
                Ok(())
            }))
        }
        Op::AllToAll {
            split_dimension, ..
        } => {
            let op = (instr.op.clone(), name.clone());
            match split_dimension {
                Some(d) => {
                    let (shape, out) = single(&leaf_shapes, &results, &name)?;
                    let d = *d;
                    if d >= shape.rank() {
                        return Err(Error::invalid_argument(format!(
                            "all-to-all %{name}: dimension {d} out of range"
                        )));
                    }
                    Ok(thunk(name, category, move |ctx| {
                        let (rank, group, all) =
                            meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                        let g = group.len();
                        if shape.dims[d] % g != 0 {
                            return Err(Error::invalid_argument(format!(
                                "all-to-all: dimension {d} of {shape} does not split into {g}"
                            )));
                        }
                        let mut block = shape.clone();
                        block.dims[d] /= g;
                        let w = shape.element_type.byte_size();
                        let strides = StridedCopy::row_major(&shape.dims);
                        // Chunk `rank` of each participant goes to position i.
                        let copy = StridedCopy::new(w, &block.dims, &strides, &strides);
                        for (i, part) in all.iter().enumerate() {
                            let from = (rank * block.dims[d]) as isize * strides[d] * w as isize;
                            let to = (i * block.dims[d]) as isize * strides[d] * w as isize;
                            // SAFETY: both blocks lie inside arrays of `shape`.
                            unsafe {
                                copy.run(part.as_ptr().offset(from), ctx.ptr(out).offset(to))
                            };
                        }
                        Ok(())
                    }))
                }
                None => Ok(thunk(name, category, move |ctx| {
                    let (rank, group, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                    if operand_leaves.len() != group.len() || results.len() != group.len() {
                        return Err(Error::invalid_argument(
                            "all-to-all: needs one operand per participant",
                        ));
                    }
                    let sizes: Vec<usize> = operand_leaves.iter().map(|s| s.size).collect();
                    let offset: usize = sizes[..rank].iter().sum();
                    for (i, part) in all.iter().enumerate() {
                        // SAFETY: result leaf i has the size of operand `rank`.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                part.as_ptr().add(offset),
                                ctx.ptr(results[i]),
                                sizes[rank].min(results[i].size),
                            )
                        };
                    }
                    Ok(())
                })),
            }
        }
        Op::CollectivePermute {
            source_target_pairs,
            ..
        }
        | Op::CollectivePermuteStart {
            source_target_pairs,
            ..
        } => {
            // One array, or a combined permute's tuple: result leaf k is
            // operand leaf k of the source, every operand going by the same
            // pairs.
            let result_shapes: Vec<ArrayShape> = out_shape
                .leaves()
                .into_iter()
                .map(|(_, a)| a.clone())
                .collect();
            let same = |a: &ArrayShape, b: &ArrayShape| {
                a.element_type == b.element_type && a.dims == b.dims
            };
            if result_shapes.len() != leaf_shapes.len()
                || results.len() != operand_leaves.len()
                || result_shapes
                    .iter()
                    .zip(&leaf_shapes)
                    .any(|(r, o)| !same(r, o))
                || results
                    .iter()
                    .zip(&operand_leaves)
                    .any(|(r, o)| r.size != o.size)
            {
                return Err(Error::invalid_argument(format!(
                    "%{name}: the result {out_shape} is not the {} operands' shapes",
                    instr.operands.len()
                )));
            }
            let op = (instr.op.clone(), name.clone());
            let pairs = source_target_pairs.clone();
            Ok(thunk(name, category, move |ctx| {
                let (rank, group, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                let n = group.len();
                if let Some((s, t)) = pairs.iter().find(|&&(s, t)| s >= n || t >= n) {
                    return Err(Error::invalid_argument(format!(
                        "%{}: source-target pair {{{s},{t}}} names an id outside 0..{n}",
                        op.1
                    )));
                }
                let source = pairs.iter().find(|(_, t)| *t == rank).map(|(s, _)| *s);
                let sent = source.and_then(|s| all.get(s));
                let total: usize = results.iter().map(|r| r.size).sum();
                if let Some(data) = sent {
                    // Another process's contribution: the same operands.
                    if data.len() != total {
                        return Err(Error::invalid_argument(format!(
                            "%{}: the source sent {} bytes, the result holds {total}",
                            op.1,
                            data.len()
                        )));
                    }
                }
                let mut offset = 0;
                for out in &results {
                    // SAFETY: the result leaf holds `out.size` bytes, and the
                    // source's data all of the result's (checked above).
                    unsafe {
                        match sent {
                            Some(data) => std::ptr::copy_nonoverlapping(
                                data.as_ptr().add(offset),
                                ctx.ptr(*out),
                                out.size,
                            ),
                            None => std::ptr::write_bytes(ctx.ptr(*out), 0, out.size),
                        }
                    }
                    offset += out.size;
                }
                start.finish(ctx);
                Ok(())
            }))
        }
        Op::CollectiveBroadcast { .. } => {
            let op = (instr.op.clone(), name.clone());
            Ok(thunk(name, category, move |ctx| {
                let (_, _, all) = meet(&op, ctx.run, read_leaves(ctx, &operand_leaves))?;
                let mut offset = 0;
                for out in &results {
                    // SAFETY: as above.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            all[0].as_ptr().add(offset),
                            ctx.ptr(*out),
                            out.size,
                        )
                    };
                    offset += out.size;
                }
                Ok(())
            }))
        }
        _ => Err(Error::unimplemented(format!(
            "the Host platform does not support {} (instruction %{name})",
            instr.opcode()
        ))),
    }
}

fn single(
    shapes: &[ArrayShape],
    results: &[BufferSlice],
    name: &str,
) -> Result<(ArrayShape, BufferSlice)> {
    match (shapes, results) {
        ([s], [r]) => Ok((s.clone(), *r)),
        _ => Err(Error::unimplemented(format!(
            "%{name}: this collective takes exactly one array here"
        ))),
    }
}

/// A copy of an operand-shaped block into the result at a position along `d`;
/// also returns the element stride of `d` in the result (in bytes).
fn place_block(block: &ArrayShape, result: &ArrayShape, d: usize) -> (StridedCopy, usize) {
    let w = block.element_type.byte_size();
    let out_strides = StridedCopy::row_major(&result.dims);
    (
        StridedCopy::new(
            w,
            &block.dims,
            &StridedCopy::row_major(&block.dims),
            &out_strides,
        ),
        out_strides[d] as usize * w,
    )
}
