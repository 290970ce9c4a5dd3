//! Several devices per process, the processes joined by a message-passing
//! link (MPI): `mpirun -np P hlorun run prog.hlo ... --collectives mpi` for a
//! program of `D = replica_count x num_partitions` devices, `P` dividing `D`.
//!
//! # Placement
//! Process `p` runs the `K = D / P` global devices `p*K .. p*K+K-1`, each on
//! its own thread (as in a one-process run), so `mpirun -H a:2,b:2` puts
//! devices `0 .. 2K` on `a`. [`Placement`] says which process owns a device.
//!
//! # Collectives
//! [`DeviceThreads`] is the process's `evaluator::collectives::Transport`.
//! Every device of the process calls it once per collective it runs, and
//! all devices run the same program, so the `k`-th call of each local device
//! is the same collective instruction: the calls meet in *rounds*, round `k`
//! holding every local device's `k`-th call. The last device to arrive
//! settles the round for all of them:
//!
//! 1. the round's groups (each local device names its own; the groups of one
//!    collective are disjoint) are listed in one order, the same in every
//!    process (sorted by their device ids);
//! 2. a group whose members are all local is complete already;
//! 3. for the others, one message goes to each other process that holds a
//!    member of any of them: for each such group in that order, the
//!    contributions of this process's members in group order, each framed
//!    with its device id and length. The peer sends the mirror image; a
//!    receiver knows which frames to expect from the groups alone and checks
//!    every device id;
//! 4. every local device takes its group's contributions in group order, the
//!    same bytes in the same order as in a one-process run, so the arithmetic
//!    after it (done by the platforms) gives the same bits.
//!
//! Only the settling thread talks to the link, and a process's rounds follow
//! one another (a device leaves round `k` before it can enter `k + 1`), so a
//! process makes its link calls one at a time, in round order, with the same
//! peers in the same order as every other process: the messages between two
//! processes are matched in the order they were sent, with no tags or
//! communicators per collective. (Meetings per group would let two groups'
//! exchanges with one peer start in different orders in the two processes.)
//!
//! The price of the shared rounds: every local device must reach the same
//! collectives in the same order (true of an SPMD program without
//! device-dependent branches around collectives). Devices of one process that
//! reach different collectives in one round fail with an error naming both;
//! a device that never arrives makes the others fail after
//! [`RENDEZVOUS_TIMEOUT`] with `DeadlineExceeded`, naming it.

use platform_api::evaluator::collectives::{Transport, RENDEZVOUS_TIMEOUT};
use platform_api::{Code, Error, Result};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Which process runs which of a launch's devices: process `p` of
/// `processes` runs devices `p * per_process .. (p + 1) * per_process`.
/// Made by [`Placement::new`] only, so `per_process` is never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    process: usize,
    processes: usize,
    per_process: usize,
}

impl Placement {
    /// `devices` spread evenly over `processes`, this being `process`; an
    /// error naming the world sizes that would do when `processes` does not
    /// divide `devices`.
    pub fn new(devices: usize, processes: usize, process: usize) -> Result<Placement> {
        if devices == 0 || processes == 0 || !devices.is_multiple_of(processes) {
            let divisors: Vec<String> = (1..devices)
                .filter(|d| devices.is_multiple_of(*d))
                .map(|d| d.to_string())
                .collect();
            let fewer = if divisors.is_empty() {
                String::new()
            } else {
                format!(
                    ", or -np {} for several devices per process",
                    divisors.join(" or -np ")
                )
            };
            return Err(Error::invalid_argument(format!(
                "the program runs on {devices} device(s), which {processes} MPI process(es) \
                 cannot share evenly: run it with mpirun -np {devices} (one device per \
                 process){fewer}"
            )));
        }
        if process >= processes {
            return Err(Error::internal(format!(
                "process {process} of a world of {processes}"
            )));
        }
        Ok(Placement {
            process,
            processes,
            per_process: devices / processes,
        })
    }

    /// This process.
    pub fn process(&self) -> usize {
        self.process
    }

    /// How many processes share the launch.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// How many devices each process runs.
    pub fn per_process(&self) -> usize {
        self.per_process
    }

    /// Every device of the launch.
    pub fn devices(&self) -> usize {
        self.processes * self.per_process
    }

    /// The process that runs `device`.
    pub fn process_of(&self, device: usize) -> usize {
        device / self.per_process
    }

    /// This process's devices.
    pub fn local(&self) -> std::ops::Range<usize> {
        self.process * self.per_process..(self.process + 1) * self.per_process
    }
}

/// Exchanges one message with each of some other processes.
pub trait ProcessLink: Send + Sync {
    /// Sends `outgoing[i]` to process `peers[i]` and returns what each of
    /// them sent this process, in the same order. `peers` are distinct and
    /// sorted and do not include this process; each of them makes the
    /// matching call (naming this process) at the same point of its own
    /// sequence of calls. `what` names the exchange for errors.
    fn swap(&self, what: &str, peers: &[usize], outgoing: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>>;
}

/// A group's contributions in group order, as one device receives them.
type Contributions = Result<Vec<Vec<u8>>>;

/// One local device's call of a round.
struct Deposit {
    what: String,
    group: Vec<usize>,
    position: usize,
    data: Vec<u8>,
}

#[derive(Default)]
struct Round {
    /// By local device index; taken by the settling device.
    deposits: Vec<Option<Deposit>>,
    arrived: usize,
    /// By local device index, once the round is settled: each device's
    /// group's contributions in group order (or the error for all), until
    /// the device takes it.
    results: Option<Vec<Option<Contributions>>>,
    taken: usize,
}

#[derive(Default)]
struct Rounds {
    /// How many calls each local device has made.
    calls: Vec<u64>,
    /// Rounds not yet left by all their devices, by call number.
    open: HashMap<u64, Round>,
}

/// The collectives transport of a process running several devices, over a
/// [`ProcessLink`] to the other processes (see the module docs).
pub struct DeviceThreads<L> {
    placement: Placement,
    link: L,
    rounds: Mutex<Rounds>,
    settled: Condvar,
    /// How long a device waits for the others to reach a round.
    timeout: Duration,
}

impl<L: ProcessLink> DeviceThreads<L> {
    pub fn new(placement: Placement, link: L) -> DeviceThreads<L> {
        DeviceThreads {
            placement,
            link,
            rounds: Mutex::new(Rounds {
                calls: vec![0; placement.per_process],
                open: HashMap::new(),
            }),
            settled: Condvar::new(),
            timeout: RENDEZVOUS_TIMEOUT,
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Rounds>> {
        self.rounds
            .lock()
            .map_err(|_| Error::internal("the collective rounds' lock was poisoned by a panic"))
    }

    /// The local index of the device at `position` of `group`, checking that
    /// the group names devices of the launch and that one is local.
    fn local_index(&self, what: &str, group: &[usize], position: usize) -> Result<usize> {
        let p = self.placement;
        if let Some(bad) = group.iter().find(|&&g| g >= p.devices()) {
            return Err(Error::invalid_argument(format!(
                "collective %{what} names device {bad}, but the launch has {} device(s)",
                p.devices()
            )));
        }
        match group.get(position) {
            Some(&d) if p.local().contains(&d) => Ok(d - p.local().start),
            other => Err(Error::internal(format!(
                "collective %{what}: position {position} of {group:?} is {other:?}, not a device \
                 of process {} ({:?})",
                p.process,
                p.local()
            ))),
        }
    }

    /// Settles a round from every local device's deposit: per local device,
    /// its group's contributions in group order.
    fn settle(&self, deposits: Vec<Deposit>) -> Result<Vec<Vec<Vec<u8>>>> {
        let p = self.placement;
        let local = p.local();
        let what = deposits
            .first()
            .map(|d| d.what.clone())
            .ok_or_else(|| Error::internal("a round without devices"))?;
        // Each local member of a group must be at this collective, in that
        // group, at its place in it.
        for (i, d) in deposits.iter().enumerate() {
            if d.what != what {
                return Err(Error::failed_precondition(format!(
                    "devices {} and {} of process {} reached different collectives at once \
                     (%{what} and %{}); the devices of a process must run the same \
                     collectives in the same order",
                    local.start,
                    local.start + i,
                    p.process,
                    d.what
                )));
            }
            for (j, &m) in d.group.iter().enumerate() {
                if let Some(other) = local.contains(&m).then(|| &deposits[m - local.start]) {
                    if other.group != d.group || other.position != j {
                        return Err(Error::invalid_argument(format!(
                            "collective %{what}: device {} meets {:?} but device {m} meets {:?} \
                             at position {}",
                            local.start + i,
                            d.group,
                            other.group,
                            other.position
                        )));
                    }
                }
            }
        }
        // The round's groups, in the order every process lists them, and
        // which of them each local device is in.
        let groups: Vec<Vec<usize>> = deposits
            .iter()
            .map(|d| d.group.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let group_of: Vec<usize> = deposits
            .iter()
            .map(|d| groups.binary_search(&d.group).unwrap_or(0))
            .collect();
        let has_member_on = |g: &[usize], q: usize| g.iter().any(|&m| p.process_of(m) == q);
        let peers: Vec<usize> = groups
            .iter()
            .flatten()
            .map(|&m| p.process_of(m))
            .filter(|&q| q != p.process)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let outgoing: Vec<Vec<u8>> = peers
            .iter()
            .map(|&q| {
                let mut message = Vec::new();
                for g in groups.iter().filter(|g| has_member_on(g, q)) {
                    for &m in g.iter().filter(|&&m| local.contains(&m)) {
                        frame(&mut message, m, &deposits[m - local.start].data);
                    }
                }
                message
            })
            .collect();
        let incoming = if peers.is_empty() {
            Vec::new()
        } else {
            self.link.swap(&what, &peers, outgoing)?
        };
        if incoming.len() != peers.len() {
            return Err(Error::internal(format!(
                "collective %{what}: {} message(s) from {} process(es)",
                incoming.len(),
                peers.len()
            )));
        }
        // Every group's contributions in group order: the local ones, then
        // each peer's.
        let mut contributions: Vec<Vec<Option<Vec<u8>>>> =
            groups.iter().map(|g| vec![None; g.len()]).collect();
        for (d, &g) in deposits.into_iter().zip(&group_of) {
            contributions[g][d.position] = Some(d.data);
        }
        for (&q, message) in peers.iter().zip(&incoming) {
            let mut reader = Frames {
                bytes: message,
                at: 0,
            };
            for (g, slots) in groups.iter().zip(contributions.iter_mut()) {
                for (&m, slot) in g.iter().zip(slots.iter_mut()) {
                    if p.process_of(m) == q {
                        *slot = Some(reader.next(&what, q, m)?.to_vec());
                    }
                }
            }
            if reader.at != message.len() {
                return Err(Error::invalid_argument(format!(
                    "collective %{what}: process {q} sent {} bytes more than its devices' \
                     contributions",
                    message.len() - reader.at
                )));
            }
        }
        let mut complete: Vec<Option<Vec<Vec<u8>>>> = groups
            .iter()
            .zip(contributions)
            .map(|(g, slots)| {
                slots
                    .into_iter()
                    .zip(g)
                    .map(|(s, m)| {
                        s.ok_or_else(|| {
                            Error::internal(format!("collective %{what}: no contribution of {m}"))
                        })
                    })
                    .collect::<Result<_>>()
                    .map(Some)
            })
            .collect::<Result<_>>()?;
        // A group's last local member takes its contributions; the others
        // get copies.
        let mut left = vec![0usize; groups.len()];
        for &g in &group_of {
            left[g] += 1;
        }
        group_of
            .iter()
            .map(|&g| {
                left[g] -= 1;
                let all = if left[g] == 0 {
                    complete[g].take()
                } else {
                    complete[g].clone()
                };
                all.ok_or_else(|| {
                    Error::internal(format!("collective %{what}: a group taken twice"))
                })
            })
            .collect()
    }
}

/// Appends `device`'s contribution to a message: its id and length (u64,
/// little-endian), then its bytes.
fn frame(message: &mut Vec<u8>, device: usize, data: &[u8]) {
    message.extend_from_slice(&(device as u64).to_le_bytes());
    message.extend_from_slice(&(data.len() as u64).to_le_bytes());
    message.extend_from_slice(data);
}

/// Reads the frames of one process's message, in order.
struct Frames<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Frames<'a> {
    /// The next frame, which must be `device`'s contribution.
    fn next(&mut self, what: &str, process: usize, device: usize) -> Result<&'a [u8]> {
        let short = || {
            Error::invalid_argument(format!(
                "collective %{what}: process {process}'s message ends before device {device}'s \
                 contribution"
            ))
        };
        let word = |at: usize| -> Result<u64> {
            let b = self.bytes.get(at..at + 8).ok_or_else(short)?;
            Ok(u64::from_le_bytes(b.try_into().map_err(|_| short())?))
        };
        let (id, len) = (word(self.at)?, word(self.at + 8)?);
        if id != device as u64 {
            return Err(Error::invalid_argument(format!(
                "collective %{what}: process {process} sent device {id}'s contribution where \
                 device {device}'s was due (the processes disagree on the groups)"
            )));
        }
        let start = self.at + 16;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(short)?;
        self.at = end;
        Ok(&self.bytes[start..end])
    }
}

impl<L: ProcessLink> Transport for DeviceThreads<L> {
    fn exchange(
        &self,
        what: &str,
        group: &[usize],
        position: usize,
        data: Vec<u8>,
    ) -> Result<Vec<Vec<u8>>> {
        let i = self.local_index(what, group, position)?;
        let k = self.placement.per_process;
        let mut rounds = self.lock()?;
        let call = rounds.calls[i];
        rounds.calls[i] += 1;
        let round = rounds.open.entry(call).or_default();
        if round.deposits.is_empty() {
            round.deposits.resize_with(k, || None);
        }
        round.deposits[i] = Some(Deposit {
            what: what.to_string(),
            group: group.to_vec(),
            position,
            data,
        });
        round.arrived += 1;
        if round.arrived == k {
            // The last to arrive settles the round for everyone, outside the
            // lock (the link may wait for other processes).
            let deposits: Vec<Deposit> = round.deposits.iter_mut().flat_map(Option::take).collect();
            drop(rounds);
            let settled = self.settle(deposits);
            let mut rounds = self.lock()?;
            let round = rounds
                .open
                .get_mut(&call)
                .ok_or_else(|| Error::internal("a settled round went missing"))?;
            round.results = Some(match settled {
                Ok(all) => all.into_iter().map(|r| Some(Ok(r))).collect(),
                Err(e) => vec![Some(Err(e)); k],
            });
            self.settled.notify_all();
            return take(&mut rounds, call, i, k);
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let round = rounds
                .open
                .get(&call)
                .ok_or_else(|| Error::internal("an open round went missing"))?;
            if round.results.is_some() {
                return take(&mut rounds, call, i, k);
            }
            let now = Instant::now();
            // Once everyone has arrived the round is being settled, which
            // waits on other processes only: they end the job if they fail.
            if round.arrived < k && now >= deadline {
                let first = self.placement.local().start;
                let missing: Vec<usize> = round
                    .deposits
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.is_none())
                    .map(|(j, _)| first + j)
                    .collect();
                return Err(Error::new(
                    Code::DeadlineExceeded,
                    format!(
                        "collective %{what}: devices {missing:?} of this process did not reach \
                         their collective number {call} within {:?}",
                        self.timeout
                    ),
                ));
            }
            let wait = if round.arrived < k {
                deadline.saturating_duration_since(now)
            } else {
                self.timeout
            };
            rounds = self
                .settled
                .wait_timeout(rounds, wait)
                .map_err(|_| Error::internal("the collective rounds' lock was poisoned"))?
                .0;
        }
    }
}

/// Takes local device `i`'s result of round `call` (of `k` devices); the
/// last to take it closes the round.
fn take(rounds: &mut Rounds, call: u64, i: usize, k: usize) -> Result<Vec<Vec<u8>>> {
    let round = rounds
        .open
        .get_mut(&call)
        .ok_or_else(|| Error::internal("a settled round went missing"))?;
    let result = round
        .results
        .as_mut()
        .and_then(|r| r.get_mut(i))
        .and_then(Option::take)
        .ok_or_else(|| Error::internal("a device took its round's result twice"))?;
    round.taken += 1;
    if round.taken == k {
        rounds.open.remove(&call);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::Arc;

    /// Processes simulated in memory: a queue per (sender, receiver) pair,
    /// kept in order as MPI keeps one tag's messages between two ranks.
    /// Messages not yet received, by (sender, receiver).
    type Queues = HashMap<(usize, usize), VecDeque<Vec<u8>>>;

    #[derive(Default)]
    struct Mailboxes {
        queues: Mutex<Queues>,
        posted: Condvar,
        swaps: Mutex<Vec<(usize, Vec<usize>)>>,
    }

    struct MemoryLink {
        boxes: Arc<Mailboxes>,
        me: usize,
    }

    impl ProcessLink for MemoryLink {
        fn swap(
            &self,
            _what: &str,
            peers: &[usize],
            outgoing: Vec<Vec<u8>>,
        ) -> Result<Vec<Vec<u8>>> {
            self.boxes
                .swaps
                .lock()
                .unwrap()
                .push((self.me, peers.to_vec()));
            let mut queues = self.boxes.queues.lock().unwrap();
            for (&q, m) in peers.iter().zip(outgoing) {
                queues.entry((self.me, q)).or_default().push_back(m);
            }
            self.boxes.posted.notify_all();
            let mut received = Vec::new();
            for &q in peers {
                loop {
                    if let Some(m) = queues.get_mut(&(q, self.me)).and_then(VecDeque::pop_front) {
                        received.push(m);
                        break;
                    }
                    queues = self.boxes.posted.wait(queues).unwrap();
                }
            }
            Ok(received)
        }
    }

    /// The launch of the rounds below.
    const DEVICES: usize = 8;

    /// The group of `device` in round `round`: everyone, pairs inside and
    /// across processes, singletons, groups listed out of id order, and
    /// (round 5, on 4 processes of two devices) groups that send a process's
    /// two devices to two different processes.
    fn group_of(round: usize, device: usize) -> Vec<usize> {
        let groups: &[&[usize]] = match round % 7 {
            0 => &[&[0, 1, 2, 3, 4, 5, 6, 7]],
            1 => &[&[0, 1], &[2, 3], &[4, 5], &[6, 7]],
            2 => &[&[0, 4], &[1, 5], &[2, 6], &[3, 7]],
            3 => &[&[7, 6, 5, 4, 3, 2, 1, 0]],
            4 => &[&[0], &[1], &[2], &[3], &[4], &[5], &[6], &[7]],
            5 => &[&[2, 0], &[4, 1], &[3, 6], &[7, 5]],
            _ => &[&[1, 2, 3], &[0], &[7, 6, 5, 4]],
        };
        groups
            .iter()
            .find(|g| g.contains(&device))
            .map(|g| g.to_vec())
            .unwrap_or_default()
    }

    /// What `device` contributes in `round`: its own bytes, of a length
    /// that differs between members.
    fn contribution(round: usize, device: usize) -> Vec<u8> {
        [device as u8, round as u8, 0xa5].repeat((device + round) % 3 + 1)
    }

    /// Runs `rounds` rounds on [`DEVICES`] devices spread over `processes` processes,
    /// each device on its own thread, and returns the link's calls.
    fn run_rounds(processes: usize, rounds: usize) -> Vec<(usize, Vec<usize>)> {
        let boxes = Arc::new(Mailboxes::default());
        let transports: Vec<Arc<DeviceThreads<MemoryLink>>> = (0..processes)
            .map(|me| {
                Arc::new(DeviceThreads::new(
                    Placement::new(DEVICES, processes, me).unwrap(),
                    MemoryLink {
                        boxes: boxes.clone(),
                        me,
                    },
                ))
            })
            .collect();
        std::thread::scope(|s| {
            for device in 0..DEVICES {
                let t = transports[device / (DEVICES / processes)].clone();
                s.spawn(move || {
                    for round in 0..rounds {
                        let group = group_of(round, device);
                        let position = group.iter().position(|&m| m == device).unwrap();
                        let got = t
                            .exchange("c", &group, position, contribution(round, device))
                            .unwrap();
                        let expected: Vec<Vec<u8>> =
                            group.iter().map(|&m| contribution(round, m)).collect();
                        assert_eq!(got, expected, "device {device}, round {round}");
                    }
                });
            }
        });
        for t in &transports {
            assert!(
                t.rounds.lock().unwrap().open.is_empty(),
                "a round left open"
            );
        }
        let calls = boxes.swaps.lock().unwrap().clone();
        calls
    }

    /// Every device gets its group's contributions in group order, whether
    /// the group is local, spans processes, or several groups share a
    /// message; a process exchanges once per round with each process it
    /// shares a group with, and not at all when every group is local.
    #[test]
    fn every_device_gets_its_group_in_group_order() {
        for processes in [1, 2, 4, 8] {
            let calls = run_rounds(processes, 14);
            for me in 0..processes {
                let mine: Vec<&Vec<usize>> = calls
                    .iter()
                    .filter(|(p, _)| *p == me)
                    .map(|(_, peers)| peers)
                    .collect();
                // The rounds that need another process, and with which.
                let expected: Vec<Vec<usize>> = (0..14)
                    .filter_map(|round| {
                        let k = DEVICES / processes;
                        let peers: BTreeSet<usize> = (me * k..(me + 1) * k)
                            .flat_map(|d| group_of(round, d))
                            .map(|m| m / k)
                            .filter(|&q| q != me)
                            .collect();
                        (!peers.is_empty()).then(|| peers.into_iter().collect())
                    })
                    .collect();
                let mine: Vec<Vec<usize>> = mine.into_iter().cloned().collect();
                assert_eq!(mine, expected, "{processes} processes, process {me}");
            }
            if processes == 1 {
                assert!(calls.is_empty());
            }
        }
    }

    /// A link that answers with a fixed message, standing in for process 1
    /// of two, one device each.
    struct Canned(Vec<u8>);

    impl ProcessLink for Canned {
        fn swap(&self, _: &str, peers: &[usize], _: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
            Ok(vec![self.0.clone(); peers.len()])
        }
    }

    /// A peer's message that is not what the groups make due (another
    /// device's frame, a short one, extra bytes) is an error, not a
    /// contribution taken from the wrong device.
    #[test]
    fn a_message_that_does_not_fit_the_groups_is_refused() {
        let placement = Placement::new(2, 2, 0).unwrap();
        let mut right = Vec::new();
        frame(&mut right, 1, &[1, 2, 3]);
        let got = DeviceThreads::new(placement, Canned(right.clone()))
            .exchange("c", &[0, 1], 0, vec![9])
            .unwrap();
        assert_eq!(got, vec![vec![9], vec![1, 2, 3]]);
        let mut other = Vec::new();
        frame(&mut other, 3, &[1, 2, 3]);
        let mut extra = right.clone();
        extra.push(0);
        for (bad, says) in [
            (other, "device 3's contribution where device 1's"),
            (right[..right.len() - 1].to_vec(), "ends before device 1's"),
            (extra, "1 bytes more"),
        ] {
            let err = DeviceThreads::new(placement, Canned(bad))
                .exchange("c", &[0, 1], 0, vec![9])
                .unwrap_err();
            assert!(err.message().contains(says), "{err:?}");
        }
    }

    /// Devices 0 and 1 of one process call with `(what, group)` each; both
    /// must fail with an error that contains `says`.
    fn both_fail(calls: [(&str, &[usize]); 2], says: &str) {
        let t = DeviceThreads::new(Placement::new(2, 1, 0).unwrap(), Canned(Vec::new()));
        std::thread::scope(|s| {
            let t = &t;
            let handles: Vec<_> = calls
                .into_iter()
                .enumerate()
                .map(|(device, (what, group))| {
                    s.spawn(move || {
                        let p = group.iter().position(|&m| m == device).unwrap();
                        t.exchange(what, group, p, vec![device as u8]).unwrap_err()
                    })
                })
                .collect();
            for h in handles {
                let e = h.join().unwrap();
                assert!(e.message().contains(says), "{e:?}");
            }
        });
    }

    /// Two devices of one process at different collectives in one round,
    /// or disagreeing on their group, both fail with an error that says so.
    #[test]
    fn devices_that_disagree_fail_together() {
        both_fail([("a", &[0]), ("b", &[1])], "reached different collectives");
        both_fail([("a", &[0, 1]), ("a", &[1, 0])], "meets");
    }

    /// A device whose process-mate never reaches the collective fails after
    /// the timeout, naming the missing device, instead of waiting forever.
    #[test]
    fn a_device_that_never_arrives_is_named_after_the_timeout() {
        let mut t = DeviceThreads::new(Placement::new(4, 2, 1).unwrap(), Canned(Vec::new()));
        t.timeout = Duration::from_millis(50);
        let err = t.exchange("c", &[2, 3], 0, vec![2]).unwrap_err();
        assert_eq!(err.code(), Code::DeadlineExceeded);
        assert!(
            err.message().contains("devices [3] of this process"),
            "{err:?}"
        );
    }

    /// A world size that does not divide the devices names the ones that do.
    #[test]
    fn placement_spreads_devices_evenly_or_says_how() {
        let p = Placement::new(8, 4, 3).unwrap();
        assert_eq!((p.per_process, p.local(), p.process_of(5)), (2, 6..8, 2));
        let err = Placement::new(4, 3, 0).unwrap_err();
        assert!(
            err.message()
                .contains("mpirun -np 4 (one device per process), or -np 1 or -np 2"),
            "{err:?}"
        );
        assert!(Placement::new(4, 8, 0).is_err());
        assert!(Placement::new(4, 2, 2).is_err());
    }
}
