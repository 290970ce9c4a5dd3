//! [`InterpreterExecutor`]: one interpreter "device", whose memory is host memory.
//!
//! Allocations come straight from the global allocator, 64-byte aligned (the
//! alignment XLA's CPU runtime promises custom calls), and are recorded in a
//! table keyed by address. The table is what makes [`StreamExecutor::memory_usage`]
//! exact and lets [`StreamExecutor::deallocate`] refuse a pointer it never handed
//! out instead of corrupting the heap. Streams run their work inline (see
//! [`crate::stream`]), so "synchronising all activity" has nothing to wait for.

use crate::stream::{InlineEvent, InlineStream};
use platform_api::{
    DeviceDescription, DeviceMemoryBase, Error, Event, MemoryUsage, Result, Stream, StreamExecutor,
};
use std::alloc::Layout;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Alignment of every allocation.
pub const ALLOCATION_ALIGNMENT: usize = 64;

/// Live allocations and the counters derived from them.
#[derive(Default)]
struct Ledger {
    /// Address → size of every live allocation.
    live: HashMap<usize, usize>,
    bytes_in_use: u64,
    peak_bytes_in_use: u64,
}

/// One device of the interpreter platform.
pub struct InterpreterExecutor {
    platform_id: &'static str,
    ordinal: usize,
    ledger: Mutex<Ledger>,
}

impl InterpreterExecutor {
    pub fn new(platform_id: &'static str, ordinal: usize) -> Self {
        InterpreterExecutor {
            platform_id,
            ordinal,
            ledger: Mutex::new(Ledger::default()),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        // A panic while holding the lock cannot leave the ledger half-updated in a
        // way that matters more than losing the counters, so recover the guard.
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation of this executor.
    pub fn owns_range(&self, addr: usize, len: usize) -> bool {
        if len == 0 {
            return true;
        }
        let ledger = self.ledger();
        // Allocations are few per execution; a linear scan keeps the table simple.
        ledger.live.iter().any(|(&start, &size)| {
            addr >= start && addr.checked_add(len).is_some_and(|end| end <= start + size)
        })
    }
}

impl StreamExecutor for InterpreterExecutor {
    fn platform_id(&self) -> &'static str {
        self.platform_id
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn description(&self) -> DeviceDescription {
        DeviceDescription {
            name: "Interpreter".to_string(),
            memory_bytes: 0,
            core_count: 1,
            details: vec!["evaluates HLO one instruction at a time on host memory".to_string()],
        }
    }

    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        if size == 0 {
            return Ok(DeviceMemoryBase::NULL);
        }
        let layout = Layout::from_size_align(size, ALLOCATION_ALIGNMENT)
            .map_err(|e| Error::resource_exhausted(format!("cannot allocate {size} bytes: {e}")))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(Error::resource_exhausted(format!(
                "the host allocator could not provide {size} bytes for interpreter device {}",
                self.ordinal
            )));
        }
        let mut ledger = self.ledger();
        ledger.live.insert(ptr as usize, size);
        ledger.bytes_in_use += size as u64;
        ledger.peak_bytes_in_use = ledger.peak_bytes_in_use.max(ledger.bytes_in_use);
        Ok(DeviceMemoryBase::new(ptr.cast(), size))
    }

    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        if mem.is_null() {
            return;
        }
        let addr = mem.opaque as usize;
        let size = {
            let mut ledger = self.ledger();
            let Some(size) = ledger.live.remove(&addr) else {
                tracing::error!(
                    "interpreter device {}: ignoring deallocation of {addr:#x}, which it did not allocate or already freed",
                    self.ordinal
                );
                return;
            };
            ledger.bytes_in_use -= size as u64;
            size
        };
        // SAFETY: the ledger proves this address came from `allocate` with this size
        // and alignment, and removing it guarantees it is freed once.
        unsafe {
            std::alloc::dealloc(
                mem.opaque.cast(),
                Layout::from_size_align_unchecked(size, ALLOCATION_ALIGNMENT),
            )
        }
    }

    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        Ok(Arc::new(InlineStream::new(self)))
    }

    fn create_event(self: Arc<Self>) -> Result<Arc<dyn Event>> {
        Ok(Arc::new(InlineEvent::default()))
    }

    fn synchronize_all_activity(&self) -> Result<()> {
        // Every stream runs its work in the enqueueing call: nothing is pending.
        Ok(())
    }

    fn memory_usage(&self) -> MemoryUsage {
        let ledger = self.ledger();
        MemoryUsage {
            bytes_in_use: ledger.bytes_in_use,
            peak_bytes_in_use: ledger.peak_bytes_in_use,
            live_allocations: ledger.live.len() as u64,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for InterpreterExecutor {
    fn drop(&mut self) {
        // Allocations hold an `Arc` to their executor, so none can be live here;
        // free defensively anyway rather than leak.
        let ledger = self.ledger.get_mut().unwrap_or_else(|p| p.into_inner());
        for (addr, size) in ledger.live.drain() {
            // SAFETY: as in `deallocate`.
            unsafe {
                std::alloc::dealloc(
                    addr as *mut u8,
                    Layout::from_size_align_unchecked(size, ALLOCATION_ALIGNMENT),
                )
            }
        }
    }
}
