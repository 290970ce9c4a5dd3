//! Execution profiles: timed spans a platform reports while it runs.
//!
//! A [`ProfileSink`] is handed to an execution through
//! `RunOptions::profile`; the platform records one [`ProfileEvent`] per unit of
//! work it times (an instruction, a thunk, a kernel), and the client adds its
//! own spans (transfers, whole executions). Several executions may share a
//! sink; their spans then sit on one timeline.
//!
//! An event names what ran and may carry [`EventArgs`]: the HLO op, its shape,
//! the JAX op name and the `source_file:line` from the instruction's metadata,
//! the ops a fusion holds. A platform builds them once per instruction at
//! compile time ([`instruction_args`]) and shares them with every event by
//! reference count, so recording stays two clock reads and a push.
//!
//! Threads are numbered per process ([`ProfileSink::this_thread`]) and named
//! after the OS thread (`host-stream-0`, `replica-1-0`, `main`), so a trace
//! viewer labels its rows with something a person recognises.

use crate::hlo::{HloInstruction, HloModule};
use crate::Opcode;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Details of an event as `(key, value)` pairs: `op`, `shape`, `op_name`,
/// `source`, `fused`. Shared by every event of the same instruction.
pub type EventArgs = Arc<[(&'static str, String)]>;

/// One timed span of an execution (an instruction, a thunk, a kernel).
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileEvent {
    /// What ran: an instruction name, a fused kernel's name.
    pub name: String,
    /// Its kind: the opcode, `"fusion"`, `"copy"`.
    pub category: String,
    /// Start, in microseconds since the profile began.
    pub start_us: f64,
    pub duration_us: f64,
    /// The thread (or device queue) it ran on: see [`ProfileSink::this_thread`].
    pub thread: u64,
    /// What the instruction is and where it came from, when the platform says.
    pub args: Option<EventArgs>,
}

/// Collects [`ProfileEvent`]s from executions. Shared by reference with the
/// executable; thread-safe so parallel kernels can report.
#[derive(Debug)]
pub struct ProfileSink {
    origin: Instant,
    events: Mutex<Vec<ProfileEvent>>,
    thread_names: Mutex<BTreeMap<u64, String>>,
}

impl Default for ProfileSink {
    fn default() -> Self {
        ProfileSink {
            origin: Instant::now(),
            events: Mutex::new(Vec::new()),
            thread_names: Mutex::new(BTreeMap::new()),
        }
    }
}

/// Names of the threads that have asked for a number, process-wide: each
/// thread registers once, on its first call.
static THREAD_NAMES: Mutex<BTreeMap<u64, String>> = Mutex::new(BTreeMap::new());

/// A small number per OS thread of the process. The first call from a thread
/// records its name (or `thread N`) in [`THREAD_NAMES`]; later calls are a
/// thread-local read.
fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = {
            let id = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = std::thread::current()
                .name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("thread {id}"));
            if let Ok(mut names) = THREAD_NAMES.lock() {
                names.insert(id, name);
            }
            id
        };
    }
    ID.with(|id| *id)
}

impl ProfileSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Microseconds from the sink's creation to `t`.
    pub fn micros_since_origin(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// The calling thread's number for [`ProfileEvent::thread`] (a
    /// thread-local read after the thread's first call).
    pub fn this_thread(&self) -> u64 {
        thread_number()
    }

    /// Names a thread number (or a device queue a platform numbers itself),
    /// for this sink's events.
    pub fn name_thread(&self, thread: u64, name: impl Into<String>) {
        if let Ok(mut names) = self.thread_names.lock() {
            names.insert(thread, name.into());
        }
    }

    /// The names of the threads this sink's events were recorded from: the
    /// OS thread's name, or what [`Self::name_thread`] gave.
    pub fn thread_names(&self) -> BTreeMap<u64, String> {
        let used: std::collections::BTreeSet<u64> =
            self.events().iter().map(|e| e.thread).collect();
        let mut names: BTreeMap<u64, String> = THREAD_NAMES
            .lock()
            .map(|n| {
                n.iter()
                    .filter(|(id, _)| used.contains(id))
                    .map(|(id, name)| (*id, name.clone()))
                    .collect()
            })
            .unwrap_or_default();
        if let Ok(own) = self.thread_names.lock() {
            names.extend(own.iter().map(|(id, name)| (*id, name.clone())));
        }
        names
    }

    /// Records a span that began at `start` and ends now.
    pub fn record(
        &self,
        name: impl Into<String>,
        category: impl Into<String>,
        start: Instant,
        thread: u64,
    ) {
        self.record_with_args(name, category, start, thread, None);
    }

    /// [`Self::record`] with the instruction's details.
    pub fn record_with_args(
        &self,
        name: impl Into<String>,
        category: impl Into<String>,
        start: Instant,
        thread: u64,
        args: Option<EventArgs>,
    ) {
        let end = Instant::now();
        let event = ProfileEvent {
            name: name.into(),
            category: category.into(),
            start_us: self.micros_since_origin(start),
            duration_us: end.saturating_duration_since(start).as_secs_f64() * 1e6,
            thread,
            args,
        };
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }

    /// Everything recorded so far, in recording order.
    pub fn events(&self) -> Vec<ProfileEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Forgets the events recorded so far (thread names stay).
    pub fn clear(&self) {
        if let Ok(mut events) = self.events.lock() {
            events.clear();
        }
    }
}

/// The details of `instr` for its events: its opcode, shape, JAX op name,
/// source location, and for a fusion the ops it holds (`module` is needed
/// for those, and for a fusion without metadata of its own, whose root's is
/// used).
pub fn instruction_args(module: Option<&HloModule>, instr: &HloInstruction) -> EventArgs {
    let mut args: Vec<(&'static str, String)> = vec![
        ("op", instr.opcode().name().to_string()),
        ("shape", instr.shape.without_layout().to_string()),
    ];
    let fused = match (&instr.op, module) {
        (crate::hlo::Op::Fusion { calls, .. }, Some(m)) => m.computations.get(calls.index()),
        _ => None,
    };
    // A fusion's own metadata, else its fused ops': the root's op name and
    // every source line they came from.
    let own = instr.metadata.as_ref();
    let from_fused = || -> Option<Vec<&crate::hlo::OpMetadata>> {
        let comp = fused?;
        Some(
            std::iter::once(comp.root_instr())
                .chain(comp.instructions.iter())
                .filter_map(|i| i.metadata.as_ref())
                .collect(),
        )
    };
    let all: Vec<&crate::hlo::OpMetadata> = match own {
        Some(m) => vec![m],
        None => from_fused().unwrap_or_default(),
    };
    if let Some(name) = all.iter().find_map(|m| m.op_name.as_ref()) {
        args.push(("op_name", name.clone()));
    }
    let mut files: Vec<(&str, Vec<i64>)> = Vec::new();
    for m in &all {
        if let Some(file) = &m.source_file {
            let at = match files.iter().position(|(f, _)| f == file) {
                Some(at) => at,
                None => {
                    files.push((file, Vec::new()));
                    files.len() - 1
                }
            };
            if let Some(line) = m.source_line {
                if !files[at].1.contains(&line) {
                    files[at].1.push(line);
                }
            }
        }
    }
    if !files.is_empty() {
        let parts: Vec<String> = files
            .iter()
            .map(|(file, lines)| {
                let mut lines = lines.clone();
                lines.sort_unstable();
                let lines: Vec<String> = lines.iter().map(i64::to_string).collect();
                if lines.is_empty() {
                    file.to_string()
                } else {
                    format!("{file}:{}", lines.join(","))
                }
            })
            .collect();
        args.push(("source", parts.join("; ")));
    }
    if let Some(comp) = fused {
        // Opcodes in order of first appearance, with counts: "multiply x2, add, exp".
        let mut counts: Vec<(Opcode, usize)> = Vec::new();
        for i in &comp.instructions {
            let op = i.opcode();
            if matches!(op, Opcode::Parameter | Opcode::Constant | Opcode::Tuple) {
                continue;
            }
            match counts.iter_mut().find(|(o, _)| *o == op) {
                Some((_, n)) => *n += 1,
                None => counts.push((op, 1)),
            }
        }
        let list: Vec<String> = counts
            .iter()
            .map(|(op, n)| match n {
                1 => op.name().to_string(),
                n => format!("{} x{n}", op.name()),
            })
            .collect();
        args.push(("fused", list.join(", ")));
    }
    args.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_args_and_threads_their_names() {
        let module = HloModule::parse(
            "HloModule m\n\nf {\n  p = f32[4] parameter(0)\n  e = f32[4] exponential(p), metadata={source_file=\"f.py\" source_line=6}\n  \
             ROOT m = f32[4] multiply(e, e), metadata={op_name=\"jit(f)/mul\" source_file=\"f.py\" source_line=7}\n}\n\n\
             ENTRY main {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] fusion(x), kind=kLoop, calls=f\n}\n",
        )
        .unwrap();
        let entry = module.entry();
        let fusion = entry.root_instr();
        let args = instruction_args(Some(&module), fusion);
        let get = |k: &str| {
            args.iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("op"), Some("fusion"));
        assert_eq!(get("shape"), Some("f32[4]"));
        assert_eq!(get("op_name"), Some("jit(f)/mul"));
        assert_eq!(get("source"), Some("f.py:6,7"));
        assert_eq!(get("fused"), Some("exponential, multiply"));

        let sink = ProfileSink::new();
        let t = sink.this_thread();
        sink.record_with_args("r", "fusion", Instant::now(), t, Some(args.clone()));
        let events = sink.events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].args.as_ref(), Some(&args));
        assert!(sink.thread_names().contains_key(&t));
        let other = std::thread::Builder::new()
            .name("worker-x".into())
            .spawn({
                let sink = Arc::new(ProfileSink::new());
                move || {
                    let id = sink.this_thread();
                    sink.record("x", "op", Instant::now(), id);
                    (id, sink.thread_names())
                }
            })
            .unwrap()
            .join()
            .unwrap();
        assert_ne!(other.0, t);
        assert_eq!(other.1.get(&other.0).map(String::as_str), Some("worker-x"));
    }
}
