//! [`HostExecutor`]: one host "device": aligned heap memory with accounting, and
//! the streams and events on it.
//!
//! # Deferred frees
//! A buffer may be dropped while stream work that uses it is still queued (a
//! transfer whose destination is discarded because the execution it fed was
//! rejected, a result dropped before the stream ran). Freeing it at once would
//! let that work write freed memory. So `deallocate` notes, for every stream
//! of the device with unfinished work, how many items had been enqueued, and
//! frees the memory only once each of those streams has finished that many
//! items (checked whenever a stream finishes an item and on every
//! deallocation). With no unfinished work anywhere the memory is freed at once.

use super::stream::{HostEvent, HostStream, StreamShared};
use crate::PLATFORM_NAME;
use platform_api::{
    DeviceDescription, DeviceMemoryBase, Error, Event, MemoryUsage, Result, Stream, StreamExecutor,
};
use std::alloc::Layout;
use std::any::Any;
use std::sync::{Arc, Mutex, Weak};

/// Alignment of every host allocation: a cache line, and enough for any SIMD load.
pub const ALIGNMENT: usize = 64;

/// A free waiting for streams to get past the work enqueued before it.
struct PendingFree {
    ptr: usize,
    size: usize,
    waits: Vec<(Weak<StreamShared>, u64)>,
}

/// A device's memory accounting and its deferred frees, shared with its
/// streams.
#[derive(Default)]
pub struct MemoryState {
    usage: Mutex<MemoryUsage>,
    pending: Mutex<Vec<PendingFree>>,
}

impl MemoryState {
    fn layout(size: usize) -> Result<Layout> {
        Layout::from_size_align(size, ALIGNMENT).map_err(|_| {
            Error::resource_exhausted(format!("cannot allocate {size} bytes on the host"))
        })
    }

    fn free_now(&self, ptr: usize, size: usize) {
        if size > 0 {
            if let Ok(layout) = Self::layout(size) {
                // SAFETY: `ptr` came from `alloc_zeroed` with this layout and
                // is freed exactly once (it left the pending list, or never
                // entered it).
                unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
            }
        }
        if let Ok(mut u) = self.usage.lock() {
            u.bytes_in_use = u.bytes_in_use.saturating_sub(size as u64);
            u.live_allocations = u.live_allocations.saturating_sub(1);
        }
    }

    /// Frees every pending buffer whose streams have moved past it. Frees under
    /// the pending list's lock, so whoever takes that lock next sees the
    /// accounting already updated.
    pub(crate) fn process_deferred_frees(&self) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        if pending.is_empty() {
            return;
        }
        let (ready, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut *pending).into_iter().partition(|p| {
                p.waits.iter().all(|(stream, ticket)| {
                    stream.upgrade().is_none_or(|s| s.progress().1 >= *ticket)
                })
            });
        *pending = waiting;
        for p in ready {
            self.free_now(p.ptr, p.size);
        }
    }
}

impl Drop for MemoryState {
    fn drop(&mut self) {
        // Streams hold their executor alive, so none is left: free everything.
        let pending = self
            .pending
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        for p in pending {
            self.free_now(p.ptr, p.size);
        }
    }
}

/// One host device.
pub struct HostExecutor {
    ordinal: usize,
    memory: Arc<MemoryState>,
    /// The streams created on this device, for `synchronize_all_activity` and
    /// deferred frees.
    streams: Mutex<Vec<Weak<StreamShared>>>,
}

impl HostExecutor {
    pub fn new(ordinal: usize) -> Self {
        HostExecutor {
            ordinal,
            memory: Arc::new(MemoryState::default()),
            streams: Mutex::new(Vec::new()),
        }
    }

    /// A non-null, suitably aligned address standing for an empty allocation.
    fn empty_address() -> *mut u8 {
        std::ptr::without_provenance_mut(ALIGNMENT)
    }
}

impl StreamExecutor for HostExecutor {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn description(&self) -> DeviceDescription {
        let mut details = Vec::new();
        #[cfg(target_arch = "x86_64")]
        for (feature, present) in [
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ] {
            if present {
                details.push(feature.to_string());
            }
        }
        let cores = super::pool::core_count();
        DeviceDescription {
            name: format!("Host CPU ({cores} cores), device {}", self.ordinal),
            memory_bytes: 0,
            core_count: cores,
            details,
        }
    }

    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        let ptr = if size == 0 {
            Self::empty_address()
        } else {
            let layout = MemoryState::layout(size)?;
            // SAFETY: `layout` has a non-zero size.
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            if p.is_null() {
                return Err(Error::resource_exhausted(format!(
                    "host device {}: out of memory allocating {size} bytes",
                    self.ordinal
                )));
            }
            p
        };
        if let Ok(mut u) = self.memory.usage.lock() {
            u.bytes_in_use += size as u64;
            u.peak_bytes_in_use = u.peak_bytes_in_use.max(u.bytes_in_use);
            u.live_allocations += 1;
        }
        Ok(DeviceMemoryBase::new(ptr.cast(), size))
    }

    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        if mem.is_null() {
            return;
        }
        let live: Vec<Arc<StreamShared>> = match self.streams.lock() {
            Ok(s) => s.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => Vec::new(),
        };
        let waits: Vec<(Weak<StreamShared>, u64)> = live
            .iter()
            .filter_map(|s| {
                let (enqueued, completed) = s.progress();
                (completed < enqueued).then(|| (Arc::downgrade(s), enqueued))
            })
            .collect();
        drop(live);
        if waits.is_empty() {
            self.memory.free_now(mem.opaque as usize, mem.size);
            return;
        }
        if let Ok(mut pending) = self.memory.pending.lock() {
            pending.push(PendingFree {
                ptr: mem.opaque as usize,
                size: mem.size,
                waits,
            });
        }
        // A stream may have finished between the snapshot and the push.
        self.memory.process_deferred_frees();
    }

    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        let stream = HostStream::new(self.clone(), self.memory.clone())?;
        if let Ok(mut streams) = self.streams.lock() {
            streams.retain(|w| w.strong_count() > 0);
            streams.push(Arc::downgrade(stream.shared()));
        }
        Ok(Arc::new(stream))
    }

    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
        Ok(Arc::new(HostEvent::new()))
    }

    fn synchronize_all_activity(&self) -> Result<()> {
        let streams: Vec<Arc<StreamShared>> = match self.streams.lock() {
            Ok(s) => s.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => return Err(Error::internal("stream list lock poisoned")),
        };
        for s in streams {
            s.wait_idle();
        }
        Ok(())
    }

    fn memory_usage(&self) -> MemoryUsage {
        self.memory.process_deferred_frees();
        self.memory.usage.lock().map(|u| *u).unwrap_or_default()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
