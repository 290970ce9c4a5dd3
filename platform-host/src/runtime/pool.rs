//! The process-wide compute pool kernels run their parallel work on.
//!
//! One rayon pool, sized to the machine's cores, shared by every stream and
//! device of the process: several streams running kernels at once share the
//! cores instead of oversubscribing them. Stream threads are not part of the
//! pool; they hand work to it and wait, so a kernel never blocks a pool thread on
//! another stream.
//!
//! [`parallel_for`] is the helper kernels use: it splits `0..n` into contiguous
//! ranges and runs them on the pool, or inline when the work is too small to be
//! worth a hand-off (`min_per_task` items per task at least).

use std::sync::OnceLock;

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

/// Runs `f(start, end)` over a partition of `0..n` into contiguous ranges, in
/// parallel on the compute pool when there are at least `2 * min_per_task` items;
/// inline otherwise. Every index is covered exactly once.
pub fn parallel_for(n: usize, min_per_task: usize, f: impl Fn(usize, usize) + Sync) {
    let min_per_task = min_per_task.max(1);
    let threads = compute_pool().current_num_threads();
    if n < 2 * min_per_task || threads <= 1 {
        if n > 0 {
            f(0, n);
        }
        return;
    }
    // A few tasks per thread so uneven tasks balance.
    let tasks = (n / min_per_task).min(threads * 4).max(1);
    let chunk = n.div_ceil(tasks);
    compute_pool().scope(|s| {
        for t in 0..tasks {
            let start = t * chunk;
            let end = ((t + 1) * chunk).min(n);
            if start >= end {
                continue;
            }
            let f = &f;
            s.spawn(move |_| f(start, end));
        }
    });
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
}
