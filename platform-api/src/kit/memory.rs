//! [`HostMemory`]: a device's host-memory allocator with a ledger.
//!
//! # Ledger
//! Every live allocation is recorded (address and size), so the device can
//! say how much is in use, the peak and the number of live allocations, free
//! exactly what it handed out (an unknown or repeated free is logged and
//! ignored, never passed to the system allocator), and check that a copy's
//! range lies inside memory it owns ([`HostMemory::owns`]).
//!
//! # Deferred frees
//! A buffer may be dropped while stream work that uses it is still queued (a
//! transfer whose destination is discarded because the execution it fed was
//! rejected, a result dropped before the stream ran). Freeing it at once would
//! let that work write freed memory. So a free names, for every stream of the
//! device with unfinished work, how many items had been enqueued, and the
//! memory is released only once each of those streams has finished that many
//! items (checked whenever a stream finishes an item and on every
//! deallocation). With no unfinished work anywhere the memory is freed at once.
//!
//! # Block cache
//! Fresh memory is zero-filled, which for a large block means the operating
//! system maps and faults in every page on first touch (several milliseconds
//! per hundred megabytes) and unmaps it again on free. Executions allocate the
//! same result sizes run after run, so freed blocks of at least
//! [`CACHED_MIN_BYTES`] are kept (up to [`CACHE_LIMIT_BYTES`] in all, oldest
//! evicted first) and handed out again for a request of the same size class
//! (sizes rounded up to a sixteenth of their power of two). A reused block
//! holds the bytes it last held: memory is never uninitialised, but only fresh
//! memory is zero. Cached blocks are not counted as in use.
//!
//! Smaller blocks are kept too, in a cache of their own of exact sizes (up to
//! [`SMALL_CACHE_BLOCKS`] blocks and [`SMALL_CACHE_LIMIT_BYTES`]): a small
//! program run again and again allocates and frees the same few result sizes,
//! and the system allocator's aligned, zeroed allocation of a few kilobytes
//! (with the free-list consolidation it triggers) cost more than the rest of
//! such a launch.

use super::stream::StreamShared;
use crate::{DeviceMemoryBase, Error, MemoryUsage, Result};
use std::alloc::Layout;
use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::{Mutex, MutexGuard, Weak};

/// Alignment of every host allocation: a cache line, and enough for any SIMD load.
pub const ALIGNMENT: usize = 64;

/// Blocks smaller than this go straight back to the system allocator.
pub const CACHED_MIN_BYTES: usize = 64 << 10;

/// Most bytes the block cache of one device keeps.
pub const CACHE_LIMIT_BYTES: usize = 1 << 30;

/// Most bytes the cache of small blocks (below [`CACHED_MIN_BYTES`]) keeps.
pub const SMALL_CACHE_LIMIT_BYTES: usize = 1 << 20;

/// Most blocks the cache of small blocks keeps (a request scans them).
pub const SMALL_CACHE_BLOCKS: usize = 32;

/// The bytes actually reserved for a request of `size` bytes: large requests
/// round up to a size class (a sixteenth of their power of two, at least a
/// page) so that blocks of nearly equal sizes are interchangeable.
fn reserved_bytes(size: usize) -> usize {
    if size < CACHED_MIN_BYTES {
        return size;
    }
    let step = (size.next_power_of_two() / 16).max(4096);
    size.div_ceil(step).saturating_mul(step)
}

/// A free waiting for streams to get past the work enqueued before it.
struct PendingFree {
    ptr: usize,
    size: usize,
    waits: Vec<(Weak<StreamShared>, u64)>,
}

/// The allocations of one device, and its deferred frees; shared with the
/// device's streams.
pub struct HostMemory {
    ledger: Mutex<Ledger>,
    pending: Mutex<Vec<PendingFree>>,
    cache: Mutex<BlockCache>,
    small: Mutex<BlockCache>,
}

impl Default for HostMemory {
    fn default() -> Self {
        HostMemory {
            ledger: Mutex::default(),
            pending: Mutex::default(),
            cache: Mutex::new(BlockCache::new(CACHE_LIMIT_BYTES, usize::MAX)),
            small: Mutex::new(BlockCache::new(SMALL_CACHE_LIMIT_BYTES, SMALL_CACHE_BLOCKS)),
        }
    }
}

#[derive(Default)]
struct Ledger {
    usage: MemoryUsage,
    /// Address -> size of every live non-empty allocation.
    live: BTreeMap<usize, usize>,
}

/// Freed blocks kept for reuse: (reserved bytes, address), oldest first.
struct BlockCache {
    blocks: Vec<(usize, usize)>,
    bytes: usize,
    limit_bytes: usize,
    limit_blocks: usize,
}

impl BlockCache {
    fn new(limit_bytes: usize, limit_blocks: usize) -> Self {
        BlockCache {
            blocks: Vec::new(),
            bytes: 0,
            limit_bytes,
            limit_blocks,
        }
    }

    /// The cache that keeps blocks of `reserved` bytes.
    fn of(memory: &HostMemory, reserved: usize) -> &Mutex<BlockCache> {
        if reserved >= CACHED_MIN_BYTES {
            &memory.cache
        } else {
            &memory.small
        }
    }

    /// A kept block of exactly `reserved` bytes, the most recently freed
    /// (warmest in cache) first.
    fn take(&mut self, reserved: usize) -> Option<usize> {
        let i = self.blocks.iter().rposition(|&(r, _)| r == reserved)?;
        let (_, ptr) = self.blocks.remove(i);
        self.bytes -= reserved;
        Some(ptr)
    }

    /// Keeps a block; returns the blocks evicted to stay under the limit (the
    /// block itself when it alone exceeds it).
    fn put(&mut self, reserved: usize, ptr: usize) -> Vec<(usize, usize)> {
        if reserved > self.limit_bytes || self.limit_blocks == 0 {
            return vec![(reserved, ptr)];
        }
        let mut evicted = Vec::new();
        while (self.bytes + reserved > self.limit_bytes || self.blocks.len() >= self.limit_blocks)
            && !self.blocks.is_empty()
        {
            let (r, p) = self.blocks.remove(0);
            self.bytes -= r;
            evicted.push((r, p));
        }
        self.blocks.push((reserved, ptr));
        self.bytes += reserved;
        evicted
    }
}

impl HostMemory {
    fn layout(size: usize) -> Result<Layout> {
        Layout::from_size_align(size, ALIGNMENT).map_err(|_| {
            Error::resource_exhausted(format!("cannot allocate {size} bytes on the host"))
        })
    }

    /// Returns a block of `reserved` bytes to the system allocator.
    fn release(ptr: usize, reserved: usize) {
        if let Ok(layout) = Self::layout(reserved) {
            // SAFETY: `ptr` came from `alloc_zeroed` with this layout and is
            // released exactly once (it left the pending list and the cache, or
            // never entered them).
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }

    /// A block of `reserved` bytes: a cached one, else fresh zeroed memory.
    fn obtain(&self, reserved: usize) -> *mut u8 {
        let cache = BlockCache::of(self, reserved);
        if let Some(p) = cache.lock().ok().and_then(|mut c| c.take(reserved)) {
            return p as *mut u8;
        }
        match Self::layout(reserved) {
            // SAFETY: `reserved` is non-zero (callers handle empty requests).
            Ok(layout) => unsafe { std::alloc::alloc_zeroed(layout) },
            Err(_) => std::ptr::null_mut(),
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        // The ledger is updated in small steps that cannot panic halfway.
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A non-null, suitably aligned address standing for an empty allocation.
    fn empty_address() -> *mut u8 {
        std::ptr::without_provenance_mut(ALIGNMENT)
    }

    /// `size` bytes, [`ALIGNMENT`]-aligned: zero when fresh, or a cached block.
    /// `device` names the device in the out-of-memory error.
    pub fn allocate(
        &self,
        size: usize,
        device: &dyn std::fmt::Display,
    ) -> Result<DeviceMemoryBase> {
        let ptr = if size == 0 {
            Self::empty_address()
        } else {
            let reserved = reserved_bytes(size);
            Self::layout(reserved)?;
            let p = self.obtain(reserved);
            if p.is_null() {
                return Err(Error::resource_exhausted(format!(
                    "{device}: out of memory allocating {size} bytes"
                )));
            }
            p
        };
        let mut ledger = self.ledger();
        if size > 0 {
            ledger.live.insert(ptr as usize, size);
        }
        let u = &mut ledger.usage;
        u.bytes_in_use += size as u64;
        u.peak_bytes_in_use = u.peak_bytes_in_use.max(u.bytes_in_use);
        u.live_allocations += 1;
        Ok(DeviceMemoryBase::new(ptr.cast(), size))
    }

    /// Frees `mem` once every stream in `waits` has finished the number of
    /// items given with it (at once when `waits` is empty). Memory this
    /// ledger does not hold is logged and left alone.
    ///
    /// # Safety
    /// Nothing may use `mem` after the streams in `waits` have passed their
    /// counts (or at all, when `waits` is empty).
    pub unsafe fn free_after(&self, mem: DeviceMemoryBase, waits: Vec<(Weak<StreamShared>, u64)>) {
        let not_live = || {
            tracing::error!(
                "ignoring a free of {:p} ({} bytes): not a live allocation of this device",
                mem.opaque,
                mem.size
            )
        };
        if waits.is_empty() {
            if !self.free_now(mem.opaque as usize, mem.size) {
                not_live();
            }
            return;
        }
        if mem.size > 0 && self.ledger().live.get(&(mem.opaque as usize)) != Some(&mem.size) {
            not_live();
            return;
        }
        if let Ok(mut pending) = self.pending.lock() {
            pending.push(PendingFree {
                ptr: mem.opaque as usize,
                size: mem.size,
                waits,
            });
        }
        // A stream may have finished between the caller's snapshot and the push.
        self.process_deferred_frees();
    }

    /// Whether `[addr, addr + len)` lies inside one live allocation (always
    /// for `len == 0`).
    pub fn owns(&self, addr: usize, len: usize) -> bool {
        if len == 0 {
            return true;
        }
        let ledger = self.ledger();
        ledger
            .live
            .range(..=addr)
            .next_back()
            .is_some_and(|(&start, &size)| {
                addr.checked_add(len).is_some_and(|end| end <= start + size)
            })
    }

    /// Bytes in use, peak, live allocations (after freeing what is ready).
    pub fn usage(&self) -> MemoryUsage {
        self.process_deferred_frees();
        self.ledger().usage
    }

    /// Frees the live allocation of `size` bytes at `ptr` at once; `false`,
    /// with nothing done, when there is none. One hold of the ledger's lock
    /// checks, removes and accounts.
    fn free_now(&self, ptr: usize, size: usize) -> bool {
        {
            let mut ledger = self.ledger();
            if size > 0 {
                match ledger.live.entry(ptr) {
                    Entry::Occupied(e) if *e.get() == size => e.remove(),
                    _ => return false,
                };
            }
            let u = &mut ledger.usage;
            u.bytes_in_use = u.bytes_in_use.saturating_sub(size as u64);
            u.live_allocations = u.live_allocations.saturating_sub(1);
        }
        if size > 0 {
            let reserved = reserved_bytes(size);
            let evicted = match BlockCache::of(self, reserved).lock() {
                Ok(mut c) => c.put(reserved, ptr),
                Err(_) => vec![(reserved, ptr)],
            };
            for (r, p) in evicted {
                Self::release(p, r);
            }
        }
        true
    }

    /// Frees every pending buffer whose streams have moved past it. Frees under
    /// the pending list's lock, so whoever takes that lock next sees the
    /// accounting already updated.
    pub fn process_deferred_frees(&self) {
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

impl Drop for HostMemory {
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
        for cache in [&mut self.cache, &mut self.small] {
            if let Ok(cache) = cache.get_mut() {
                for (r, p) in std::mem::take(&mut cache.blocks) {
                    Self::release(p, r);
                }
                cache.bytes = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_cover_the_request() {
        for size in [
            1usize,
            100,
            65535,
            65536,
            65537,
            1 << 20,
            (1 << 20) + 1,
            3_000_001,
        ] {
            let r = reserved_bytes(size);
            assert!(r >= size, "{size}");
            if size >= CACHED_MIN_BYTES {
                assert!(r - size <= size / 8 + 4096, "{size} -> {r}");
                assert_eq!(r % 4096, 0);
            } else {
                assert_eq!(r, size);
            }
        }
    }

    #[test]
    fn freed_large_blocks_are_reused_and_accounted() {
        let exec = HostMemory::default();
        let size = 1 << 20;
        let a = exec.allocate(size, &"test").unwrap();
        // Fresh memory is zero.
        let bytes = unsafe { std::slice::from_raw_parts_mut(a.opaque.cast::<u8>(), size) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(7);
        let addr = a.opaque;
        unsafe { exec.free_after(a, Vec::new()) };
        assert_eq!(exec.usage().bytes_in_use, 0);
        assert_eq!(exec.usage().live_allocations, 0);
        // Same size class: the same block, still holding its last bytes.
        let b = exec.allocate(size - 100, &"test").unwrap();
        assert_eq!(b.opaque, addr);
        assert_eq!(exec.usage().bytes_in_use, (size - 100) as u64);
        // A different class does not take it.
        let c = exec.allocate(4 * size, &"test").unwrap();
        assert_ne!(c.opaque, addr);
        unsafe {
            exec.free_after(b, Vec::new());
            exec.free_after(c, Vec::new());
        }
        assert_eq!(exec.usage().live_allocations, 0);
    }

    #[test]
    fn freed_small_blocks_are_reused_up_to_their_limits() {
        let exec = HostMemory::default();
        let a = exec.allocate(4096, &"test").unwrap();
        let addr = a.opaque;
        unsafe { exec.free_after(a, Vec::new()) };
        assert_eq!(exec.usage().live_allocations, 0);
        // The same size: the same block; another size: not it.
        let b = exec.allocate(4096, &"test").unwrap();
        assert_eq!(b.opaque, addr);
        let c = exec.allocate(4000, &"test").unwrap();
        assert_ne!(c.opaque, addr);
        assert_eq!(exec.usage().bytes_in_use, 8096);
        unsafe {
            exec.free_after(b, Vec::new());
            exec.free_after(c, Vec::new());
        }
        // At most SMALL_CACHE_BLOCKS blocks are kept, the oldest evicted.
        let many: Vec<_> = (0..SMALL_CACHE_BLOCKS + 4)
            .map(|i| exec.allocate(100 + i, &"test").unwrap())
            .collect();
        for m in many {
            unsafe { exec.free_after(m, Vec::new()) };
        }
        let small = exec.small.lock().unwrap();
        assert_eq!(small.blocks.len(), SMALL_CACHE_BLOCKS);
        assert_eq!(small.blocks[0].0, 104);
        assert!(small.bytes <= SMALL_CACHE_LIMIT_BYTES);
    }

    #[test]
    fn cache_evicts_oldest_beyond_its_limit() {
        let mut cache = BlockCache::new(CACHE_LIMIT_BYTES, usize::MAX);
        let big = CACHE_LIMIT_BYTES / 2;
        assert!(cache.put(big, 1).is_empty());
        assert!(cache.put(big, 2).is_empty());
        assert_eq!(cache.put(big, 3), vec![(big, 1)]);
        assert_eq!(
            cache.put(CACHE_LIMIT_BYTES + 1, 4),
            vec![(CACHE_LIMIT_BYTES + 1, 4)]
        );
        assert_eq!(cache.take(big), Some(3));
        assert_eq!(cache.take(big), Some(2));
        assert_eq!(cache.take(big), None);
        assert_eq!(cache.bytes, 0);
    }
}
