//! Execution profiles and their Chrome trace form.
//!
//! A profile is a list of [`ProfileEvent`]s collected in one [`ProfileSink`]:
//! the client records a span per transfer and per execution, and a backend that
//! times its instructions (or thunks, or kernels) adds those through
//! `RunOptions::profile`. Several executions may share one sink; their spans then
//! sit on one timeline.
//!
//! [`chrome_trace`] turns the events into the Trace Event Format that
//! `chrome://tracing` and Perfetto (ui.perfetto.dev) open: complete events
//! (`"ph":"X"`) with microsecond `ts`/`dur`, one `tid` per reporting thread.

use platform_api::{Error, ProfileEvent, ProfileSink, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Thread ids the client uses for its own spans start here, so they do not mix
/// with the small worker indices backends report.
const CLIENT_THREAD_BASE: u64 = 1_000;

/// A stable small number for the calling thread, for the `thread` of the spans
/// the client records.
pub fn client_thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(CLIENT_THREAD_BASE);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

/// Records a client span (`category` is "execute" or "transfer") from `start` to
/// now into `sink`, if there is one.
pub(crate) fn record_span(
    sink: Option<&ProfileSink>,
    name: impl FnOnce() -> String,
    category: &str,
    start: Instant,
) {
    if let Some(sink) = sink {
        sink.record(name(), category, start, client_thread_id());
    }
}

/// The Chrome trace JSON object for `events`, shown as one process named
/// `process_name`.
pub fn chrome_trace(events: &[ProfileEvent], process_name: &str) -> Value {
    const PID: u64 = 1;
    let mut trace_events = Vec::with_capacity(events.len() + 1);
    trace_events.push(json!({
        "name": "process_name",
        "ph": "M",
        "pid": PID,
        "tid": 0,
        "args": { "name": process_name },
    }));
    let mut threads: Vec<u64> = events.iter().map(|e| e.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    for tid in threads {
        let label = if tid >= CLIENT_THREAD_BASE {
            format!("client thread {}", tid - CLIENT_THREAD_BASE)
        } else {
            format!("backend thread {tid}")
        };
        trace_events.push(json!({
            "name": "thread_name",
            "ph": "M",
            "pid": PID,
            "tid": tid,
            "args": { "name": label },
        }));
    }
    for e in events {
        trace_events.push(json!({
            "name": e.name,
            "cat": e.category,
            "ph": "X",
            "ts": finite(e.start_us),
            "dur": finite(e.duration_us),
            "pid": PID,
            "tid": e.thread,
        }));
    }
    json!({ "traceEvents": trace_events, "displayTimeUnit": "ms" })
}

/// JSON has no NaN or infinity; a broken clock reading becomes 0.
fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// Writes [`chrome_trace`] of `events` to `path`.
pub fn write_chrome_trace(path: &Path, events: &[ProfileEvent], process_name: &str) -> Result<()> {
    let text = serde_json::to_string(&chrome_trace(events, process_name))
        .map_err(|e| Error::internal(format!("serialising the trace: {e}")))?;
    std::fs::write(path, text)
        .map_err(|e| Error::from(e).context(format!("writing the trace to {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_has_complete_events_with_their_fields() {
        let sink = ProfileSink::new();
        let start = Instant::now();
        sink.record("%add.1", "add", start, 0);
        record_span(Some(&sink), || "execute m".into(), "execute", start);
        let trace = chrome_trace(&sink.events(), "Interpreter");
        let events = trace["traceEvents"].as_array().unwrap();
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(complete.len(), 2);
        assert_eq!(complete[0]["name"], "%add.1");
        assert_eq!(complete[0]["cat"], "add");
        assert_eq!(complete[1]["tid"], client_thread_id());
        for e in complete {
            assert!(e["ts"].as_f64().unwrap() >= 0.0);
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
            assert_eq!(e["pid"], 1);
        }
    }
}
