//! Progress of a long run on a terminal.
//!
//! A program that runs for seconds (a scan of thousands of steps) would
//! otherwise show nothing until it ends. [`Watch::start`] draws a spinner on
//! standard error, only when that is a terminal and only once the run has
//! taken longer than [`QUIET_FOR`], with the elapsed time and the loop
//! iterations the platform reports through [`Progress`]. Dropping the watch
//! stops it and clears the line, so results print on a clean terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use platform_api::Progress;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Runs shorter than this show no spinner at all.
pub const QUIET_FOR: Duration = Duration::from_secs(1);

/// How often the spinner's line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// A spinner thread watching one run; stops when dropped.
pub struct Watch {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Watches a run described by `what` (say, "jit_f on Host") whose
    /// platform counts into `progress`. Does nothing unless standard error
    /// is a terminal (and `HLORUN_NO_PROGRESS` is unset).
    pub fn start(what: String, progress: Arc<Progress>) -> Watch {
        let wanted =
            std::io::stderr().is_terminal() && std::env::var_os("HLORUN_NO_PROGRESS").is_none();
        Watch::start_if(wanted, what, progress)
    }

    /// [`Watch::start`] with the decision made by the caller: a spinner
    /// thread only when `wanted`.
    fn start_if(wanted: bool, what: String, progress: Arc<Progress>) -> Watch {
        let done = Arc::new(AtomicBool::new(false));
        let thread = wanted
            .then(|| {
                let done = done.clone();
                std::thread::Builder::new()
                    .name("progress".into())
                    .spawn(move || spin(&what, &progress, &done))
                    .ok()
            })
            .flatten();
        Watch { done, thread }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The spinner's message: what runs, for how long, and the loop iterations
/// so far when the platform reports them.
pub fn message(what: &str, elapsed: Duration, loop_iterations: u64) -> String {
    let mut text = format!("running {what}: {:.1} s", elapsed.as_secs_f64());
    if loop_iterations > 0 {
        text.push_str(&format!(", {loop_iterations} loop iteration(s)"));
    }
    text
}

fn spin(what: &str, progress: &Progress, done: &AtomicBool) {
    let start = Instant::now();
    while start.elapsed() < QUIET_FOR {
        if done.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(TICK);
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
        bar.set_style(style);
    }
    while !done.load(Ordering::Relaxed) {
        bar.set_message(message(what, start.elapsed(), progress.loop_iterations()));
        bar.tick();
        std::thread::sleep(TICK);
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_says_time_and_iterations_when_known() {
        assert_eq!(
            message("f on Host", Duration::from_millis(2500), 0),
            "running f on Host: 2.5 s"
        );
        assert_eq!(
            message("f on Host", Duration::from_millis(12_345), 1234),
            "running f on Host: 12.3 s, 1234 loop iteration(s)"
        );
    }

    #[test]
    fn a_watch_spins_only_when_wanted_and_stops_when_dropped() {
        let quiet = Watch::start_if(false, "x".into(), Arc::new(Progress::new()));
        assert!(quiet.thread.is_none());
        // Wanted: a thread that waits out QUIET_FOR and stops as soon as the
        // watch is dropped, without ever drawing.
        let started = Instant::now();
        let w = Watch::start_if(true, "x".into(), Arc::new(Progress::new()));
        assert!(w.thread.is_some());
        drop(w);
        assert!(started.elapsed() < QUIET_FOR);
    }
}
