//! [`HostStream`] (an ordered queue of work, run by its own thread or inline
//! in the caller) and [`HostEvent`].
//!
//! A threaded stream owns one thread: enqueue methods push a work item and
//! return; the thread pops items in order and runs them. An inline stream runs
//! each item in the enqueueing call (simple, deterministic, and what a
//! reference backend wants). Either way the first error an item returns is
//! kept in the stream; while it is kept, later items are skipped (their event
//! markers complete with [`EventStatus::Error`]), until
//! [`Stream::block_host_until_done`] returns the error and clears it. A panic
//! inside an item becomes an `Internal` error of the stream.
//!
//! Dropping the last handle to a threaded stream lets its thread finish what is
//! queued and exit; the drop waits for that unless it happens on the stream's
//! own thread.

use super::memory::HostMemory;
use crate::{
    DeviceMemoryBase, Error, Event, EventStatus, HostCallback, Result, Stream, StreamExecutor,
};
use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How a device's streams run their work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamMode {
    /// In the enqueueing call.
    Inline,
    /// On a thread of the stream's own, in order; enqueueing returns at once.
    Threaded,
}

/// Copies `len` bytes between non-overlapping host ranges (a backend may pass
/// a parallel copy for large transfers).
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`.
pub type CopyFn = unsafe fn(src: *const u8, dst: *mut u8, len: usize);

/// The plain [`CopyFn`].
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`.
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: forwarded.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

/// One queued work item. `skipped` is true when the stream is in error: the item
/// must not do its work, only release what it holds (event markers mark failure).
type WorkItem = Box<dyn FnOnce(bool) -> Result<()> + Send + 'static>;

#[derive(Default)]
struct QueueState {
    items: VecDeque<WorkItem>,
    /// Items enqueued and not yet finished (queued or running).
    outstanding: usize,
    /// Items ever enqueued / finished: tickets that deferred frees wait on.
    enqueued: u64,
    completed: u64,
    /// The first error since the last `block_host_until_done`.
    error: Option<Error>,
    shutdown: bool,
    /// An item is running on the thread that enqueued it (an idle stream's
    /// [`Stream::run_on_caller_if_idle`]): the worker waits.
    caller_running: bool,
    /// Threads waiting on `idle`: only then does finishing an item notify
    /// it (a notification is a system call even when nobody waits, and a
    /// small program's run on the caller's thread finishes one item each).
    idle_waiters: usize,
}

/// The part of a stream its worker thread and its executor share.
pub struct StreamShared {
    state: Mutex<QueueState>,
    /// The executor's memory, whose deferred frees may wait on this stream.
    memory: Arc<HostMemory>,
    /// Signalled when an item is queued or shutdown is requested.
    work_ready: Condvar,
    /// Signalled when `outstanding` drops to zero.
    idle: Condvar,
}

impl StreamShared {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A panic inside a work item is caught before it can poison the lock, so a
        // poisoned lock means a bug here; recover the state rather than panic again.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, item: WorkItem) -> Result<()> {
        let mut st = self.lock();
        if st.shutdown {
            return Err(Error::failed_precondition("the stream has been shut down"));
        }
        st.items.push_back(item);
        st.outstanding += 1;
        st.enqueued += 1;
        drop(st);
        self.work_ready.notify_one();
        Ok(())
    }

    /// Blocks until every enqueued item has finished.
    pub fn wait_idle(&self) {
        let st = self.lock();
        drop(self.wait_for_idle(st, |st| st.outstanding > 0));
    }

    /// Waits on `idle` while `busy` holds, counted in `idle_waiters`.
    fn wait_for_idle<'a>(
        &'a self,
        mut st: MutexGuard<'a, QueueState>,
        busy: impl Fn(&QueueState) -> bool,
    ) -> MutexGuard<'a, QueueState> {
        if busy(&st) {
            st.idle_waiters += 1;
            while busy(&st) {
                st = self.idle.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.idle_waiters -= 1;
        }
        st
    }

    fn worker_loop(self: Arc<Self>) {
        loop {
            let (item, skipped) = {
                let mut st = self.lock();
                loop {
                    if !st.caller_running {
                        if let Some(item) = st.items.pop_front() {
                            break (item, st.error.is_some());
                        }
                    }
                    if st.shutdown {
                        return;
                    }
                    st = self.work_ready.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            self.run_item(item, skipped);
        }
    }

    /// Runs an item inline: counted as enqueued and finished like a queued one.
    fn run_inline(&self, item: WorkItem) -> Result<()> {
        let skipped = {
            let mut st = self.lock();
            if st.shutdown {
                return Err(Error::failed_precondition("the stream has been shut down"));
            }
            st.outstanding += 1;
            st.enqueued += 1;
            st.error.is_some()
        };
        self.run_item(item, skipped);
        Ok(())
    }

    /// Runs `work` on the calling thread if nothing is queued, running or
    /// failed, and returns its result; `None`, not run, when the stream is
    /// busy, so the caller queues it instead.
    fn run_on_caller_if_idle(&self, work: &mut dyn FnMut() -> Result<()>) -> Option<Result<()>> {
        {
            let mut st = self.lock();
            // (An item running on its caller counts as outstanding.)
            if st.outstanding > 0 || st.error.is_some() || st.shutdown {
                return None;
            }
            st.caller_running = true;
            st.outstanding += 1;
            st.enqueued += 1;
        }
        let result = catch_item_panic(work);
        let mut st = self.lock();
        st.caller_running = false;
        // Work queued from other threads meanwhile waited for this item; the
        // worker is woken only then (waking it for nothing costs a futex
        // call and a thread switch per run, most of a small program's time).
        let queued = !st.items.is_empty();
        self.finish(st);
        if queued {
            self.work_ready.notify_all();
        }
        Some(result)
    }

    /// Runs one item, keeps its error, and marks it finished.
    fn run_item(&self, item: WorkItem, skipped: bool) {
        let result = catch_item_panic(|| item(skipped));
        let mut st = self.lock();
        if let Err(e) = result {
            if st.error.is_none() && !skipped {
                st.error = Some(e);
            }
        }
        self.finish(st);
    }

    /// Marks one item finished (the lock held by `st`), then frees what
    /// waited for it.
    fn finish(&self, mut st: MutexGuard<'_, QueueState>) {
        st.outstanding -= 1;
        st.completed += 1;
        if st.outstanding == 0 && st.idle_waiters > 0 {
            self.idle.notify_all();
        }
        drop(st);
        self.memory.process_deferred_frees();
    }

    /// (items ever enqueued, items finished).
    pub(crate) fn progress(&self) -> (u64, u64) {
        let st = self.lock();
        (st.enqueued, st.completed)
    }
}

/// Runs a work item, turning a panic into an `Internal` error.
fn catch_item_panic(item: impl FnOnce() -> Result<()>) -> Result<()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(item)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(Error::internal(format!(
            "work on a stream panicked: {what}"
        )))
    })
}

/// A stream of a host-memory device: an ordered queue, run by its own thread
/// or inline.
pub struct HostStream {
    executor: Arc<dyn StreamExecutor>,
    shared: Arc<StreamShared>,
    /// The worker thread (threaded streams only).
    worker: Mutex<Option<JoinHandle<()>>>,
    worker_id: Option<std::thread::ThreadId>,
    /// Checks that copy ranges lie in the device's live allocations.
    strict: bool,
    copy: CopyFn,
}

/// Carries a raw destination pointer into a work item.
struct SendPtr(*mut u8);
// SAFETY: the pointer is only dereferenced by the work item, under the contract of
// `memcpy_device_to_host` (the caller keeps the destination valid and untouched).
unsafe impl Send for SendPtr {}

impl HostStream {
    pub(crate) fn new(
        executor: Arc<dyn StreamExecutor>,
        memory: Arc<HostMemory>,
        mode: StreamMode,
        strict: bool,
        copy: CopyFn,
    ) -> Result<Self> {
        let shared = Arc::new(StreamShared {
            state: Mutex::new(QueueState::default()),
            memory,
            work_ready: Condvar::new(),
            idle: Condvar::new(),
        });
        let (worker, worker_id) = match mode {
            StreamMode::Inline => (None, None),
            StreamMode::Threaded => {
                let for_worker = shared.clone();
                let handle = std::thread::Builder::new()
                    .name(format!(
                        "{}-stream-{}",
                        executor.platform_id().to_lowercase(),
                        executor.ordinal()
                    ))
                    .spawn(move || for_worker.worker_loop())
                    .map_err(|e| {
                        Error::resource_exhausted(format!("cannot start a stream thread: {e}"))
                    })?;
                let id = handle.thread().id();
                (Some(handle), Some(id))
            }
        };
        Ok(HostStream {
            executor,
            shared,
            worker: Mutex::new(worker),
            worker_id,
            strict,
            copy,
        })
    }

    pub(crate) fn shared(&self) -> &Arc<StreamShared> {
        &self.shared
    }

    fn push(&self, item: WorkItem) -> Result<()> {
        match self.worker_id {
            Some(_) => self.shared.push(item),
            None => self.shared.run_inline(item),
        }
    }

    /// Enqueues a work item that runs unless the stream is in error.
    pub fn enqueue(&self, work: impl FnOnce() -> Result<()> + Send + 'static) -> Result<()> {
        self.push(Box::new(
            move |skipped| {
                if skipped {
                    Ok(())
                } else {
                    work()
                }
            },
        ))
    }

    /// Whether the caller is this stream's worker thread (never, for an inline
    /// stream).
    pub fn is_worker_thread(&self) -> bool {
        self.worker_id == Some(std::thread::current().id())
    }

    fn check_range(&self, what: &str, mem: &DeviceMemoryBase, len: usize) -> Result<()> {
        if len > mem.size {
            return Err(Error::invalid_argument(format!(
                "{what}: {len} bytes do not fit a buffer of {} bytes",
                mem.size
            )));
        }
        if len > 0 && mem.is_null() {
            return Err(Error::invalid_argument(format!(
                "{what}: null device buffer"
            )));
        }
        if self.strict && !self.shared.memory.owns(mem.opaque as usize, len) {
            return Err(Error::invalid_argument(format!(
                "{what}: {:p} (+{len} bytes) is not live memory of {} device {}",
                mem.opaque,
                self.executor.platform_id(),
                self.executor.ordinal()
            )));
        }
        Ok(())
    }
}

impl Stream for HostStream {
    fn executor(&self) -> Arc<dyn StreamExecutor> {
        self.executor.clone()
    }

    fn memcpy_host_to_device(&self, dst: DeviceMemoryBase, src: &[u8]) -> Result<()> {
        self.check_range("host-to-device copy", &dst, src.len())?;
        let staged = src.to_vec();
        let copy = self.copy;
        self.enqueue(move || {
            let dst = dst;
            // SAFETY: `dst` holds at least `staged.len()` bytes (checked above) and
            // stream ordering keeps other users of it away while this runs.
            unsafe { copy(staged.as_ptr(), dst.opaque.cast(), staged.len()) };
            Ok(())
        })
    }

    unsafe fn memcpy_device_to_host(
        &self,
        dst: *mut u8,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        self.check_range("device-to-host copy", &src, len)?;
        let dst = SendPtr(dst);
        let copy = self.copy;
        self.enqueue(move || {
            let (dst, src) = (dst, src);
            // SAFETY: the caller keeps `dst` valid for `len` bytes until the stream
            // has run this copy; `src` holds at least `len` bytes.
            unsafe { copy(src.opaque.cast::<u8>(), dst.0, len) };
            Ok(())
        })
    }

    fn memcpy_device_to_device(
        &self,
        dst: DeviceMemoryBase,
        src: DeviceMemoryBase,
        len: usize,
    ) -> Result<()> {
        self.check_range("device-to-device copy (source)", &src, len)?;
        self.check_range("device-to-device copy (destination)", &dst, len)?;
        self.enqueue(move || {
            let (dst, src) = (dst, src);
            // SAFETY: both buffers hold `len` bytes; `copy` tolerates overlap.
            unsafe { std::ptr::copy(src.opaque.cast::<u8>(), dst.opaque.cast::<u8>(), len) };
            Ok(())
        })
    }

    fn host_callback(&self, callback: HostCallback) -> Result<()> {
        self.enqueue(callback)
    }

    fn run_host_callback_and_wait(&self, callback: HostCallback) -> Result<()> {
        let mut callback = Some(callback);
        let ran = self.run_on_caller_if_idle(&mut || match callback.take() {
            Some(callback) => callback(),
            None => Ok(()),
        });
        if let Some(result) = ran {
            return result;
        }
        match callback {
            Some(callback) => {
                self.host_callback(callback)?;
                self.block_host_until_done()
            }
            None => Err(Error::internal(
                "a stream's callback ran but reported nothing",
            )),
        }
    }

    fn run_on_caller_if_idle(&self, work: &mut dyn FnMut() -> Result<()>) -> Option<Result<()>> {
        // A stream's own thread is never idle while it runs something.
        if self.is_worker_thread() {
            return None;
        }
        self.shared.run_on_caller_if_idle(work)
    }

    fn record_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = host_event(event)?;
        let generation = event.arm();
        self.push(Box::new(move |skipped| {
            event.fire(
                generation,
                if skipped {
                    EventStatus::Error
                } else {
                    EventStatus::Complete
                },
            );
            Ok(())
        }))
    }

    fn wait_for_event(&self, event: &Arc<dyn Event>) -> Result<()> {
        let event = host_event(event)?;
        self.enqueue(move || match event.wait() {
            EventStatus::Error => Err(Error::failed_precondition(
                "waited for an event whose stream failed before reaching it",
            )),
            _ => Ok(()),
        })
    }

    fn block_host_until_done(&self) -> Result<()> {
        if self.is_worker_thread() {
            return Err(Error::failed_precondition(
                "block_host_until_done called from the stream's own thread would wait forever",
            ));
        }
        let st = self.shared.lock();
        // An inline stream has run everything already, except perhaps the item
        // this call is made from, which must not wait for itself.
        let threaded = self.worker_id.is_some();
        let mut st = self
            .shared
            .wait_for_idle(st, |st| threaded && st.outstanding > 0);
        match st.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for HostStream {
    fn drop(&mut self) {
        {
            let mut st = self.shared.lock();
            st.shutdown = true;
        }
        self.shared.work_ready.notify_all();
        let handle = self.worker.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle {
            if !self.is_worker_thread() {
                let _ = handle.join();
            }
        }
    }
}

/// Checks that `event` is a [`HostEvent`] and keeps a handle to it.
fn host_event(event: &Arc<dyn Event>) -> Result<HostEventHandle> {
    if event.as_any().downcast_ref::<HostEvent>().is_none() {
        return Err(Error::invalid_argument(
            "the event was not created by a host-memory device of the kit",
        ));
    }
    Ok(HostEventHandle(event.clone()))
}

/// An `Arc<dyn Event>` known to hold a [`HostEvent`].
struct HostEventHandle(Arc<dyn Event>);

impl std::ops::Deref for HostEventHandle {
    type Target = HostEvent;
    fn deref(&self) -> &HostEvent {
        // Checked by `host_event` when the handle was made; the fallback is never
        // reached and keeps this free of panics.
        self.0
            .as_any()
            .downcast_ref::<HostEvent>()
            .unwrap_or(&UNREACHABLE_EVENT)
    }
}

static UNREACHABLE_EVENT: HostEvent = HostEvent::new();

#[derive(Debug)]
struct EventState {
    status: EventStatus,
    /// Incremented by every `record_event`; a marker completes the event only if
    /// no later recording has moved it.
    generation: u64,
    recorded: bool,
}

/// An event of a host stream.
pub struct HostEvent {
    state: Mutex<EventState>,
    changed: Condvar,
}

impl Default for HostEvent {
    fn default() -> Self {
        Self::new()
    }
}

impl HostEvent {
    pub const fn new() -> Self {
        HostEvent {
            state: Mutex::new(EventState {
                status: EventStatus::Pending,
                generation: 0,
                recorded: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, EventState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the event as recorded and pending; returns the marker's generation.
    fn arm(&self) -> u64 {
        let mut st = self.lock();
        st.generation += 1;
        st.recorded = true;
        st.status = EventStatus::Pending;
        st.generation
    }

    fn fire(&self, generation: u64, status: EventStatus) {
        let mut st = self.lock();
        if st.generation == generation {
            st.status = status;
            drop(st);
            self.changed.notify_all();
        }
    }

    /// Blocks until the event leaves `Pending` (at once if never recorded).
    fn wait(&self) -> EventStatus {
        let mut st = self.lock();
        if !st.recorded {
            return EventStatus::Complete;
        }
        while st.status == EventStatus::Pending {
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.status
    }
}

impl Event for HostEvent {
    fn status(&self) -> EventStatus {
        self.lock().status
    }

    fn synchronize(&self) -> Result<()> {
        match self.wait() {
            EventStatus::Error => Err(Error::failed_precondition(
                "the stream that recorded this event failed before reaching it",
            )),
            _ => Ok(()),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
