//! The Host's device: the kit's [`HostDevice`] with threaded streams, copies
//! of a megabyte or more split over the compute pool, and a description of
//! this machine's CPU.

use super::pool;
use crate::PLATFORM_NAME;
use platform_api::kit::{HostDevice, HostDeviceConfig, StreamMode};
use platform_api::DeviceDescription;

/// One host device (the kit's device, configured for the Host).
pub type HostExecutor = HostDevice;

/// The Host's device configuration.
pub fn config() -> HostDeviceConfig {
    HostDeviceConfig {
        platform_id: PLATFORM_NAME,
        describe,
        streams: StreamMode::Threaded,
        // Kernels and transfers address sub-ranges and other devices' buffers
        // through the same pointers; the range lookup would only cost time.
        strict_ranges: false,
        copy: parallel_copy,
    }
}

fn describe(ordinal: usize) -> DeviceDescription {
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
    let cores = pool::core_count();
    DeviceDescription {
        name: format!("Host CPU ({cores} cores), device {ordinal}"),
        memory_bytes: 0,
        core_count: cores,
        details,
    }
}

/// Copies of at least this many bytes are split over the compute pool: one
/// core does not saturate memory bandwidth, and results of several megabytes
/// come back to the host after every execution.
const PARALLEL_COPY_MIN: usize = 1 << 20;

/// `copy_nonoverlapping` of `len` bytes, split into cache-line-aligned chunks
/// on the compute pool when it is large.
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`: `src` readable and `dst` writable for
/// `len` bytes, not overlapping.
unsafe fn parallel_copy(src: *const u8, dst: *mut u8, len: usize) {
    if len < PARALLEL_COPY_MIN {
        // SAFETY: forwarded.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    const CHUNK: usize = 256 << 10;
    let (s, d) = (src as usize, dst as usize);
    pool::parallel_for(len.div_ceil(CHUNK), 1, |from, to| {
        let start = from * CHUNK;
        let end = (to * CHUNK).min(len);
        // SAFETY: disjoint sub-ranges of the caller's ranges.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (s + start) as *const u8,
                (d + start) as *mut u8,
                end - start,
            )
        };
    });
}
