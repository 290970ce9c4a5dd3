//! Collectives across the devices (replicas and partitions) of a launch,
//! executing in parallel threads.
//!
//! # Rendezvous
//! Each replica of a multi-replica launch runs on its own thread with its own
//! executor and stream, and all share one `run_id`. When a replica reaches a
//! collective it deposits its operands in a process-wide meeting table under the
//! key (run id, module, instruction, occurrence, group) — the occurrence being
//! how many times this replica has run that instruction in this execution, so
//! iterations of a loop meet separately — and waits until every member of its
//! replica group has deposited. Each member then computes its own result from
//! all deposits, in group order (so every member combines in the same order and
//! gets bit-identical sums), and the last to leave removes the meeting. A member
//! that never arrives turns into a `DeadlineExceeded` error naming the
//! instruction and the missing replicas, not a hang.
//!
//! # Participants
//! A device is a (replica, partition) pair; meetings are keyed by global ids
//! (`replica * partition_count + partition`), and who meets whom is XLA's group
//! mode for the op ([`hlo_ir::analysis::collective_groups`], shared with every
//! backend): cross-replica, cross-partition, cross-replica-and-partition or
//! flattened ids.

use super::value::Value;
use super::Evaluator;
use crate::ops::slicing::slice;
use crate::ops::zeros;
use hlo_ir::analysis::collective_groups::{participants, Devices};
use hlo_ir::analysis::combiner::binary_combiner;
use hlo_ir::{ArrayShape, Error, Literal, Result, Shape};
use hlo_ir::{CompId, HloInstruction, Op, SliceDim};
use hlo_semantics as semantics;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Carries collectives between processes, when a launch spans several (one
/// device per MPI rank, say): an all-gather of byte blobs among a group,
/// which every collective here is built on (each member computes its result
/// from all members' contributions).
///
/// While a transport is installed, every collective of every platform in this
/// process goes through it instead of the in-process meeting table, and device
/// ids are the transport's (global device id = process rank for one device
/// per process).
pub trait Transport: Send + Sync {
    /// Every member's `data`, in group order; `group` lists global device ids
    /// and `position` is this device's place in it; `what` names the
    /// collective for errors.
    fn exchange(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        data: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>>;

    /// An all-to-all: chunk `j` of `data` (bytes `bounds[j]..bounds[j + 1]`,
    /// `bounds` holding one more offset than the group has members) goes to
    /// member `j`; returns what every member sent this one, in group order.
    /// Every member splits its data at the same bounds.
    ///
    /// The default is built on [`Transport::exchange`] (so it moves every
    /// member's whole data to everyone); a transport that overrides it with a
    /// real all-to-all moves only each chunk to its member, which is what makes
    /// the two-phase all-reduce ([`Transport::two_phase_from`]) pay.
    fn exchange_chunks(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        data: Vec<u8>,
        bounds: &[usize],
    ) -> Result<Vec<Vec<u8>>> {
        let (start, end) = chunk_bounds(what, bounds, position, data.len())?;
        let all = self.exchange(what, group, position, data)?;
        all.into_iter()
            .map(|d| {
                d.get(start..end).map(<[u8]>::to_vec).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "%{what}: a member sent {} bytes, fewer than this device's {}",
                        d.len(),
                        bounds.last().copied().unwrap_or(0)
                    ))
                })
            })
            .collect()
    }

    /// From how many bytes of contribution an all-reduce among `members`
    /// devices should go in two phases (an all-to-all of chunks through
    /// [`Transport::exchange_chunks`], each member reducing its chunk in rank
    /// order, then an all-gather of the reduced chunks) rather than one
    /// all-gather of whole buffers and a reduction of everything by everyone.
    /// Both give bit-identical results; two phases move about `2(n-1)/n` of the
    /// data instead of `n-1` times it and share the arithmetic, but cost two
    /// round trips. `None` (the default): always one round.
    fn two_phase_from(&self, members: usize) -> Option<usize> {
        let _ = members;
        None
    }

    /// An all-reduce of one array straight between this device's buffers:
    /// `dst` (as long as `src`, not overlapping it) receives every member's
    /// `src` folded in group order with `reduce(acc, x)` (`acc =
    /// to_apply(acc, x)` elementwise, over whole elements of `width`
    /// bytes), bit for bit the fold of whole contributions in rank order
    /// that the in-process meeting does. A transport that implements it
    /// moves the bytes between the devices' own memory, without the
    /// intermediate buffers of [`Transport::exchange`].
    ///
    /// `Ok(false)` (the default): no such path here (or not for this
    /// size); nothing was exchanged and the caller goes through
    /// [`Transport::exchange`] or [`all_reduce_two_phase`] instead.
    #[allow(clippy::too_many_arguments)]
    fn all_reduce_into(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        src: &[u8],
        dst: &mut [u8],
        width: usize,
        reduce: &mut FoldChunk<'_>,
    ) -> Result<bool> {
        let _ = (what, group, position, src, dst, width, reduce);
        Ok(false)
    }
}

/// Bytes `bounds[j]..bounds[j + 1]` of a buffer of `len` bytes, checked.
fn chunk_bounds(what: &str, bounds: &[usize], j: usize, len: usize) -> Result<(usize, usize)> {
    match (bounds.get(j), bounds.get(j + 1)) {
        (Some(&s), Some(&e)) if s <= e && e <= len && bounds.last() == Some(&len) => Ok((s, e)),
        _ => Err(Error::invalid_argument(format!(
            "%{what}: chunk {j} of bounds {bounds:?} does not split {len} bytes"
        ))),
    }
}

/// Element range of chunk `j` of `count` elements split among `n` members
/// (as even as can be; the same on every member).
fn chunk_elements(count: usize, n: usize, j: usize) -> (usize, usize) {
    (count * j / n, count * (j + 1) / n)
}

/// `read(leaf, bytes, out)` of [`all_reduce_two_phase`]: appends this
/// member's bytes of a leaf to `out`.
pub type ReadLeaf<'a> = dyn FnMut(usize, std::ops::Range<usize>, &mut Vec<u8>) + 'a;
/// `reduce(leaf, acc, x)` of [`all_reduce_two_phase`]: `acc = to_apply(acc, x)`
/// elementwise over a chunk of a leaf.
pub type ReduceChunk<'a> = dyn FnMut(usize, &mut [u8], &[u8]) -> Result<()> + 'a;
/// `reduce(acc, x)` of [`Transport::all_reduce_into`]: `acc = to_apply(acc,
/// x)` elementwise over whole elements.
pub type FoldChunk<'a> = dyn FnMut(&mut [u8], &[u8]) -> Result<()> + 'a;
/// `write(leaf, offset, bytes)` of [`all_reduce_two_phase`]: stores reduced
/// bytes of a leaf at a byte offset.
pub type WriteLeaf<'a> = dyn FnMut(usize, usize, &[u8]) + 'a;

/// An all-reduce through `transport` in two phases, bit-identical to reducing
/// every member's whole contribution in rank order: each leaf (`leaves`:
/// element count and width in bytes) is split into one chunk per member; the
/// all-to-all hands member `j` every member's chunk `j`; it folds them with
/// `reduce(leaf, acc, x)` (`acc = to_apply(acc, x)` elementwise) in rank
/// order `0..n`, exactly the in-process order, and element by element, so the
/// chunking cannot change a result; an all-gather of the reduced chunks then
/// gives everyone the whole. `read(leaf, bytes, out)` appends this member's
/// bytes of a leaf to `out`; `write(leaf, offset, bytes)` stores reduced bytes
/// of a leaf at a byte offset.
#[allow(clippy::too_many_arguments)]
pub fn all_reduce_two_phase(
    transport: &dyn Transport,
    what: &str,
    group: &[usize],
    position: usize,
    leaves: &[(usize, usize)],
    read: &mut ReadLeaf<'_>,
    reduce: &mut ReduceChunk<'_>,
    write: &mut WriteLeaf<'_>,
) -> Result<()> {
    let n = group.len();
    let total: usize = leaves.iter().map(|(c, w)| c * w).sum();
    // Chunk j: part j of every leaf, leaf after leaf.
    let mut data = Vec::with_capacity(total);
    let mut bounds = Vec::with_capacity(n + 1);
    for j in 0..n {
        bounds.push(data.len());
        for (leaf, &(count, width)) in leaves.iter().enumerate() {
            let (s, e) = chunk_elements(count, n, j);
            read(leaf, s * width..e * width, &mut data);
        }
    }
    bounds.push(data.len());
    if data.len() != total {
        return Err(Error::internal(format!(
            "%{what}: read {} bytes of a {total}-byte contribution",
            data.len()
        )));
    }
    let received = transport.exchange_chunks(what, group, position, data, &bounds)?;
    let mine = bounds[position + 1] - bounds[position];
    let mut received = received.into_iter();
    let mut acc = received
        .next()
        .ok_or_else(|| Error::internal(format!("%{what}: an empty group")))?;
    for (member, x) in received.enumerate() {
        if x.len() != mine || acc.len() != mine {
            return Err(Error::invalid_argument(format!(
                "%{what}: device {} sent a {}-byte chunk, this device's is {mine}",
                group.get(member + 1).copied().unwrap_or(member + 1),
                x.len()
            )));
        }
        let mut at = 0;
        for (leaf, &(count, width)) in leaves.iter().enumerate() {
            let (s, e) = chunk_elements(count, n, position);
            let len = (e - s) * width;
            if len > 0 {
                reduce(leaf, &mut acc[at..at + len], &x[at..at + len])?;
            }
            at += len;
        }
    }
    let reduced = transport.exchange(what, group, position, acc)?;
    for (j, chunk) in reduced.iter().enumerate() {
        let expected = bounds.get(j + 1).zip(bounds.get(j)).map(|(e, s)| e - s);
        if expected != Some(chunk.len()) {
            return Err(Error::invalid_argument(format!(
                "%{what}: device {} sent a {}-byte reduced chunk, {expected:?} expected",
                group.get(j).copied().unwrap_or(j),
                chunk.len()
            )));
        }
        let mut at = 0;
        for (leaf, &(count, width)) in leaves.iter().enumerate() {
            let (s, e) = chunk_elements(count, n, j);
            let len = (e - s) * width;
            write(leaf, s * width, &chunk[at..at + len]);
            at += len;
        }
    }
    Ok(())
}

fn transport_slot() -> &'static RwLock<Option<Arc<dyn Transport>>> {
    static SLOT: OnceLock<RwLock<Option<Arc<dyn Transport>>>> = OnceLock::new();
    SLOT.get_or_init(|| RwLock::new(None))
}

/// Installs (or, with `None`, removes) the process's collectives transport.
pub fn set_transport(transport: Option<Arc<dyn Transport>>) -> Result<()> {
    *transport_slot().write().map_err(poisoned)? = transport;
    Ok(())
}

/// The installed collectives transport, if any.
pub fn transport() -> Option<Arc<dyn Transport>> {
    transport_slot().read().ok().and_then(|t| t.clone())
}

/// The deposits of every member through `transport`: this device's operands
/// as bytes, each member's read back in the shapes of this device's operands
/// (the members of a collective contribute operands of one shape).
fn exchange_remote(
    transport: &dyn Transport,
    what: &str,
    group: &[usize],
    position: usize,
    mine: Vec<Value>,
) -> Result<Vec<Vec<Value>>> {
    let mut shapes = Vec::with_capacity(mine.len());
    let mut data = Vec::new();
    for v in &mine {
        let array = v.array()?;
        data.extend_from_slice(array.bytes()?);
        shapes.push((array.shape().clone(), array.bytes()?.len()));
    }
    let all = transport.exchange(what, group, position, data)?;
    all.into_iter()
        .enumerate()
        .map(|(member, bytes)| {
            let expected: usize = shapes.iter().map(|(_, n)| n).sum();
            if bytes.len() != expected {
                return Err(Error::invalid_argument(format!(
                    "%{what}: device {} sent {} bytes, this device's operands are {expected}",
                    group.get(member).copied().unwrap_or(member),
                    bytes.len()
                )));
            }
            let mut at = 0;
            shapes
                .iter()
                .map(|(shape, n)| {
                    let lit = Literal::from_bytes(shape.clone(), &bytes[at..at + n])?;
                    at += n;
                    Ok(Value::from(lit))
                })
                .collect()
        })
        .collect()
}

/// How long a replica waits for the others at a collective.
pub const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);

/// Identifies one dynamic execution of a collective instruction.
pub struct CollectiveContext<'a> {
    pub module: &'a str,
    pub instruction: &'a str,
    pub occurrence: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MeetingKey {
    run_id: u64,
    module: String,
    instruction: String,
    occurrence: u64,
    group: Vec<usize>,
}

#[derive(Default)]
struct MeetingState {
    deposits: Vec<Option<Vec<Value>>>,
    departed: usize,
}

#[derive(Default)]
struct Meeting {
    state: Mutex<MeetingState>,
    all_arrived: Condvar,
}

fn meetings() -> &'static Mutex<HashMap<MeetingKey, Arc<Meeting>>> {
    static TABLE: OnceLock<Mutex<HashMap<MeetingKey, Arc<Meeting>>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn poisoned<T>(_: T) -> Error {
    Error::internal("the collective rendezvous table lock was poisoned by a panic")
}

/// Deposits `mine` at position `position` of the meeting `key` and returns every
/// member's deposit, in group order, once all have arrived.
fn exchange(key: MeetingKey, position: usize, mine: Vec<Value>) -> Result<Vec<Vec<Value>>> {
    let size = key.group.len();
    let meeting = {
        let mut table = meetings().lock().map_err(poisoned)?;
        table.entry(key.clone()).or_default().clone()
    };
    let mut state = meeting.state.lock().map_err(poisoned)?;
    if state.deposits.is_empty() {
        state.deposits = vec![None; size];
    }
    if state.deposits[position].is_some() {
        return Err(Error::internal(format!(
            "device {} arrived twice at %{}",
            key.group[position], key.instruction
        )));
    }
    state.deposits[position] = Some(mine);
    meeting.all_arrived.notify_all();
    let deadline = Instant::now() + RENDEZVOUS_TIMEOUT;
    while state.deposits.iter().any(Option::is_none) {
        let now = Instant::now();
        if now >= deadline {
            let missing: Vec<usize> = state
                .deposits
                .iter()
                .zip(&key.group)
                .filter(|(d, _)| d.is_none())
                .map(|(_, &r)| r)
                .collect();
            // Withdraw so a late arrival does not see a half-finished meeting.
            state.deposits[position] = None;
            return Err(Error::new(
                hlo_ir::Code::DeadlineExceeded,
                format!(
                    "collective %{} (run {}, occurrence {}): devices {missing:?} did not arrive within {}s",
                    key.instruction,
                    key.run_id,
                    key.occurrence,
                    RENDEZVOUS_TIMEOUT.as_secs()
                ),
            ));
        }
        state = meeting
            .all_arrived
            .wait_timeout(state, deadline - now)
            .map_err(poisoned)?
            .0;
    }
    let all: Vec<Vec<Value>> = state
        .deposits
        .iter()
        .map(|d| d.clone().unwrap_or_default())
        .collect();
    state.departed += 1;
    if state.departed == size {
        drop(state);
        meetings().lock().map_err(poisoned)?.remove(&key);
    }
    Ok(all)
}

/// Runs one collective instruction for this replica.
pub fn run(
    ev: &mut Evaluator<'_>,
    at: &CollectiveContext<'_>,
    instr: &HloInstruction,
    operands: Vec<Value>,
) -> Result<Value> {
    let ctx = ev.context().clone();
    let me = Devices {
        replica: ctx.replica,
        partition: ctx.partition,
        replica_count: ctx.replica_count.max(1),
        partition_count: ctx.partition_count.max(1),
    };
    let (members, position) =
        participants(&instr.op, me).map_err(|e| e.context(format!("%{}", instr.name)))?;
    let key = MeetingKey {
        run_id: ctx.run_id,
        module: at.module.to_string(),
        instruction: at.instruction.to_string(),
        occurrence: at.occurrence,
        group: members.clone(),
    };
    // The asynchronous starts (but all-reduce-start, whose value is its
    // result) return `(operands, results, context...)`: the collective's
    // own result is element 1, and the sync form's code below computes it.
    let start = matches!(
        instr.op,
        Op::AllGatherStart { .. } | Op::CollectivePermuteStart { .. }
    );
    if let Some(form) = unsupported_form(instr) {
        return Err(Error::unimplemented(form));
    }
    let out_shape: &Shape = if start {
        instr.shape.tuple_shapes().get(1).ok_or_else(|| {
            Error::invalid_argument(format!(
                "%{}: a {} returns a tuple of at least (operands, results), not {}",
                instr.name,
                instr.opcode(),
                instr.shape
            ))
        })?
    } else {
        &instr.shape
    };
    let transport = transport();
    if let (Some(t), Op::AllReduce { to_apply, .. } | Op::AllReduceStart { to_apply, .. }) =
        (&transport, &instr.op)
    {
        if let Some(result) = all_reduce_remote(
            ev,
            t.as_ref(),
            instr,
            *to_apply,
            &members,
            position,
            &operands,
        )? {
            return Ok(result);
        }
    }
    let all = match transport {
        Some(t) => exchange_remote(t.as_ref(), &instr.name, &members, position, operands)?,
        None => exchange(key, position, operands)?,
    };
    let n = members.len();
    let arrays = |k: usize| -> Result<Vec<&Literal>> {
        all.iter()
            .map(|deposit| {
                deposit
                    .get(k)
                    .ok_or_else(|| Error::invalid_argument(format!("operand {k} is missing")))?
                    .array()
            })
            .collect()
    };
    let operand_count = all.get(position).map_or(0, Vec::len);
    let result_part = |k: usize| -> Result<&ArrayShape> {
        match out_shape {
            Shape::Tuple(t) => t
                .get(k)
                .ok_or_else(|| Error::invalid_argument(format!("no result element {k}")))?
                .array_or_err(),
            s => s.array_or_err(),
        }
    };
    let wrap = |parts: Vec<Literal>| -> Value {
        if out_shape.is_tuple() {
            Value::Tuple(parts.into_iter().map(Value::from).collect())
        } else {
            parts
                .into_iter()
                .next()
                .map(Value::from)
                .unwrap_or(Value::Tuple(Vec::new()))
        }
    };
    let result = match &instr.op {
        Op::AllReduce { to_apply, .. } | Op::AllReduceStart { to_apply, .. } => {
            let parts = (0..operand_count)
                .map(|k| reduce_all(ev, *to_apply, &arrays(k)?))
                .collect::<Result<Vec<_>>>()?;
            Ok(wrap(parts))
        }
        Op::AllGather { dimension, .. } | Op::AllGatherStart { dimension, .. } => {
            let parts = (0..operand_count)
                .map(|k| {
                    crate::ops::concatenate::concatenate(&arrays(k)?, *dimension, result_part(k)?)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(wrap(parts))
        }
        Op::ReduceScatter {
            dimension,
            to_apply,
            ..
        } => {
            let parts = (0..operand_count)
                .map(|k| {
                    let reduced = reduce_all(ev, *to_apply, &arrays(k)?)?;
                    chunk(&reduced, *dimension, n, position, result_part(k)?)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(wrap(parts))
        }
        Op::AllToAll {
            split_dimension: Some(d),
            ..
        } => {
            let sources = arrays(0)?;
            let result = result_part(0)?;
            let mut pieces = Vec::with_capacity(n);
            for source in &sources {
                let mut piece_dims = source.dims().to_vec();
                let Some(extent) = piece_dims.get_mut(*d) else {
                    return Err(Error::invalid_argument(format!(
                        "split dimension {d} is out of range for {}",
                        source.shape()
                    )));
                };
                *extent /= n;
                let piece_shape = ArrayShape::new(result.element_type, piece_dims);
                pieces.push(chunk(source, *d, n, position, &piece_shape)?);
            }
            let refs: Vec<&Literal> = pieces.iter().collect();
            Ok(Value::from(crate::ops::concatenate::concatenate(
                &refs, *d, result,
            )?))
        }
        Op::AllToAll {
            split_dimension: None,
            ..
        } => {
            if operand_count != n {
                return Err(Error::invalid_argument(format!(
                    "a tuple all-to-all among {n} replicas needs {n} operands, has {operand_count}"
                )));
            }
            let received =
                all.iter()
                    .map(|deposit| {
                        deposit.get(position).cloned().ok_or_else(|| {
                            Error::invalid_argument("a replica sent too few operands")
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
            Ok(Value::Tuple(received))
        }
        Op::CollectivePermute {
            source_target_pairs,
            ..
        }
        | Op::CollectivePermuteStart {
            source_target_pairs,
            ..
        } => {
            let mut source = None;
            for &(s, t) in source_target_pairs {
                if s >= n || t >= n {
                    return Err(Error::invalid_argument(format!(
                        "source-target pair {{{s},{t}}} names an id outside 0..{n}"
                    )));
                }
                if t == position {
                    if source.is_some() {
                        return Err(Error::invalid_argument(format!(
                            "{t} is the target of two pairs"
                        )));
                    }
                    source = Some(s);
                }
            }
            // One array, or a combined permute's tuple: every operand goes
            // by the same pairs.
            let results = match out_shape {
                Shape::Tuple(t) => t.len(),
                _ => 1,
            };
            if results != operand_count {
                return Err(Error::invalid_argument(format!(
                    "%{}: {operand_count} operands cannot give the {results} results of {out_shape}",
                    instr.name
                )));
            }
            let parts = (0..operand_count)
                .map(|k| {
                    let result = result_part(k)?;
                    let Some(s) = source else {
                        // A device that nobody sends to receives zeros.
                        return Ok(zeros(result.element_type, &result.dims));
                    };
                    // Only the source's deposit is read (`s < n` checked above).
                    let received = all
                        .get(s)
                        .and_then(|deposit| deposit.get(k))
                        .ok_or_else(|| Error::invalid_argument(format!("operand {k} is missing")))?
                        .array()?;
                    let shape = received.shape().array_or_err()?;
                    if shape.element_type != result.element_type || shape.dims != result.dims {
                        return Err(Error::invalid_argument(format!(
                            "%{}: device {} sent {} as operand {k}, result {k} is {result}",
                            instr.name,
                            members.get(s).copied().unwrap_or(s),
                            received.shape()
                        )));
                    }
                    Ok(received.clone())
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(wrap(parts))
        }
        Op::CollectiveBroadcast { .. } => {
            // The first member of the group is the root; everyone receives its operands.
            let root = all
                .first()
                .ok_or_else(|| Error::internal("empty replica group"))?;
            if out_shape.is_tuple() {
                Ok(Value::Tuple(root.clone()))
            } else {
                root.first()
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("collective-broadcast needs an operand"))
            }
        }
        other => Err(Error::internal(format!(
            "{} is not a collective",
            other.opcode()
        ))),
    }?;
    if !start {
        return Ok(result);
    }
    // Element 0 is the operands as they came in (one array, or a tuple of
    // several: this device's own deposit); after the result, any context
    // values (a collective-permute-start's u32[] scalars) are zeros, as
    // nothing here reads them.
    let mine = all
        .get(position)
        .cloned()
        .ok_or_else(|| Error::internal(format!("%{}: no deposit of this device", instr.name)))?;
    let inputs = if matches!(instr.shape.tuple_shapes().first(), Some(Shape::Tuple(_))) {
        Value::Tuple(mine)
    } else {
        mine.into_iter()
            .next()
            .ok_or_else(|| Error::invalid_argument(format!("%{} needs an operand", instr.name)))?
    };
    let mut elements = vec![inputs, result];
    for extra in instr.shape.tuple_shapes().iter().skip(2) {
        let a = extra
            .array_or_err()
            .map_err(|e| e.context(format!("%{}", instr.name)))?;
        elements.push(Value::from(zeros(a.element_type, &a.dims)));
    }
    Ok(Value::Tuple(elements))
}

/// The error text for a form of a collective that no platform here runs
/// (`None` when `instr` is not one): the in-place collective permute
/// (`slice_sizes`, four operands), whose offsets would otherwise be ignored.
/// The Interpreter and the Host share it, so both refuse with the same words.
pub fn unsupported_form(instr: &HloInstruction) -> Option<String> {
    match &instr.op {
        Op::CollectivePermute {
            slice_sizes: Some(_),
            ..
        }
        | Op::CollectivePermuteStart {
            slice_sizes: Some(_),
            ..
        } => Some(format!(
            "%{}: {} in the in-place form (input, output, input and output start \
             indices, slice_sizes) is not implemented",
            instr.name,
            instr.opcode()
        )),
        _ => None,
    }
}

/// An all-reduce across processes in two phases
/// ([`all_reduce_two_phase`]), when the transport finds this contribution
/// big enough for that to pay; `None` leaves it to the one-round exchange.
#[allow(clippy::too_many_arguments)]
fn all_reduce_remote(
    ev: &mut Evaluator<'_>,
    transport: &dyn Transport,
    instr: &HloInstruction,
    to_apply: CompId,
    members: &[usize],
    position: usize,
    operands: &[Value],
) -> Result<Option<Value>> {
    let arrays = operands
        .iter()
        .map(Value::array)
        .collect::<Result<Vec<&Literal>>>()?;
    let mut leaves = Vec::with_capacity(arrays.len());
    for a in &arrays {
        let (count, bytes) = (a.element_count(), a.bytes()?.len());
        // Chunks split at element boundaries; a packed sub-byte layout
        // (or an empty array) stays with the one-round exchange.
        if count == 0 || bytes % count != 0 {
            return Ok(None);
        }
        leaves.push((count, bytes / count));
    }
    let total: usize = leaves.iter().map(|(c, w)| c * w).sum();
    match transport.two_phase_from(members.len()) {
        Some(from) if members.len() > 1 && total >= from => {}
        _ => return Ok(None),
    }
    let mut outputs: Vec<Vec<u8>> = leaves.iter().map(|(c, w)| vec![0; c * w]).collect();
    let mut failure = None;
    all_reduce_two_phase(
        transport,
        &instr.name,
        members,
        position,
        &leaves,
        &mut |leaf, range, out| {
            if let Some(b) = arrays.get(leaf).and_then(|a| a.bytes().ok()) {
                out.extend_from_slice(&b[range]);
            }
        },
        &mut |leaf, acc, x| {
            let (_, width) = leaves[leaf];
            let ty = arrays[leaf].shape().array_or_err()?.element_type;
            let shape = Shape::array(ty, vec![acc.len() / width]);
            let a = Literal::from_bytes(shape.clone(), acc)?;
            let b = Literal::from_bytes(shape, x)?;
            let c = combine(ev, to_apply, &a, &b)?;
            acc.copy_from_slice(c.bytes()?);
            Ok(())
        },
        &mut |leaf, offset, bytes| match outputs.get_mut(leaf) {
            Some(o) if offset + bytes.len() <= o.len() => {
                o[offset..offset + bytes.len()].copy_from_slice(bytes)
            }
            _ => failure = Some(leaf),
        },
    )?;
    if let Some(leaf) = failure {
        return Err(Error::internal(format!(
            "%{}: a reduced chunk does not fit leaf {leaf}",
            instr.name
        )));
    }
    let parts = arrays
        .iter()
        .zip(outputs)
        .map(|(a, bytes)| Literal::from_bytes(a.shape().clone(), &bytes))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(if instr.shape.is_tuple() {
        Value::Tuple(parts.into_iter().map(Value::from).collect())
    } else {
        match parts.into_iter().next() {
            Some(p) => Value::from(p),
            None => Value::Tuple(Vec::new()),
        }
    }))
}

/// Block `position` of `n` equal blocks of `value` along `dimension`.
fn chunk(
    value: &Literal,
    dimension: usize,
    n: usize,
    position: usize,
    result: &ArrayShape,
) -> Result<Literal> {
    let dims = value.dims();
    let Some(&extent) = dims.get(dimension) else {
        return Err(Error::invalid_argument(format!(
            "dimension {dimension} is out of range for {}",
            value.shape()
        )));
    };
    if extent % n != 0 {
        return Err(Error::invalid_argument(format!(
            "dimension {dimension} of {} does not split into {n} equal blocks",
            value.shape()
        )));
    }
    let block = extent / n;
    let spec: Vec<SliceDim> = dims
        .iter()
        .enumerate()
        .map(|(d, &size)| {
            if d == dimension {
                SliceDim {
                    start: position * block,
                    limit: (position + 1) * block,
                    stride: 1,
                }
            } else {
                SliceDim {
                    start: 0,
                    limit: size,
                    stride: 1,
                }
            }
        })
        .collect();
    slice(value, &spec, result)
}

/// Folds the deposits with the reduction computation, in group order.
fn reduce_all(ev: &mut Evaluator<'_>, to_apply: CompId, values: &[&Literal]) -> Result<Literal> {
    let (first, rest) = values
        .split_first()
        .ok_or_else(|| Error::internal("no deposits to reduce"))?;
    let mut acc = (*first).clone();
    for v in rest {
        if v.shape() != acc.shape() {
            return Err(Error::invalid_argument(format!(
                "replicas contributed different shapes: {} and {}",
                acc.shape(),
                v.shape()
            )));
        }
        acc = combine(ev, to_apply, &acc, v)?;
    }
    Ok(acc)
}

/// `to_apply(a, b)` elementwise. A reducer that is one binary op of its two
/// parameters runs as that op on whole arrays; any other reducer is called per element.
pub fn combine(
    ev: &mut Evaluator<'_>,
    to_apply: CompId,
    a: &Literal,
    b: &Literal,
) -> Result<Literal> {
    let comp = ev.module().computation(to_apply);
    if let Some(combiner) = binary_combiner(comp).filter(|c| c.in_order()) {
        return semantics::binary(combiner.op, a, b, a.shape());
    }
    let mut out = a.clone();
    for i in 0..a.element_count() {
        let args = vec![
            Value::from(Literal::from_scalar(a.get(i)?)),
            Value::from(Literal::from_scalar(b.get(i)?)),
        ];
        let v = ev.eval_computation(to_apply, args)?;
        out.set(i, super::scalar_of(&v, "the reduction's result")?)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory transport among threads: the default `exchange_chunks`
    /// (built on `exchange`) and two phases from any size.
    struct Threads {
        rounds: Mutex<HashMap<u64, Vec<Option<Vec<u8>>>>>,
        counters: Mutex<Vec<u64>>,
        arrived: Condvar,
    }

    impl Transport for Threads {
        fn exchange(
            &self,
            _what: &str,
            group: &[usize],
            position: usize,
            data: Vec<u8>,
        ) -> Result<Vec<Vec<u8>>> {
            let round = {
                let mut c = self.counters.lock().map_err(poisoned)?;
                c[position] += 1;
                c[position]
            };
            let mut rounds = self.rounds.lock().map_err(poisoned)?;
            rounds
                .entry(round)
                .or_insert_with(|| vec![None; group.len()])[position] = Some(data);
            self.arrived.notify_all();
            loop {
                let slots = &rounds[&round];
                if slots.iter().all(Option::is_some) {
                    return Ok(slots.iter().flatten().cloned().collect());
                }
                rounds = self.arrived.wait(rounds).map_err(poisoned)?;
            }
        }

        fn two_phase_from(&self, _members: usize) -> Option<usize> {
            Some(0)
        }
    }

    /// Two phases give every member, bit for bit, the rank-order fold of
    /// the whole contributions (float sums, whose order matters), for groups
    /// of 2 to 5 and leaf sizes that do not divide evenly (or give empty chunks).
    #[test]
    fn two_phase_all_reduce_is_the_rank_order_fold() {
        for n in 2..=5usize {
            for counts in [vec![1usize, 3], vec![7], vec![1000, 2, 33]] {
                let contribution = |member: usize, leaf: usize| -> Vec<f32> {
                    (0..counts[leaf])
                        .map(|i| {
                            ((member * 7919 + leaf * 104_729 + i * 31) % 997) as f32 * 1.1e-3 + 1e4
                        })
                        .collect()
                };
                let expected: Vec<Vec<f32>> = (0..counts.len())
                    .map(|leaf| {
                        let mut acc = contribution(0, leaf);
                        for m in 1..n {
                            for (a, x) in acc.iter_mut().zip(contribution(m, leaf)) {
                                *a += x;
                            }
                        }
                        acc
                    })
                    .collect();
                let transport = Arc::new(Threads {
                    rounds: Mutex::new(HashMap::new()),
                    counters: Mutex::new(vec![0; n]),
                    arrived: Condvar::new(),
                });
                let group: Vec<usize> = (0..n).collect();
                let results: Vec<Vec<Vec<f32>>> = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..n)
                        .map(|member| {
                            let (transport, group, counts) = (&transport, &group, &counts);
                            s.spawn(move || {
                                let mine: Vec<Vec<u8>> = (0..counts.len())
                                    .map(|l| {
                                        contribution(member, l)
                                            .iter()
                                            .flat_map(|x| x.to_le_bytes())
                                            .collect()
                                    })
                                    .collect();
                                let leaves: Vec<(usize, usize)> =
                                    counts.iter().map(|&c| (c, 4)).collect();
                                let mut out: Vec<Vec<u8>> =
                                    counts.iter().map(|&c| vec![0; c * 4]).collect();
                                all_reduce_two_phase(
                                    transport.as_ref(),
                                    "ar",
                                    group,
                                    member,
                                    &leaves,
                                    &mut |l, r, d| d.extend_from_slice(&mine[l][r]),
                                    &mut |_, acc, x| {
                                        for (a, b) in acc.chunks_mut(4).zip(x.chunks(4)) {
                                            let s = f32::from_le_bytes(a.try_into().unwrap())
                                                + f32::from_le_bytes(b.try_into().unwrap());
                                            a.copy_from_slice(&s.to_le_bytes());
                                        }
                                        Ok(())
                                    },
                                    &mut |l, at, b| out[l][at..at + b.len()].copy_from_slice(b),
                                )
                                .unwrap();
                                out.iter()
                                    .map(|o| {
                                        o.chunks(4)
                                            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                                            .collect()
                                    })
                                    .collect()
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                for (member, got) in results.iter().enumerate() {
                    for (leaf, (g, e)) in got.iter().zip(&expected).enumerate() {
                        let same = g.iter().zip(e).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(
                            same && g.len() == e.len(),
                            "n={n} member {member} leaf {leaf}"
                        );
                    }
                }
            }
        }
    }
}
