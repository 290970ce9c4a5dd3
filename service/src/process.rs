//! Process-wide settings a program that runs HLO repeatedly wants.
//!
//! Every execution hands its results back to the host in freshly allocated
//! literals, megabytes each. glibc's allocator serves blocks that large with
//! `mmap` and returns them to the kernel on free (or trims the top of its
//! heap), so the next execution's literal faults every page in again, and the
//! kernel zeroes each one: for a 16 MiB result that costs more than the
//! computation. [`retain_freed_memory`] tells glibc to keep freed memory in
//! its heap instead, as a server linking tcmalloc or jemalloc would. It is
//! opt-in because it belongs to whoever owns the process: `hlorun` calls it
//! first thing; a library embedding the service decides for itself.

/// Keeps memory freed by this process for reuse instead of returning it to
/// the kernel (glibc on Linux; elsewhere it does nothing). Returns whether
/// the allocator accepted the settings. Call it before the process allocates
/// anything large; the cost is a resident set that stays at its peak.
pub fn retain_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // glibc's `mallopt` parameters (malloc.h).
        const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
        const M_MMAP_MAX: std::ffi::c_int = -4;
        extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        // SAFETY: `mallopt` only changes allocator tunables; glibc documents
        // both parameters and accepts any non-negative value for them.
        unsafe {
            // Never shrink the heap; serve every size from the heap, not
            // from per-allocation mappings.
            mallopt(M_TRIM_THRESHOLD, std::ffi::c_int::MAX) == 1 && mallopt(M_MMAP_MAX, 0) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
