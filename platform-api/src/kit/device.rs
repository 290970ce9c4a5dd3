//! [`HostDevice`]: a [`StreamExecutor`] whose memory is host memory, and
//! [`HostDevices`], a [`Platform`] of several of them.
//!
//! The device is configured, not subclassed: a backend says its platform id,
//! how to describe a device, whether streams run inline or on threads, whether
//! copies check their ranges against the ledger, and how large copies are done
//! ([`HostDeviceConfig`]). Everything else — the ledger, deferred frees, the
//! block cache, streams and events — is the kit's.

use super::memory::HostMemory;
use super::stream::{copy_bytes, CopyFn, HostEvent, HostStream, StreamMode, StreamShared};
use crate::{
    DeviceDescription, DeviceMemoryBase, Error, Event, MemoryUsage, Platform, Result, Stream,
    StreamExecutor,
};
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What makes one backend's host-memory device its own.
#[derive(Clone, Debug)]
pub struct HostDeviceConfig {
    /// The platform's registered name (what `StreamExecutor::platform_id` says).
    pub platform_id: &'static str,
    /// Describes device `ordinal`.
    pub describe: fn(ordinal: usize) -> DeviceDescription,
    pub streams: StreamMode,
    /// Copies check that their ranges lie in live allocations of the device
    /// (an error instead of a wild read or write; a reference backend wants
    /// it, a fast one may skip the lookup).
    pub strict_ranges: bool,
    /// How streams copy bytes.
    pub copy: CopyFn,
}

impl HostDeviceConfig {
    /// Inline streams, strict ranges, plain copies: the simplest correct device.
    pub fn inline(platform_id: &'static str, describe: fn(usize) -> DeviceDescription) -> Self {
        HostDeviceConfig {
            platform_id,
            describe,
            streams: StreamMode::Inline,
            strict_ranges: true,
            copy: copy_bytes,
        }
    }
}

/// One device whose memory is host memory.
pub struct HostDevice {
    config: HostDeviceConfig,
    ordinal: usize,
    memory: Arc<HostMemory>,
    /// The streams created on this device, for `synchronize_all_activity` and
    /// deferred frees.
    streams: Mutex<Vec<Weak<StreamShared>>>,
    streams_created: AtomicU64,
}

impl HostDevice {
    pub fn new(config: HostDeviceConfig, ordinal: usize) -> Self {
        HostDevice {
            config,
            ordinal,
            memory: Arc::new(HostMemory::default()),
            streams: Mutex::new(Vec::new()),
            streams_created: AtomicU64::new(0),
        }
    }

    /// How many streams were ever created on this device (clients pool
    /// streams; this shows whether they do).
    pub fn streams_created(&self) -> u64 {
        self.streams_created.load(Ordering::Relaxed)
    }

    /// The device's allocations.
    pub fn memory(&self) -> &HostMemory {
        &self.memory
    }

    /// The streams with unfinished work, each with the number of items it
    /// has been given (what a free must wait for); empty, without
    /// allocating, when every stream is idle.
    fn busy_streams(&self) -> Vec<(Weak<StreamShared>, u64)> {
        let mut busy = Vec::new();
        if let Ok(streams) = self.streams.lock() {
            for weak in streams.iter() {
                // (Should this be the last handle, the stream's drop takes
                // no lock of this device: its queue is empty by then.)
                if let Some(s) = weak.upgrade() {
                    let (enqueued, completed) = s.progress();
                    if completed < enqueued {
                        busy.push((weak.clone(), enqueued));
                    }
                }
            }
        }
        busy
    }

    fn live_streams(&self) -> Vec<Arc<StreamShared>> {
        match self.streams.lock() {
            Ok(s) => s.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => Vec::new(),
        }
    }
}

impl StreamExecutor for HostDevice {
    fn platform_id(&self) -> &'static str {
        self.config.platform_id
    }

    fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn description(&self) -> DeviceDescription {
        (self.config.describe)(self.ordinal)
    }

    fn allocate(&self, size: usize) -> Result<DeviceMemoryBase> {
        let (id, ordinal) = (self.config.platform_id, self.ordinal);
        self.memory
            .allocate(size, &format_args!("{id} device {ordinal}"))
    }

    unsafe fn deallocate(&self, mem: DeviceMemoryBase) {
        if mem.is_null() {
            return;
        }
        // Streams with unfinished work may still use the buffer: free it once
        // each has finished what it had been given.
        let waits = self.busy_streams();
        // SAFETY: the caller gives the memory up; queued users are waited for.
        unsafe { self.memory.free_after(mem, waits) };
    }

    fn create_stream(self: Arc<Self>) -> Result<Arc<dyn Stream>> {
        let c = &self.config;
        let (mode, strict, copy) = (c.streams, c.strict_ranges, c.copy);
        let stream = HostStream::new(self.clone(), self.memory.clone(), mode, strict, copy)?;
        self.streams_created.fetch_add(1, Ordering::Relaxed);
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
        for s in self.live_streams() {
            s.wait_idle();
        }
        Ok(())
    }

    fn memory_usage(&self) -> MemoryUsage {
        self.memory.usage()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A platform of `n` [`HostDevice`]s with one configuration.
pub struct HostDevices {
    id: &'static str,
    devices: Vec<Arc<HostDevice>>,
}

impl HostDevices {
    /// `count` devices (0 is an error: a platform has at least one).
    pub fn new(config: HostDeviceConfig, count: usize) -> Result<Self> {
        if count == 0 {
            return Err(Error::invalid_argument(format!(
                "the {} platform needs at least one device (device_count was 0)",
                config.platform_id
            )));
        }
        Ok(HostDevices {
            id: config.platform_id,
            devices: (0..count)
                .map(|i| Arc::new(HostDevice::new(config.clone(), i)))
                .collect(),
        })
    }

    /// Device `ordinal`, typed.
    pub fn device(&self, ordinal: usize) -> Result<&Arc<HostDevice>> {
        self.devices.get(ordinal).ok_or_else(|| {
            Error::out_of_range(format!(
                "the {} platform has {} device(s); device {ordinal} was asked for",
                self.id,
                self.devices.len()
            ))
        })
    }
}

impl Platform for HostDevices {
    fn id(&self) -> &'static str {
        self.id
    }

    fn device_count(&self) -> usize {
        self.devices.len()
    }

    fn executor(&self, ordinal: usize) -> Result<Arc<dyn StreamExecutor>> {
        Ok(self.device(ordinal)?.clone())
    }
}
