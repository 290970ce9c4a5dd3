//! Where executions of one multi-device launch meet for a collective.
//!
//! Every collective is an *exchange*: each participant of a replica group brings
//! its operand bytes, waits until the whole group has arrived, and leaves with
//! every participant's bytes in rank order; it then computes its own result
//! locally (a sum, a concatenation, its slice of a scatter). This costs a copy
//! per participant, which on one machine is cheaper than the synchronisation a
//! cleverer scheme would need, and keeps every collective a few lines of local
//! arithmetic.
//!
//! Meetings are keyed by the launch's `run_id`, the position of the collective
//! in the execution's dynamic sequence of collectives (every replica runs the
//! same program, so the n-th collective of each is the same one, even inside
//! loops), and the group. A participant that waits longer than
//! [`RENDEZVOUS_TIMEOUT`] gives up with `DeadlineExceeded`, naming who never came.

use platform_api::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a participant waits for the rest of its group.
pub const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);

/// Identifies one meeting.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RendezvousKey {
    pub run_id: u64,
    /// The collective's position in the execution's sequence of collectives.
    pub sequence: u64,
    /// The participants (global ids) of the group, in rank order.
    pub group: Vec<usize>,
}

struct Meeting {
    state: Mutex<MeetingState>,
    arrived_all: Condvar,
}

struct MeetingState {
    contributions: Vec<Option<Vec<u8>>>,
    arrived: usize,
    departed: usize,
    result: Option<Arc<Vec<Vec<u8>>>>,
}

fn meetings() -> &'static Mutex<HashMap<RendezvousKey, Arc<Meeting>>> {
    static MEETINGS: OnceLock<Mutex<HashMap<RendezvousKey, Arc<Meeting>>>> = OnceLock::new();
    MEETINGS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Deposits `data` as participant `rank` of `key.group` and returns every
/// participant's data, in rank order, once all have arrived.
pub fn exchange(key: &RendezvousKey, rank: usize, data: Vec<u8>) -> Result<Arc<Vec<Vec<u8>>>> {
    let size = key.group.len();
    if rank >= size {
        return Err(Error::internal(format!(
            "rank {rank} outside a group of {size}"
        )));
    }
    let meeting = {
        let mut all = meetings()
            .lock()
            .map_err(|_| Error::internal("rendezvous table lock poisoned"))?;
        all.entry(key.clone())
            .or_insert_with(|| {
                Arc::new(Meeting {
                    state: Mutex::new(MeetingState {
                        contributions: vec![None; size],
                        arrived: 0,
                        departed: 0,
                        result: None,
                    }),
                    arrived_all: Condvar::new(),
                })
            })
            .clone()
    };
    let lock_err = || Error::internal("rendezvous lock poisoned");
    let mut st = meeting.state.lock().map_err(|_| lock_err())?;
    if st.contributions[rank].is_some() {
        return Err(Error::internal(format!(
            "participant {} arrived twice at collective #{} of run {}",
            key.group[rank], key.sequence, key.run_id
        )));
    }
    st.contributions[rank] = Some(data);
    st.arrived += 1;
    if st.arrived == size {
        let all: Vec<Vec<u8>> = st
            .contributions
            .iter_mut()
            .map(|c| c.take().unwrap_or_default())
            .collect();
        st.result = Some(Arc::new(all));
        meeting.arrived_all.notify_all();
    }
    let deadline = Instant::now() + RENDEZVOUS_TIMEOUT;
    while st.result.is_none() {
        let now = Instant::now();
        if now >= deadline {
            let missing: Vec<usize> = st
                .contributions
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_none())
                .map(|(i, _)| key.group[i])
                .collect();
            drop(st);
            if let Ok(mut all) = meetings().lock() {
                all.remove(key);
            }
            return Err(Error::new(
                platform_api::Code::DeadlineExceeded,
                format!(
                    "collective #{} of run {}: participants {missing:?} of group {:?} never arrived within {:?}",
                    key.sequence, key.run_id, key.group, RENDEZVOUS_TIMEOUT
                ),
            ));
        }
        st = meeting
            .arrived_all
            .wait_timeout(st, deadline - now)
            .map_err(|_| lock_err())?
            .0;
    }
    let result = st.result.clone().unwrap_or_default();
    st.departed += 1;
    let last = st.departed == size;
    drop(st);
    if last {
        if let Ok(mut all) = meetings().lock() {
            all.remove(key);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_participant_sees_every_contribution_in_rank_order() {
        let key = RendezvousKey {
            run_id: 991,
            sequence: 0,
            group: vec![0, 1, 2],
        };
        let handles: Vec<_> = (0..3)
            .map(|r| {
                let key = key.clone();
                std::thread::spawn(move || exchange(&key, r, vec![r as u8; r + 1]).unwrap())
            })
            .collect();
        for h in handles {
            let all = h.join().unwrap();
            assert_eq!(*all, vec![vec![0u8], vec![1, 1], vec![2, 2, 2]]);
        }
        assert!(!meetings().lock().unwrap().contains_key(&key));
    }
}
