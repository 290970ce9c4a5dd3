//! Collectives between processes over MPI (feature `mpi`): `mpirun -np P
//! hlorun run prog.hlo ... --collectives mpi`. With one device per rank
//! [`MpiTransport`] below carries the collectives; with several (`P` dividing
//! the program's devices), [`DeviceThreads`] meets the local devices in
//! memory and exchanges with the other ranks over [`MpiLink`] (see
//! `crate::multiprocess`).
//!
//! # Who calls MPI
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: any thread may call it,
//! one at a time. One thread, started here, initialises MPI, finalises it
//! and carries out an abort; the collectives themselves are made by the
//! executing device's thread (the Host's thunks, the Interpreter's
//! evaluator) under one lock, [`Shared::state`], which also holds the
//! receive buffers kept between calls. (An earlier design handed every
//! collective to the MPI thread over a channel and waited for the reply: two
//! thread hand-offs per collective, most of a small all-reduce's time.)
//! An MPI library that cannot give `MPI_THREAD_SERIALIZED` is an error at
//! start. [`MpiTransport`] is installed as the process's
//! `evaluator::collectives::Transport`.
//!
//! # Exchanges
//! Every collective is an all-gather of bytes among its group (the platforms
//! do the arithmetic after it, as they do in one process). Among the group's
//! ranks each member sends its bytes to every other member (non-blocking
//! sends, then blocking receives from each member in group order) on one tag.
//! MPI keeps messages between two ranks on one tag in order, and every device
//! of an SPMD program runs its collectives in the same order, and every
//! exchange completes all its sends and receives before it returns, so a
//! message is always matched with the collective it was sent for, with no
//! per-collective tags or communicators (whose creation would itself be a
//! collective that every rank must join).
//!
//! A large all-reduce (from [`TWO_PHASE_FROM`] bytes) goes in two phases
//! (`evaluator::collectives::all_reduce_two_phase`): an all-to-all of chunks
//! ([`Transport::exchange_chunks`]: each member sends chunk `j` to member `j`
//! only, into receives posted beforehand at the known size), the rank-order
//! reduction of one chunk on the calling thread, then an all-gather of the
//! reduced chunks. That moves about `2(n-1)/n` of the data instead of `n-1`
//! times it, with the same bits; below the threshold the second round trip
//! costs more than it saves (but for two members with an array of at most
//! two pieces, [`PIECE_BYTES`], which go in two phases of one
//! `MPI_Sendrecv` each). Both rounds use the same tag: MPI delivers one
//! sender's messages in order, so a member's chunk can never be taken for
//! its reduced chunk.
//!
//! An all-reduce of one array ([`Transport::all_reduce_into`], which the
//! Host uses) runs either shape straight between the device's operand and
//! result buffers: chunks are sent from the operand, the other members'
//! contributions land in receive buffers kept between calls, the rank-order
//! fold writes the result buffer, and the reduced chunks of the other
//! members are received into the result buffer where they belong. No buffer
//! is allocated or packed per call.
//!
//! # Failures
//! A rank whose run fails calls [`MpiWorld::abort`] (`MPI_Abort`) after
//! printing its error: `mpirun` then ends every rank, so no rank is left
//! waiting in a receive for a peer that will never send.

use crate::multiprocess::{DeviceThreads, Placement, ProcessLink};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use mpi::ffi;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use platform_api::evaluator::collectives::{FoldChunk, Transport};
use platform_api::{Error, Result};
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// The tag of every exchange (see the module docs on ordering).
const EXCHANGE_TAG: i32 = 42;

/// From how many bytes an all-reduce goes in two phases (all-to-all, reduce,
/// all-gather) rather than one all-gather: measured with
/// `bench/osu_allreduce.sh` (docs/distributed.md), where the second round
/// trip stops costing more than the extra data and arithmetic it saves.
const TWO_PHASE_FROM: usize = 64 << 10;

/// [`TWO_PHASE_FROM`], or `HLORUN_MPI_TWO_PHASE_BYTES` (a byte count, or
/// `never`) to measure the crossover on another machine. Every rank must see
/// the same value (mpirun passes the environment to all), since the two
/// paths exchange different messages.
fn two_phase_from() -> usize {
    match std::env::var("HLORUN_MPI_TWO_PHASE_BYTES") {
        Ok(v) if v == "never" => usize::MAX,
        Ok(v) => v.parse().unwrap_or(TWO_PHASE_FROM),
        Err(_) => TWO_PHASE_FROM,
    }
}

/// A one-round all-reduce of an array of at most two pieces sends it in
/// pieces of at most this many bytes. Open MPI's shared-memory transport
/// sends a message over its eager limit (4 KiB including its header) by a
/// rendezvous and a single-copy read, which cost more than two eager pieces
/// at 4 KiB; at 16 KiB (five pieces) the one single-copy message was the
/// faster (measured with `osu_allreduce`, docs/distributed.md).
const PIECE_BYTES: usize = 4000;

/// [`PIECE_BYTES`], or `HLORUN_MPI_PIECE_BYTES` (a byte count, or `never`
/// for whole arrays). Every rank must see the same value (mpirun passes the
/// environment to all): a receive posted for a smaller piece than the one
/// sent is an MPI error.
fn piece_bytes() -> usize {
    match std::env::var("HLORUN_MPI_PIECE_BYTES") {
        Ok(v) if v == "never" => usize::MAX,
        Ok(v) => v.parse().ok().filter(|&b| b > 0).unwrap_or(PIECE_BYTES),
        Err(_) => PIECE_BYTES,
    }
}

/// What the MPI thread is asked to do besides waiting for the end.
enum Request {
    Abort(i32),
}

/// What every MPI call is made under.
struct State {
    /// False once MPI is being finalised: no call may start after that.
    open: bool,
    /// Receive buffers of [`MpiTransport::all_reduce_into`], kept between
    /// calls so that a repeated all-reduce touches no fresh memory.
    scratch: Vec<u8>,
}

/// Shared by the world and its transports.
struct Shared {
    rank: usize,
    size: usize,
    state: Mutex<State>,
}

impl Shared {
    /// The lock every MPI call is made under (`MPI_THREAD_SERIALIZED`); an
    /// error once MPI is finalised.
    fn lock(&self, what: &str) -> Result<MutexGuard<'_, State>> {
        // A panic while the lock was held leaves no broken invariant here (at
        // worst an exchange half done, after which the job aborts anyway).
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.open {
            return Err(Error::internal(format!(
                "rank {}: collective %{what}: MPI has been finalised",
                self.rank
            )));
        }
        Ok(state)
    }
}

/// The MPI thread and this process's place in the world.
pub struct MpiWorld {
    shared: Arc<Shared>,
    requests: Option<Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl MpiWorld {
    /// Starts the MPI thread (which initialises MPI with
    /// `MPI_THREAD_SERIALIZED`) and learns the rank and world size.
    pub fn start() -> Result<MpiWorld> {
        let (requests, inbox) = unbounded::<Request>();
        let (ready, started) = bounded::<std::result::Result<(usize, usize), String>>(1);
        let thread = std::thread::Builder::new()
            .name("mpi".into())
            .spawn(move || mpi_thread(inbox, ready))
            .map_err(|e| {
                Error::resource_exhausted(format!("could not start the MPI thread: {e}"))
            })?;
        let started = started
            .recv()
            .unwrap_or_else(|_| Err("the MPI thread ended".into()));
        let (rank, size) = match started {
            Ok(place) => place,
            Err(e) => {
                drop(requests);
                let _ = thread.join();
                return Err(Error::internal(e));
            }
        };
        Ok(MpiWorld {
            shared: Arc::new(Shared {
                rank,
                size,
                state: Mutex::new(State {
                    open: true,
                    scratch: Vec::new(),
                }),
            }),
            requests: Some(requests),
            thread: Some(thread),
        })
    }

    pub fn rank(&self) -> usize {
        self.shared.rank
    }

    pub fn size(&self) -> usize {
        self.shared.size
    }

    /// How a launch of `devices` devices is spread over this world: an
    /// error naming the `-np` values that would do when the world size does
    /// not divide it.
    pub fn placement(&self, devices: usize) -> Result<Placement> {
        Placement::new(devices, self.shared.size, self.shared.rank)
            .map_err(|e| e.context(format!("rank {}", self.shared.rank)))
    }

    /// The transport for a launch spread as `placement` says: with one
    /// device per process, [`MpiTransport`] (rank = device); with several,
    /// [`DeviceThreads`] over this world's [`MpiLink`].
    pub fn transport_for(&self, placement: Placement) -> Arc<dyn Transport> {
        if placement.per_process() == 1 {
            self.transport()
        } else {
            Arc::new(DeviceThreads::new(placement, self.link()))
        }
    }

    /// The world as a link between ranks.
    pub fn link(&self) -> MpiLink {
        MpiLink {
            shared: self.shared.clone(),
        }
    }

    /// The transport for one device per process (rank = device) that sends
    /// collectives through this world.
    pub fn transport(&self) -> Arc<dyn Transport> {
        Arc::new(MpiTransport {
            shared: self.shared.clone(),
            two_phase_from: two_phase_from(),
            piece_bytes: piece_bytes(),
        })
    }

    /// Ends the whole job (`MPI_Abort` with `code`): every rank stops.
    pub fn abort(&self, code: i32) -> ! {
        if let Some(r) = &self.requests {
            let _ = r.send(Request::Abort(code));
        }
        // The MPI thread does not return from the abort; if it is gone, the
        // process ends on its own.
        std::thread::sleep(std::time::Duration::from_secs(30));
        std::process::exit(code)
    }
}

impl Drop for MpiWorld {
    /// Closes the world to further calls (waiting for one in progress), then
    /// the channel, so the MPI thread finalises MPI and ends.
    fn drop(&mut self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .open = false;
        drop(self.requests.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn mpi_thread(
    inbox: Receiver<Request>,
    ready: Sender<std::result::Result<(usize, usize), String>>,
) {
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Serialized) else {
        let _ = ready.send(Err(
            "MPI could not be initialised (is this under mpirun?)".into()
        ));
        return;
    };
    let world = universe.world();
    if !matches!(threading, Threading::Serialized | Threading::Multiple) {
        let _ = ready.send(Err(format!(
            "this MPI library gives {threading:?} threading; hlorun needs MPI_THREAD_SERIALIZED \
             (collectives are called from the executing thread)"
        )));
        return;
    }
    let _ = ready.send(Ok((world.rank() as usize, world.size() as usize)));
    // Until an abort, or every sender is gone (the world dropped).
    if let Ok(Request::Abort(code)) = inbox.recv() {
        world.abort(code)
    }
    drop(universe);
}

/// The collectives transport: MPI calls from the calling thread, under the
/// world's lock.
struct MpiTransport {
    shared: Arc<Shared>,
    /// Contribution size from which an all-reduce goes in two phases.
    two_phase_from: usize,
    /// Piece size of a small one-round [`Transport::all_reduce_into`].
    piece_bytes: usize,
}

impl Transport for MpiTransport {
    fn exchange(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        data: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>> {
        self.check(what, group, position)?;
        let peers: Vec<usize> = group
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != position)
            .map(|(_, &peer)| peer)
            .collect();
        // The others' data in group order; this member's goes in at its place.
        let mut all = swap_messages(&self.shared, what, &peers, |_| &data[..])?;
        all.insert(position, data);
        Ok(all)
    }

    fn exchange_chunks(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        data: Vec<u8>,
        bounds: &[usize],
    ) -> Result<Vec<Vec<u8>>> {
        self.check(what, group, position)?;
        let ordered = bounds.len() == group.len() + 1
            && bounds.windows(2).all(|w| w[0] <= w[1])
            && bounds.last() == Some(&data.len());
        if !ordered {
            return Err(Error::invalid_argument(format!(
                "rank {}: collective %{what}: bounds {bounds:?} do not split {} bytes among {} members",
                self.shared.rank,
                data.len(),
                group.len()
            )));
        }
        let _state = self.shared.lock(what)?;
        let world = SimpleCommunicator::world();
        // Every member's chunk `position` has this size (the members split
        // contributions of one shape at the same bounds); the receives are
        // posted first, into buffers of that size, so no message waits for a
        // probe or lands in a temporary.
        let mine = bounds[position]..bounds[position + 1];
        let mut received: Vec<Vec<u8>> = group
            .iter()
            .enumerate()
            .map(|(j, _)| {
                if j == position {
                    data[mine.clone()].to_vec()
                } else {
                    vec![0; mine.len()]
                }
            })
            .collect();
        mpi::request::scope(|scope| {
            let receives: Vec<_> = received
                .iter_mut()
                .zip(group)
                .enumerate()
                .filter(|&(j, _)| j != position)
                .map(|(_, (buffer, &peer))| {
                    world
                        .process_at_rank(peer as i32)
                        .immediate_receive_into_with_tag(scope, &mut buffer[..], EXCHANGE_TAG)
                })
                .collect();
            // Starting with the next member, so that the members do not all
            // send to member 0 first.
            let n = group.len();
            let sends: Vec<_> = (1..n)
                .map(|k| (position + k) % n)
                .map(|j| {
                    world
                        .process_at_rank(group[j] as i32)
                        .immediate_send_with_tag(
                            scope,
                            &data[bounds[j]..bounds[j + 1]],
                            EXCHANGE_TAG,
                        )
                })
                .collect();
            for r in receives {
                r.wait();
            }
            for s in sends {
                s.wait();
            }
        });
        Ok(received)
    }

    fn two_phase_from(&self, members: usize) -> Option<usize> {
        let _ = members;
        Some(self.two_phase_from)
    }

    /// One round below [`MpiTransport::two_phase_from`] (everyone's whole
    /// array to everyone, each folding all in rank order), two phases from
    /// it (chunk `j` of every member to member `j`, which folds its chunk in
    /// rank order straight into the result, then every reduced chunk to
    /// everyone, received into the result where it belongs): the same
    /// messages and the same bits as [`Transport::exchange`] and
    /// `all_reduce_two_phase`, without their per-call buffers. Two members
    /// take the two phases also below it when the array is at most two
    /// pieces, each phase one `MPI_Sendrecv` with the peer.
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
        let n = group.len();
        let len = src.len();
        // MPI counts are C ints.
        if dst.len() != len || width == 0 || !len.is_multiple_of(width) || len > c_int::MAX as usize
        {
            return Ok(false);
        }
        self.check(what, group, position)?;
        let peers = || (1..n).map(|k| (position + k) % n);
        let mut state = self.shared.lock(what)?;
        if n == 1 {
            dst.copy_from_slice(src);
            return Ok(true);
        }
        // Two members whose halves are each one piece go in two phases: two
        // `MPI_Sendrecv`s of half the array, where one round would send the
        // whole array in two pieces each way and fold all of it on both.
        let pair_halves = n == 2 && len <= self.piece_bytes.saturating_mul(2);
        if len < self.two_phase_from && !pair_halves {
            // One round: the other members' whole arrays, in scratch slots
            // by group position (this member's slot unused).
            grow(&mut state.scratch, n * len);
            let scratch = state.scratch.as_mut_ptr();
            // Room for two pieces each way per peer.
            let mut requests = Vec::with_capacity(4 * (n - 1));
            // SAFETY: slot `j` of the scratch holds `len` bytes; `src` is
            // `len` bytes; both outlive the requests, completed below.
            // In pieces of at most `piece_bytes` if that makes at most two.
            let piece = if len <= self.piece_bytes.saturating_mul(2) {
                self.piece_bytes
            } else {
                len.max(1)
            };
            let pieces = || {
                (0..len)
                    .step_by(piece)
                    .map(move |at| (at, piece.min(len - at)))
            };
            let posted = unsafe {
                peers()
                    .try_for_each(|j| {
                        pieces().try_for_each(|(at, size)| {
                            irecv(&mut requests, scratch.add(j * len + at), size, group[j])
                        })
                    })
                    .and_then(|()| {
                        peers().try_for_each(|j| {
                            pieces().try_for_each(|(at, size)| {
                                isend(&mut requests, src.as_ptr().add(at), size, group[j])
                            })
                        })
                    })
            };
            wait_all(&mut requests)?;
            posted?;
            let contribution = |j: usize| -> &[u8] {
                if j == position {
                    src
                } else {
                    &state.scratch[j * len..(j + 1) * len]
                }
            };
            dst.copy_from_slice(contribution(0));
            for j in 1..n {
                reduce(dst, contribution(j))?;
            }
            return Ok(true);
        }
        // Two phases; chunk `j` is elements `count * j / n ..` of every member.
        let count = len / width;
        let chunk = |j: usize| (count * j / n * width, count * (j + 1) / n * width);
        let (lo, hi) = chunk(position);
        let mine = hi - lo;
        grow(&mut state.scratch, n * mine);
        let scratch = state.scratch.as_mut_ptr();
        let mut requests = Vec::new();
        if n == 2 {
            // One call for the pair: the peer's chunk out, this one's in.
            let other = 1 - position;
            let (s, e) = chunk(other);
            // SAFETY: slot `other` of the scratch holds `mine` bytes; chunk
            // `other` of `src` lies inside it; the call completes both.
            unsafe {
                sendrecv(
                    src.as_ptr().add(s),
                    e - s,
                    scratch.add(other * mine),
                    mine,
                    group[other],
                )?
            };
        } else {
            requests.reserve(2 * (n - 1));
            // SAFETY: slot `j` of the scratch holds `mine` bytes; chunk `j`
            // of `src` lies inside it; both outlive the requests, completed
            // below.
            let posted = unsafe {
                peers()
                    .try_for_each(|j| irecv(&mut requests, scratch.add(j * mine), mine, group[j]))
                    .and_then(|()| {
                        peers().try_for_each(|j| {
                            let (s, e) = chunk(j);
                            isend(&mut requests, src.as_ptr().add(s), e - s, group[j])
                        })
                    })
            };
            wait_all(&mut requests)?;
            posted?;
        }
        {
            let acc = &mut dst[lo..hi];
            let contribution = |j: usize| -> &[u8] {
                if j == position {
                    &src[lo..hi]
                } else {
                    &state.scratch[j * mine..(j + 1) * mine]
                }
            };
            acc.copy_from_slice(contribution(0));
            if mine > 0 {
                for j in 1..n {
                    reduce(acc, contribution(j))?;
                }
            }
        }
        // Every member's reduced chunk into its place in `dst`; this one's
        // goes out from its place (a part no receive writes).
        let out = dst.as_mut_ptr();
        if n == 2 {
            let other = 1 - position;
            let (s, e) = chunk(other);
            // SAFETY: chunks `position` and `other` of `dst` are disjoint and
            // inside it; the call completes both.
            return unsafe { sendrecv(out.add(lo), mine, out.add(s), e - s, group[other]) }
                .map(|()| true);
        }
        // SAFETY: chunks of `dst` are disjoint and inside it; `dst` outlives
        // the requests, completed below.
        let posted = unsafe {
            peers()
                .try_for_each(|j| {
                    let (s, e) = chunk(j);
                    irecv(&mut requests, out.add(s), e - s, group[j])
                })
                .and_then(|()| {
                    peers().try_for_each(|j| isend(&mut requests, out.add(lo), mine, group[j]))
                })
        };
        wait_all(&mut requests)?;
        posted?;
        Ok(true)
    }
}

/// Sends `outgoing(i)` to rank `peers[i]` for every `i` (non-blocking
/// sends) and receives one message from each peer, in the order of `peers`,
/// all on the exchange tag and under the world's lock. Every peer makes the
/// matching call at the same point of its sequence of exchanges, so each
/// message is the one sent for this exchange (see the module docs).
fn swap_messages<'a>(
    shared: &Shared,
    what: &str,
    peers: &[usize],
    outgoing: impl Fn(usize) -> &'a [u8],
) -> Result<Vec<Vec<u8>>> {
    let _state = shared.lock(what)?;
    let world = SimpleCommunicator::world();
    let mut received = Vec::with_capacity(peers.len());
    mpi::request::scope(|scope| {
        let sends: Vec<_> = peers
            .iter()
            .enumerate()
            .map(|(i, &peer)| {
                world.process_at_rank(peer as i32).immediate_send_with_tag(
                    scope,
                    outgoing(i),
                    EXCHANGE_TAG,
                )
            })
            .collect();
        for &peer in peers {
            received.push(
                world
                    .process_at_rank(peer as i32)
                    .receive_vec_with_tag::<u8>(EXCHANGE_TAG)
                    .0,
            );
        }
        for s in sends {
            s.wait();
        }
    });
    Ok(received)
}

/// The world as a [`ProcessLink`] between ranks, for a process that runs
/// several devices ([`DeviceThreads`]) and for gathering results.
pub struct MpiLink {
    shared: Arc<Shared>,
}

impl ProcessLink for MpiLink {
    fn swap(&self, what: &str, peers: &[usize], outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let size = self.shared.size;
        let fits = outgoing.len() == peers.len()
            && peers.windows(2).all(|w| w[0] < w[1])
            && peers.iter().all(|&q| q < size && q != self.shared.rank)
            && outgoing.iter().all(|m| m.len() <= c_int::MAX as usize);
        if !fits {
            return Err(Error::internal(format!(
                "rank {}: %{what}: {} message(s) for ranks {peers:?} of a world of {size}",
                self.shared.rank,
                outgoing.len()
            )));
        }
        swap_messages(&self.shared, what, peers, |i| &outgoing[i][..])
    }
}

/// Makes `buffer` at least `len` bytes long, keeping what it has (the bytes
/// are written by MPI before they are read; they are zeroed only when the
/// buffer first grows).
fn grow(buffer: &mut Vec<u8>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
}

fn mpi_result(rc: c_int, what: &str) -> Result<()> {
    if rc == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(Error::internal(format!(
            "{what} failed with MPI error {rc}"
        )))
    }
}

/// Posts a receive of `len` bytes from `peer` into `buf`, on the exchange tag.
///
/// # Safety
/// `buf` holds `len` writable bytes that nothing else touches until the
/// request completes ([`wait_all`]).
unsafe fn irecv(
    requests: &mut Vec<ffi::MPI_Request>,
    buf: *mut u8,
    len: usize,
    peer: usize,
) -> Result<()> {
    let mut request = MaybeUninit::<ffi::MPI_Request>::uninit();
    let rc = ffi::MPI_Irecv(
        buf.cast::<c_void>(),
        len as c_int,
        ffi::RSMPI_UINT8_T,
        peer as c_int,
        EXCHANGE_TAG,
        ffi::RSMPI_COMM_WORLD,
        request.as_mut_ptr(),
    );
    mpi_result(rc, "MPI_Irecv")?;
    requests.push(request.assume_init());
    Ok(())
}

/// Posts a send of `len` bytes at `buf` to `peer`, on the exchange tag.
///
/// # Safety
/// `buf` holds `len` readable bytes that nothing writes until the request
/// completes ([`wait_all`]).
unsafe fn isend(
    requests: &mut Vec<ffi::MPI_Request>,
    buf: *const u8,
    len: usize,
    peer: usize,
) -> Result<()> {
    let mut request = MaybeUninit::<ffi::MPI_Request>::uninit();
    let rc = ffi::MPI_Isend(
        buf.cast::<c_void>(),
        len as c_int,
        ffi::RSMPI_UINT8_T,
        peer as c_int,
        EXCHANGE_TAG,
        ffi::RSMPI_COMM_WORLD,
        request.as_mut_ptr(),
    );
    mpi_result(rc, "MPI_Isend")?;
    requests.push(request.assume_init());
    Ok(())
}

/// Sends `send_len` bytes at `send` to `peer` and receives `recv_len` bytes
/// from it into `recv`, on the exchange tag (`MPI_Sendrecv`): a two-member
/// exchange in one call, with no requests to keep.
///
/// # Safety
/// `send` holds `send_len` readable bytes and `recv` `recv_len` writable
/// ones, not overlapping.
unsafe fn sendrecv(
    send: *const u8,
    send_len: usize,
    recv: *mut u8,
    recv_len: usize,
    peer: usize,
) -> Result<()> {
    // Both directions: bytes, with the peer, on the exchange tag.
    let (bytes, peer, tag) = (ffi::RSMPI_UINT8_T, peer as c_int, EXCHANGE_TAG);
    let (out, out_len) = (send.cast::<c_void>(), send_len as c_int);
    let (into, into_len) = (recv.cast::<c_void>(), recv_len as c_int);
    let (comm, status) = (ffi::RSMPI_COMM_WORLD, ffi::RSMPI_STATUS_IGNORE);
    let rc = ffi::MPI_Sendrecv(
        out, out_len, bytes, peer, tag, into, into_len, bytes, peer, tag, comm, status,
    );
    mpi_result(rc, "MPI_Sendrecv")
}

/// Completes every posted request and empties the list.
fn wait_all(requests: &mut Vec<ffi::MPI_Request>) -> Result<()> {
    if requests.is_empty() {
        return Ok(());
    }
    // SAFETY: the requests were posted by `irecv`/`isend` and not yet
    // completed; statuses are not wanted.
    let rc = unsafe {
        ffi::MPI_Waitall(
            requests.len() as c_int,
            requests.as_mut_ptr(),
            ffi::RSMPI_STATUSES_IGNORE,
        )
    };
    requests.clear();
    mpi_result(rc, "MPI_Waitall")
}

impl MpiTransport {
    /// The group names only ranks of this world, and this rank where it says.
    fn check(&self, what: &str, group: &[usize], position: usize) -> Result<()> {
        let (rank, size) = (self.shared.rank, self.shared.size);
        if let Some(bad) = group.iter().find(|&&g| g >= size) {
            return Err(Error::invalid_argument(format!(
                "rank {rank}: collective %{what} names device {bad}, but the MPI world has {size} rank(s)",
            )));
        }
        if group.get(position) != Some(&rank) {
            return Err(Error::internal(format!(
                "rank {rank}: collective %{what}: this rank is not at position {position} of {group:?}",
            )));
        }
        Ok(())
    }
}
