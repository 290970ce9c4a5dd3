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

enum Request {
    Exchange {
        group: Vec<usize>,
        position: usize,
        data: Vec<u8>,
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
        }
    }
    drop(universe);
}

/// The channel to the MPI thread, as a collectives transport.
struct MpiTransport {
    rank: usize,
    size: usize,
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
            .send(Request::Exchange {
                group: group.to_vec(),
                position,
                data,
                reply,
            })
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())
    }
}
