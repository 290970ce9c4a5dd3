//! Collectives between processes over MPI (feature `mpi`): one device per
//! rank, `mpirun -np N hlorun run prog.hlo ... --collectives mpi`.
//!
//! # One thread owns MPI
//! Open MPI does not let a communicator be used from several threads unless
//! it was initialised with `MPI_THREAD_MULTIPLE`, which is slow where it is
//! available at all. So one thread, started here, initialises MPI, makes every
//! MPI call and finalises it; the executing device's threads (the Host's
//! thunks, the Interpreter's evaluator) send it requests over a crossbeam
//! channel and wait on a reply channel. [`MpiTransport`] is that channel,
//! installed as the process's `evaluator::collectives::Transport`.
//!
//! # Exchanges
//! Every collective is an all-gather of bytes among its group (the platforms
//! do the arithmetic after it, as they do in one process). Among the group's
//! ranks each member sends its bytes to every other member (non-blocking
//! sends, then blocking receives from each member in group order) on one tag.
//! MPI keeps messages between two ranks on one tag in order, and every device
//! of an SPMD program runs its collectives in the same order, so a message is
//! always matched with the collective it was sent for, with no per-collective
//! tags or communicators (whose creation would itself be a collective that
//! every rank must join).
//!
//! A large all-reduce (from [`TWO_PHASE_FROM`] bytes) goes in two phases
//! (`evaluator::collectives::all_reduce_two_phase`): an all-to-all of chunks
//! ([`Transport::exchange_chunks`]: each member sends chunk `j` to member `j`
//! only, into receives posted beforehand at the known size), the rank-order
//! reduction of one chunk on the calling thread, then an all-gather of the
//! reduced chunks. That moves about `2(n-1)/n` of the data instead of `n-1`
//! times it, with the same bits; below the threshold the second round trip
//! costs more than it saves. Both rounds use the same tag: MPI delivers one
//! sender's messages in order, so a member's chunk can never be taken for
//! its reduced chunk.
//!
//! # Failures
//! A rank whose run fails calls [`MpiWorld::abort`] (`MPI_Abort`) after
//! printing its error: `mpirun` then ends every rank, so no rank is left
//! waiting in a receive for a peer that will never send.

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use mpi::traits::*;
use platform_api::evaluator::collectives::Transport;
use platform_api::{Error, Result};
use std::sync::Arc;
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

enum Request {
    Exchange {
        group: Vec<usize>,
        position: usize,
        data: Vec<u8>,
        reply: Sender<Vec<Vec<u8>>>,
    },
    /// An all-to-all: bytes `bounds[j]..bounds[j + 1]` of `data` to member `j`.
    Chunks {
        group: Vec<usize>,
        position: usize,
        data: Vec<u8>,
        bounds: Vec<usize>,
        reply: Sender<Vec<Vec<u8>>>,
    },
    Abort(i32),
}

/// The MPI thread and this process's place in the world.
pub struct MpiWorld {
    rank: usize,
    size: usize,
    requests: Option<Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl MpiWorld {
    /// Starts the MPI thread (which initialises MPI) and learns the rank and
    /// world size.
    pub fn start() -> Result<MpiWorld> {
        let (requests, inbox) = unbounded::<Request>();
        let (ready, started) = bounded::<Option<(usize, usize)>>(1);
        let thread = std::thread::Builder::new()
            .name("mpi".into())
            .spawn(move || mpi_thread(inbox, ready))
            .map_err(|e| {
                Error::resource_exhausted(format!("could not start the MPI thread: {e}"))
            })?;
        let (rank, size) = started.recv().ok().flatten().ok_or_else(|| {
            Error::internal("MPI could not be initialised (is this under mpirun?)")
        })?;
        Ok(MpiWorld {
            rank,
            size,
            requests: Some(requests),
            thread: Some(thread),
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The transport that sends collectives through this world.
    pub fn transport(&self) -> Arc<dyn Transport> {
        Arc::new(MpiTransport {
            rank: self.rank,
            size: self.size,
            two_phase_from: two_phase_from(),
            requests: self.requests.clone(),
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
    /// Closes the channel, so the MPI thread finalises MPI and ends.
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn mpi_thread(inbox: Receiver<Request>, ready: Sender<Option<(usize, usize)>>) {
    let Some(universe) = mpi::initialize() else {
        let _ = ready.send(None);
        return;
    };
    let world = universe.world();
    let _ = ready.send(Some((world.rank() as usize, world.size() as usize)));
    // Until every sender is gone (the world dropped and all transports with it).
    for request in inbox {
        match request {
            Request::Abort(code) => world.abort(code),
            Request::Exchange {
                group,
                position,
                data,
                reply,
            } => {
                let mut received: Vec<Vec<u8>> = vec![Vec::new(); group.len()];
                mpi::request::scope(|scope| {
                    let sends: Vec<_> = group
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != position)
                        .map(|(_, &peer)| {
                            world.process_at_rank(peer as i32).immediate_send_with_tag(
                                scope,
                                &data[..],
                                EXCHANGE_TAG,
                            )
                        })
                        .collect();
                    for (j, &peer) in group.iter().enumerate() {
                        if j != position {
                            received[j] = world
                                .process_at_rank(peer as i32)
                                .receive_vec_with_tag::<u8>(EXCHANGE_TAG)
                                .0;
                        }
                    }
                    for s in sends {
                        s.wait();
                    }
                });
                received[position] = data;
                let _ = reply.send(received);
            }
            Request::Chunks {
                group,
                position,
                data,
                bounds,
                reply,
            } => {
                // Every member's chunk `position` has this size (the members
                // split contributions of one shape at the same bounds); the
                // receives are posted first, into buffers of that size, so
                // no message waits for a probe or lands in a temporary.
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
                        .zip(&group)
                        .enumerate()
                        .filter(|&(j, _)| j != position)
                        .map(|(_, (buffer, &peer))| {
                            world
                                .process_at_rank(peer as i32)
                                .immediate_receive_into_with_tag(
                                    scope,
                                    &mut buffer[..],
                                    EXCHANGE_TAG,
                                )
                        })
                        .collect();
                    // Starting with the next member, so that the members do
                    // not all send to member 0 first.
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
                let _ = reply.send(received);
            }
        }
    }
    drop(universe);
}

/// The channel to the MPI thread, as a collectives transport.
struct MpiTransport {
    rank: usize,
    size: usize,
    /// Contribution size from which an all-reduce goes in two phases.
    two_phase_from: usize,
    requests: Option<Sender<Request>>,
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
        self.ask(what, |reply| Request::Exchange {
            group: group.to_vec(),
            position,
            data,
            reply,
        })
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
                self.rank,
                data.len(),
                group.len()
            )));
        }
        self.ask(what, |reply| Request::Chunks {
            group: group.to_vec(),
            position,
            data,
            bounds: bounds.to_vec(),
            reply,
        })
    }

    fn two_phase_from(&self, members: usize) -> Option<usize> {
        let _ = members;
        Some(self.two_phase_from)
    }
}

impl MpiTransport {
    /// The group names only ranks of this world, and this rank where it says.
    fn check(&self, what: &str, group: &[usize], position: usize) -> Result<()> {
        if let Some(bad) = group.iter().find(|&&g| g >= self.size) {
            return Err(Error::invalid_argument(format!(
                "rank {}: collective %{what} names device {bad}, but the MPI world has {} rank(s)",
                self.rank, self.size
            )));
        }
        if group.get(position) != Some(&self.rank) {
            return Err(Error::internal(format!(
                "rank {}: collective %{what}: this rank is not at position {position} of {group:?}",
                self.rank
            )));
        }
        Ok(())
    }

    /// Sends the MPI thread a request and waits for its answer.
    fn ask(
        &self,
        what: &str,
        request: impl FnOnce(Sender<Vec<Vec<u8>>>) -> Request,
    ) -> Result<Vec<Vec<u8>>> {
        let (reply, answer) = bounded(1);
        let gone = || {
            Error::internal(format!(
                "rank {}: collective %{what}: the MPI thread has stopped",
                self.rank
            ))
        };
        self.requests
            .as_ref()
            .ok_or_else(gone)?
            .send(request(reply))
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())
    }
}
