//! [`HostExecutor`]: one host "device": aligned heap memory with accounting, and
//! the streams and events on it.

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

/// One host device.
pub struct HostExecutor {
    ordinal: usize,
    usage: Mutex<MemoryUsage>,
    /// The streams created on this device, for `synchronize_all_activity`.
    streams: Mutex<Vec<Weak<StreamShared>>>,
}

impl HostExecutor {
    pub fn new(ordinal: usize) -> Self {
        HostExecutor {
            ordinal,
            usage: Mutex::new(MemoryUsage::default()),
            streams: Mutex::new(Vec::new()),
        }
    }

    fn layout(size: usize) -> Result<Layout> {
        Layout::from_size_align(size, ALIGNMENT).map_err(|_| {
            Error::resource_exhausted(format!("cannot allocate {size} bytes on the host"))
        })
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
            let layout = Self::layout(size)?;
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
        if let Ok(mut u) = self.usage.lock() {
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
        if mem.size > 0 {
            if let Ok(layout) = Self::layout(mem.size) {
                // SAFETY: the caller guarantees `mem` came from `allocate` with this
                // size (hence this layout) and is freed once.
                unsafe { std::alloc::dealloc(mem.opaque.cast(), layout) };
            }
        }
        if let Ok(mut u) = self.usage.lock() {
            u.bytes_in_use = u.bytes_in_use.saturating_sub(mem.size as u64);
            u.live_allocations = u.live_allocations.saturating_sub(1);
        }
    }

    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        let stream = HostStream::new(self.clone())?;
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
        self.usage.lock().map(|u| *u).unwrap_or_default()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
