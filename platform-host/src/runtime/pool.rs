//! The process-wide compute pool kernels run their parallel work on.
//!
//! One rayon pool, sized to the machine's cores, shared by every stream and
//! device of the process: several streams running kernels at once share the
//! cores instead of oversubscribing them.
//!
//! [`run_tasks`] is how a kernel runs parallel work: `f(0)`, …, `f(tasks - 1)`,
//! each exactly once, by the calling thread (usually a stream's thread, which
//! is not in the pool) together with up to `cores - 1` helpers it asks the
//! pool for. Tasks are claimed one at a time from a shared counter, so the
//! caller never waits for a helper that has not started yet: a helper that
//! wakes late finds nothing left and returns. The caller waits only for tasks
//! a helper has claimed, spinning briefly (a kernel's parts usually end close
//! together) and then parking. Handing the whole job to the pool and blocking
//! on it instead costs two thread wake-ups on the critical path of every
//! parallel kernel (the pool's, then the caller's), tens of microseconds on a
//! virtual machine: more than a small GEMM of a recurrent step takes.
//!
//! A helper whose job has no tasks left lingers for a while (`LINGER`),
//! watching for the next posted job and joining it at once: a recurrent step
//! alternates parallel GEMMs with short serial kernels, and a helper that had
//! gone to sleep in between would wake after the caller had done its share.
//!
//! Nothing here waits for work that has not started: a caller waits only for
//! tasks already running, so a kernel never blocks a pool thread on another
//! stream, and calls may nest (a task that itself calls [`run_tasks`] is a
//! caller in turn).
//!
//! [`parallel_for`] is the range form: it splits `0..n` into contiguous
//! ranges of at least `min_per_task` items, or runs inline when the work is
//! too small to be worth a hand-off.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Cores this process may use.
pub fn core_count() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The shared compute pool.
pub fn compute_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(core_count())
            .thread_name(|i| format!("host-compute-{i}"))
            .build()
            .or_else(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build())
            .unwrap_or_else(|_| {
                // Both builds failing means threads cannot be created at all; the
                // global pool is the only thing left that might work.
                rayon::ThreadPoolBuilder::new()
                    .build()
                    .unwrap_or_else(|e| panic!("cannot create any compute thread: {e}"))
            })
    })
}

/// How long a caller that has run out of tasks spins for the helpers' last
/// ones before parking.
const SPIN: Duration = Duration::from_micros(20);

/// One [`run_tasks`] call, shared with its helpers (which may outlive it).
struct Job {
    /// The next task index to claim; indices at or past `tasks` mean none left.
    next: AtomicUsize,
    /// Tasks finished (or, after a panic, abandoned).
    done: AtomicUsize,
    tasks: usize,
    /// The task body, with its lifetime erased: only dereferenced by whoever
    /// claimed an index below `tasks`, and the caller does not return (so
    /// the closure stays alive) until every such task is counted in `done`.
    body: *const (dyn Fn(usize) + Sync),
    /// The first panic of a helper's task, re-raised in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    caller: std::thread::Thread,
}

// SAFETY: `body` points to a `Sync` closure, only called under the protocol
// described on the field; everything else is `Send + Sync` already.
unsafe impl Send for Job {}
// SAFETY: as above.
unsafe impl Sync for Job {}

impl Job {
    /// Claims and runs tasks until none are left.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.tasks {
                return;
            }
            // SAFETY: a claimed index: the caller waits for it (see `body`).
            let body = unsafe { &*self.body };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(i)));
            if let Err(payload) = result {
                let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(payload);
                // Leave the rest to nobody: the caller re-raises.
                self.abandon();
            }
            self.finish(1);
        }
    }

    /// Claims every remaining task without running it.
    fn abandon(&self) {
        let first = self.next.swap(self.tasks, Ordering::Relaxed);
        if first < self.tasks {
            self.finish(self.tasks - first);
        }
    }

    /// Counts `n` tasks as finished; the last one wakes the caller.
    fn finish(&self, n: usize) {
        // Release: the tasks' writes happen before the caller sees the count.
        if self.done.fetch_add(n, Ordering::AcqRel) + n == self.tasks {
            self.caller.unpark();
        }
    }

    /// Waits until every task is finished or abandoned: spins for [`SPIN`],
    /// then parks until the last finisher unparks it.
    fn wait(&self) {
        let start = Instant::now();
        let mut round = 0;
        while self.done.load(Ordering::Acquire) < self.tasks {
            if start.elapsed() < SPIN {
                relax(&mut round);
            } else {
                // `finish` counts before it unparks, so no wake-up is lost; a
                // stale token from an earlier job ends this early, and the
                // loop re-checks.
                std::thread::park();
            }
        }
    }
}

/// One round of a spin-wait: a few `pause`s (each can take 140 cycles), and
/// every few microseconds the core left to anything else runnable on it (the
/// stream thread, or the program's caller, may be waiting for one).
fn relax(round: &mut u32) {
    for _ in 0..4 {
        std::hint::spin_loop();
    }
    *round += 1;
    if round.is_multiple_of(16) {
        std::thread::yield_now();
    }
}

/// How long a helper whose job has no tasks left watches for the next one
/// before going back to the pool (which soon puts it to sleep). A recurrent
/// step runs a parallel GEMM, a short serial kernel, another GEMM: a helper
/// that has fallen asleep in between wakes too late to take its share.
const LINGER: Duration = Duration::from_micros(100);

/// The latest job posted by [`run_tasks`], for lingering helpers; `EPOCH`
/// counts posts, `LINGERING` the helpers watching.
static POSTED: Mutex<Option<Arc<Job>>> = Mutex::new(None);
static EPOCH: AtomicUsize = AtomicUsize::new(0);
static LINGERING: AtomicUsize = AtomicUsize::new(0);

/// A pool thread's part in `job`, then in the jobs posted while it lingers.
/// A stale job is harmless: its tasks are all claimed, so `work` returns
/// without touching its body.
fn help(job: Arc<Job>) {
    job.work();
    // Not kept alive while lingering: the caller clears `POSTED` by identity.
    drop(job);
    LINGERING.fetch_add(1, Ordering::AcqRel);
    let mut seen = EPOCH.load(Ordering::Acquire);
    let mut since = Instant::now();
    let mut round = 0;
    while since.elapsed() < LINGER {
        let epoch = EPOCH.load(Ordering::Acquire);
        if epoch != seen {
            seen = epoch;
            let next = POSTED.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(next) = next {
                next.work();
            }
            since = Instant::now();
            continue;
        }
        relax(&mut round);
    }
    LINGERING.fetch_sub(1, Ordering::AcqRel);
}

/// Runs `f(0)`, …, `f(tasks - 1)`, each exactly once, on the calling thread
/// and up to `cores - 1` pool threads, and returns when all have finished.
/// A panic in any task is re-raised here once every started task has ended.
pub fn run_tasks(tasks: usize, f: impl Fn(usize) + Sync) {
    let helpers = compute_pool()
        .current_num_threads()
        .min(tasks)
        .saturating_sub(1);
    if helpers == 0 {
        (0..tasks).for_each(f);
        return;
    }
    let body: &(dyn Fn(usize) + Sync) = &f;
    // SAFETY: only the lifetime is erased; see `Job::body`.
    let body: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(body) };
    let job = Arc::new(Job {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        tasks,
        body,
        panic: Mutex::new(None),
        caller: std::thread::current(),
    });
    // Helpers still lingering after an earlier job pick this one up at
    // once; the pool is asked only for the rest.
    *POSTED.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&job));
    EPOCH.fetch_add(1, Ordering::AcqRel);
    let lingering = LINGERING.load(Ordering::Acquire);
    for _ in lingering.min(helpers)..helpers {
        let job = Arc::clone(&job);
        compute_pool().spawn(move || help(job));
    }
    // `work` catches the tasks' panics, so the wait always happens and the
    // borrowed closure outlives every helper running it.
    job.work();
    job.wait();
    {
        let mut posted = POSTED.lock().unwrap_or_else(|e| e.into_inner());
        if posted.as_ref().is_some_and(|p| Arc::ptr_eq(p, &job)) {
            *posted = None;
        }
    }
    let payload = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(payload) = payload {
        std::panic::resume_unwind(payload);
    }
}

/// Runs `f(start, end)` over a partition of `0..n` into contiguous ranges, in
/// parallel (see [`run_tasks`]) when there are at least `2 * min_per_task`
/// items; inline otherwise. Every index is covered exactly once.
pub fn parallel_for(n: usize, min_per_task: usize, f: impl Fn(usize, usize) + Sync) {
    let min_per_task = min_per_task.max(1);
    // Too small to split: decided before asking the pool its size, which
    // costs a lookup per call (a loop's scalar ops run this per iteration).
    if n < 2 * min_per_task || compute_pool().current_num_threads() <= 1 {
        if n > 0 {
            f(0, n);
        }
        return;
    }
    let threads = compute_pool().current_num_threads();
    // A few tasks per thread so uneven tasks balance.
    let tasks = (n / min_per_task).min(threads * 4).max(1);
    let chunk = n.div_ceil(tasks);
    run_tasks(n.div_ceil(chunk), |t| {
        f(t * chunk, ((t + 1) * chunk).min(n))
    });
}

/// `f(0)`, …, `f(tasks - 1)` run as [`run_tasks`] does, results in order.
pub fn map_tasks<R: Send + Sync>(tasks: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let slots: Vec<OnceLock<R>> = (0..tasks).map(|_| OnceLock::new()).collect();
    run_tasks(tasks, |t| {
        let _ = slots[t].set(f(t));
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().expect("run_tasks runs every task"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn covers_every_index_once() {
        for n in [0usize, 1, 7, 100, 10_000] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            parallel_for(n, 16, |a, b| {
                for h in &hits[a..b] {
                    h.fetch_add(1, Ordering::Relaxed);
                }
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "n={n}");
        }
    }

    #[test]
    fn every_task_runs_once_even_nested() {
        let hits: Vec<AtomicUsize> = (0..64 * 8).map(|_| AtomicUsize::new(0)).collect();
        run_tasks(64, |outer| {
            run_tasks(8, |inner| {
                hits[outer * 8 + inner].fetch_add(1, Ordering::Relaxed);
            })
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn results_keep_task_order() {
        assert_eq!(
            map_tasks(100, |t| t * t),
            (0..100).map(|t| t * t).collect::<Vec<_>>()
        );
        assert!(map_tasks(0, |t| t).is_empty());
    }

    #[test]
    fn a_task_panic_reaches_the_caller_after_the_others_end() {
        let running = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_tasks(16, |t| {
                running.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(1));
                if t == 3 {
                    panic!("task 3 fails");
                }
                running.fetch_sub(1, Ordering::SeqCst);
            })
        }));
        let payload = result.expect_err("the panic is re-raised");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"task 3 fails"));
        // Only the failing task is left counted: nothing still runs.
        assert_eq!(running.load(Ordering::SeqCst), 1);
        // The pool still works afterwards.
        assert_eq!(map_tasks(4, |t| t + 1), vec![1, 2, 3, 4]);
    }
}
