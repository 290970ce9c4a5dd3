//! Device-memory accounting ([`Ledger`]) and pinned host staging buffers
//! ([`PinnedBuffer`]).

use super::check;
use super::context::Context;
use cudarc::driver::sys;
use platform_api::{MemoryUsage, Result};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Arc;

/// The live allocations of one device: bytes in use, the peak, and how many
/// allocations are live, with the address → size map behind them (as the
/// host kit's ledger). Pure bookkeeping: no driver calls, so it is tested
/// without a GPU.
///
/// Zero-byte allocations are never recorded (they are null handles that own
/// nothing). An address recorded twice, or freed without having been
/// recorded, is refused (returns `false` / `None`) and leaves the counts alone.
#[derive(Debug, Default)]
pub struct Ledger {
    usage: MemoryUsage,
    live: BTreeMap<u64, u64>,
}

impl Ledger {
    /// Records a new allocation; `false` (nothing recorded) when `size` is 0
    /// or `addr` is already live.
    pub fn record_alloc(&mut self, addr: u64, size: u64) -> bool {
        if size == 0 || self.live.contains_key(&addr) {
            return false;
        }
        self.live.insert(addr, size);
        let u = &mut self.usage;
        u.bytes_in_use += size;
        u.peak_bytes_in_use = u.peak_bytes_in_use.max(u.bytes_in_use);
        u.live_allocations += 1;
        true
    }

    /// Forgets the allocation at `addr`, returning its size; `None` if it is
    /// not live.
    pub fn record_free(&mut self, addr: u64) -> Option<u64> {
        let size = self.live.remove(&addr)?;
        let u = &mut self.usage;
        u.bytes_in_use = u.bytes_in_use.saturating_sub(size);
        u.live_allocations = u.live_allocations.saturating_sub(1);
        Some(size)
    }

    /// The size of the live allocation at `addr`.
    pub fn size_of(&self, addr: u64) -> Option<u64> {
        self.live.get(&addr).copied()
    }

    pub fn usage(&self) -> MemoryUsage {
        self.usage
    }
}

/// Page-locked host memory from `cuMemHostAlloc`, for asynchronous copies.
///
/// # Lifecycle
/// Freed (`cuMemFreeHost`, context bound) on drop. Whoever enqueues a copy
/// from or to it must keep it alive until the stream has run that copy (the
/// stream keeps it with an event recorded after the copy).
pub struct PinnedBuffer {
    ctx: Arc<Context>,
    ptr: *mut c_void,
    len: usize,
}

// SAFETY: the buffer is plain host memory owned by this value; the driver
// calls on it are thread-safe once the context is bound.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above; shared access only reads the pointer.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    /// `len` (> 0) bytes of pinned memory in `ctx`.
    pub fn new(ctx: &Arc<Context>, len: usize) -> Result<PinnedBuffer> {
        ctx.bind()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the context is current.
        check("cuMemHostAlloc", unsafe {
            sys::cuMemHostAlloc(&mut ptr, len.max(1), 0)
        })?;
        Ok(PinnedBuffer {
            ctx: ctx.clone(),
            ptr,
            len,
        })
    }

    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `src` into the start of the buffer.
    pub fn fill_from(&mut self, src: &[u8]) {
        let n = src.len().min(self.len);
        // SAFETY: `ptr` is valid for `len` bytes and owned by `self`; `src` is
        // a separate host slice.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.cast::<u8>(), n) };
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let freed = self.ctx.bind().and_then(|()| {
            // SAFETY: `ptr` came from `cuMemHostAlloc` and is freed once; no
            // queued copy uses it any more (the owner's contract).
            check("cuMemFreeHost", unsafe { sys::cuMemFreeHost(self.ptr) })
        });
        if let Err(e) = freed {
            super::context::log_error(&e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_tracks_in_use_peak_and_live() {
        let mut l = Ledger::default();
        assert!(l.record_alloc(0x1000, 100));
        assert!(l.record_alloc(0x2000, 50));
        assert!(!l.record_alloc(0x2000, 50), "same address twice");
        assert!(!l.record_alloc(0x3000, 0), "empty allocations are not live");
        let u = l.usage();
        assert_eq!(
            (u.bytes_in_use, u.peak_bytes_in_use, u.live_allocations),
            (150, 150, 2)
        );
        assert_eq!(l.record_free(0x1000), Some(100));
        assert_eq!(l.record_free(0x1000), None, "double free is refused");
        assert_eq!(l.record_free(0x9999), None);
        assert!(l.record_alloc(0x4000, 10));
        let u = l.usage();
        assert_eq!(
            (u.bytes_in_use, u.peak_bytes_in_use, u.live_allocations),
            (60, 150, 2)
        );
        assert_eq!(l.size_of(0x4000), Some(10));
    }
}
