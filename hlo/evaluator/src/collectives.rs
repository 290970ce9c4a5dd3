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
    let all = match transport() {
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
        match &instr.shape {
            Shape::Tuple(t) => t
                .get(k)
                .ok_or_else(|| Error::invalid_argument(format!("no result element {k}")))?
                .array_or_err(),
            s => s.array_or_err(),
        }
    };
    let wrap = |parts: Vec<Literal>| -> Value {
        if instr.shape.is_tuple() {
            Value::Tuple(parts.into_iter().map(Value::from).collect())
        } else {
            parts
                .into_iter()
                .next()
                .map(Value::from)
                .unwrap_or(Value::Tuple(Vec::new()))
        }
    };
    match &instr.op {
        Op::AllReduce { to_apply, .. } | Op::AllReduceStart { to_apply, .. } => {
            let parts = (0..operand_count)
                .map(|k| reduce_all(ev, *to_apply, &arrays(k)?))
                .collect::<Result<Vec<_>>>()?;
            Ok(wrap(parts))
        }
        Op::AllGather { dimension, .. } => {
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
            let result = result_part(0)?;
            match source {
                Some(s) => Ok(Value::from(arrays(0)?[s].clone())),
                // A replica that nobody sends to receives zeros.
                None => Ok(Value::from(zeros(result.element_type, &result.dims))),
            }
        }
        Op::CollectiveBroadcast { .. } => {
            // The first member of the group is the root; everyone receives its operands.
            let root = all
                .first()
                .ok_or_else(|| Error::internal("empty replica group"))?;
            if instr.shape.is_tuple() {
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
    }
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
