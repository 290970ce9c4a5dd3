//! Progress of a running execution, for someone watching it.
//!
//! A long program (a scan of thousands of steps) shows nothing until it
//! ends. A [`Progress`] handed to an execution through `RunOptions::progress`
//! is a set of counters the platform bumps as it goes (one relaxed atomic add
//! per loop iteration) and a watcher on another thread reads, say to draw a
//! spinner with the iteration count. Platforms that do not report leave the
//! counters at zero; the watcher then shows elapsed time only.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of an execution's progress. Shared between the running platform
/// and a watcher; every method takes `&self`.
#[derive(Debug, Default)]
pub struct Progress {
    loop_iterations: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    /// One more iteration of a `while` loop body (any loop, any depth).
    pub fn loop_iteration(&self) {
        self.loop_iterations.fetch_add(1, Ordering::Relaxed);
    }

    /// `while` iterations done so far.
    pub fn loop_iterations(&self) -> u64 {
        self.loop_iterations.load(Ordering::Relaxed)
    }
}
