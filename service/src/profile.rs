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
//! (`"ph":"X"`) with microsecond `ts`/`dur`, one `tid` per reporting thread,
//! named after it, and the event's details as `args`. [`op_summary`] sums the
//! backend's spans per op (self time: nested spans subtracted) for the table
//! `hlorun bench --profile` prints.

use platform_api::{Error, ProfileEvent, ProfileSink, Result};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

/// Records a client span (`category` is "execute" or "transfer") from `start` to
/// now into `sink`, if there is one.
pub(crate) fn record_span(
    sink: Option<&ProfileSink>,
    name: impl FnOnce() -> String,
    category: &str,
    start: Instant,
) {
    if let Some(sink) = sink {
        sink.record(name(), category, start, sink.this_thread());
    }
}

/// Whether an event is the client's (a whole execution or a transfer) rather
/// than a backend's span of one instruction, thunk or kernel.
pub fn is_client_span(e: &ProfileEvent) -> bool {
    e.category == "execute" || e.category == "transfer"
}

/// The Chrome trace JSON object for `events`, shown as one process named
/// `process_name`, its rows named by `thread_names`; an event's args (op,
/// shape, JAX op name, source line, fused ops) are shown when it is selected.
pub fn chrome_trace(
    events: &[ProfileEvent],
    thread_names: &BTreeMap<u64, String>,
    process_name: &str,
) -> Value {
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
        let label = thread_names
            .get(&tid)
            .cloned()
            .unwrap_or_else(|| format!("thread {tid}"));
        trace_events.push(json!({
            "name": "thread_name",
            "ph": "M",
            "pid": PID,
            "tid": tid,
            "args": { "name": label },
        }));
    }
    for e in events {
        let mut event = json!({
            "name": e.name,
            "cat": e.category,
            "ph": "X",
            "ts": finite(e.start_us),
            "dur": finite(e.duration_us),
            "pid": PID,
            "tid": e.thread,
        });
        if let Some(args) = &e.args {
            let map: Map<String, Value> = args
                .iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
                .collect();
            event["args"] = Value::Object(map);
        }
        trace_events.push(event);
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

/// Writes [`chrome_trace`] of everything `sink` recorded to `path`.
pub fn write_chrome_trace(path: &Path, sink: &ProfileSink, process_name: &str) -> Result<()> {
    let trace = chrome_trace(&sink.events(), &sink.thread_names(), process_name);
    let text = serde_json::to_string(&trace)
        .map_err(|e| Error::internal(format!("serialising the trace: {e}")))?;
    std::fs::write(path, text)
        .map_err(|e| Error::from(e).context(format!("writing the trace to {}", path.display())))
}

/// One row of a per-op profile summary: every span of one instruction (or
/// thunk, or kernel) over the profiled runs.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSummary {
    pub name: String,
    pub category: String,
    /// Spans recorded, over all runs.
    pub count: usize,
    /// Time in the op itself, its nested spans (a loop's body) excluded, in
    /// microseconds over all runs.
    pub self_us: f64,
    /// Time including nested spans, microseconds over all runs.
    pub total_us: f64,
    /// The event's details (`op`, `shape`, `op_name`, `source`, `fused`).
    pub args: Vec<(String, String)>,
}

impl OpSummary {
    /// The value of one detail, if the platform gave it.
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Each backend span's self time: its duration less that of the spans nested
/// in it on the same thread (a while loop's thunk holds its body's).
fn self_times(events: &[&ProfileEvent]) -> Vec<f64> {
    let mut self_us: Vec<f64> = events.iter().map(|e| e.duration_us).collect();
    let mut by_thread: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        by_thread.entry(e.thread).or_default().push(i);
    }
    for indices in by_thread.values_mut() {
        // Outer spans first when two start together.
        indices.sort_by(|&a, &b| {
            let (x, y) = (events[a], events[b]);
            x.start_us
                .total_cmp(&y.start_us)
                .then(y.duration_us.total_cmp(&x.duration_us))
        });
        let mut open: Vec<usize> = Vec::new();
        for &i in indices.iter() {
            let e = events[i];
            while let Some(&top) = open.last() {
                let t = events[top];
                if t.start_us + t.duration_us <= e.start_us {
                    open.pop();
                } else {
                    break;
                }
            }
            if let Some(&parent) = open.last() {
                self_us[parent] -= e.duration_us;
            }
            open.push(i);
        }
    }
    self_us.iter().map(|t| t.max(0.0)).collect()
}

/// The backend spans of `events` summed per op, largest self time first.
pub fn op_summary(events: &[ProfileEvent]) -> Vec<OpSummary> {
    let spans: Vec<&ProfileEvent> = events.iter().filter(|e| !is_client_span(e)).collect();
    let self_us = self_times(&spans);
    let mut rows: Vec<OpSummary> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for (e, own) in spans.iter().zip(self_us) {
        let at = *index
            .entry((e.name.as_str(), e.category.as_str()))
            .or_insert_with(|| {
                rows.push(OpSummary {
                    name: e.name.clone(),
                    category: e.category.clone(),
                    count: 0,
                    self_us: 0.0,
                    total_us: 0.0,
                    args: e
                        .args
                        .iter()
                        .flat_map(|a| a.iter())
                        .map(|(k, v)| (k.to_string(), v.clone()))
                        .collect(),
                });
                rows.len() - 1
            });
        let row = &mut rows[at];
        row.count += 1;
        row.self_us += own;
        row.total_us += e.duration_us;
    }
    rows.sort_by(|a, b| b.self_us.total_cmp(&a.self_us).then(a.name.cmp(&b.name)));
    rows
}

/// The summary as a table: the `top` ops by self time per run, their share of
/// `run_us` (one run's execution time), calls per run, op, shape and where
/// they came from; then what the rest add up to.
pub fn format_op_summary(rows: &[OpSummary], runs: usize, run_us: f64, top: usize) -> String {
    let runs = runs.max(1) as f64;
    let clip = |s: &str, n: usize| -> String {
        if s.chars().count() <= n {
            s.to_string()
        } else {
            let head: String = s.chars().take(n.saturating_sub(3)).collect();
            format!("{head}...")
        }
    };
    let mut table = vec![[
        "SELF ms/run".to_string(),
        "SHARE".to_string(),
        "CALLS/run".to_string(),
        "NAME".to_string(),
        "OP".to_string(),
        "SHAPE".to_string(),
        "FROM".to_string(),
    ]];
    for r in rows.iter().take(top) {
        let op = match r.arg("fused") {
            Some(f) => format!("{} [{}]", r.category, clip(f, 40)),
            None => r.category.clone(),
        };
        let from = match (r.arg("op_name"), r.arg("source")) {
            (Some(n), Some(s)) => format!("{} ({s})", clip(n, 50)),
            (Some(n), None) => clip(n, 50),
            (None, Some(s)) => s.to_string(),
            (None, None) => String::new(),
        };
        table.push([
            format!("{:.4}", r.self_us / runs / 1e3),
            share(r.self_us / runs, run_us),
            format!("{}", (r.count as f64 / runs).round()),
            clip(&r.name, 40),
            op,
            clip(r.arg("shape").unwrap_or(""), 40),
            from,
        ]);
    }
    let generic: Vec<&OpSummary> = rows
        .iter()
        .take(top)
        .filter(|r| r.arg("generic_path").is_some())
        .collect();
    for (row, r) in table.iter_mut().skip(1).zip(rows.iter()) {
        if r.arg("generic_path").is_some() {
            row[3] = format!("{} *", row[3]);
        }
    }
    let mut text = crate::text::table(&table);
    for r in &generic {
        text.push_str(&format!(
            "* %{} ran on a generic path: {}\n",
            r.name,
            r.arg("generic_path").unwrap_or_default()
        ));
    }
    if rows.len() > top {
        let rest: f64 = rows[top..].iter().map(|r| r.self_us).sum::<f64>() / runs;
        text.push_str(&format!(
            "... and {} more op(s): {:.4} ms/run ({})\n",
            rows.len() - top,
            rest / 1e3,
            share(rest, run_us)
        ));
    }
    text
}

fn share(part_us: f64, whole_us: f64) -> String {
    if whole_us > 0.0 {
        format!("{:.1}%", 100.0 * part_us / whole_us)
    } else {
        "-".to_string()
    }
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
        let trace = chrome_trace(&sink.events(), &sink.thread_names(), "Interpreter");
        let events = trace["traceEvents"].as_array().unwrap();
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(complete.len(), 2);
        assert_eq!(complete[0]["name"], "%add.1");
        assert_eq!(complete[0]["cat"], "add");
        assert_eq!(complete[1]["tid"], sink.this_thread());
        for e in &complete {
            assert!(e["ts"].as_f64().unwrap() >= 0.0);
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
            assert_eq!(e["pid"], 1);
        }
    }

    fn span(name: &str, start_us: f64, duration_us: f64, thread: u64) -> ProfileEvent {
        ProfileEvent {
            name: name.into(),
            category: "op".into(),
            start_us,
            duration_us,
            thread,
            args: None,
        }
    }

    #[test]
    fn summary_charges_nested_spans_to_themselves_not_to_their_loop() {
        // Two runs of: a loop (10 us) holding two body ops (3 us each), then an
        // op of 5 us; on another thread, an op overlapping the loop in time.
        let mut events = Vec::new();
        for run in 0..2 {
            let t0 = run as f64 * 100.0;
            events.push(span("loop", t0, 10.0, 1));
            events.push(span("body_a", t0 + 1.0, 3.0, 1));
            events.push(span("body_b", t0 + 5.0, 3.0, 1));
            events.push(span("after", t0 + 10.0, 5.0, 1));
            events.push(span("other_thread", t0 + 2.0, 4.0, 2));
        }
        let rows = op_summary(&events);
        let get = |n: &str| rows.iter().find(|r| r.name == n).unwrap();
        assert_eq!(get("loop").self_us, 8.0);
        assert_eq!(get("loop").total_us, 20.0);
        assert_eq!(get("body_a").self_us, 6.0);
        assert_eq!(get("after").self_us, 10.0);
        assert_eq!(get("other_thread").self_us, 8.0);
        assert_eq!(get("after").count, 2);
        // Largest self time first.
        assert_eq!(rows[0].name, "after");
        let text = format_op_summary(&rows, 2, 15.0, 2);
        assert!(text.starts_with("SELF ms/run"), "{text}");
        assert!(text.contains("33.3%"), "{text}");
        assert!(text.contains("... and 3 more op(s)"), "{text}");
    }
}
