//! `XlaCustomCallStatus`: how a target reports failure, and the two C functions
//! that set it.
//!
//! A status is created by the runtime for each call, in the success state, and
//! handed to the target as an opaque pointer. The target may call
//! [`XlaCustomCallStatusSetFailure`] (copying a message) or
//! [`XlaCustomCallStatusSetSuccess`]; when the call returns, a failure turns into
//! the execution's error and the outputs are discarded.
//!
//! Both functions are exported under their C names (`#[no_mangle]`), so a target
//! in a shared library reaches them without linking anything of ours: the
//! executable exports them to the dynamic linker (`-rdynamic`, see
//! `service/build.rs`). A linker drops functions nothing reaches, so
//! [`status_entry_points`] is read by `load_library` (the only way a library
//! target can come to exist), which keeps both alive in every program that can
//! load one; the `#[used]` table below is a second anchor.

use std::ffi::c_char;

/// The status a custom call reports through. Opaque to C: targets only ever
/// see a pointer and pass it to the status functions.
#[derive(Debug, Default)]
pub struct XlaCustomCallStatus {
    failure: Option<String>,
}

impl XlaCustomCallStatus {
    /// A fresh status, in the success state (as XLA creates them).
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the call as failed with `message` (the Rust counterpart of
    /// [`XlaCustomCallStatusSetFailure`]).
    pub fn set_failure(&mut self, message: impl Into<String>) {
        self.failure = Some(message.into());
    }

    /// Marks the call as succeeded, forgetting any earlier failure.
    pub fn set_success(&mut self) {
        self.failure = None;
    }

    /// The failure message, if the target reported one.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

/// Sets `status` to success. A null `status` is ignored.
///
/// # Safety
/// `status` is null or the pointer the runtime passed to the running target.
#[no_mangle]
pub unsafe extern "C" fn XlaCustomCallStatusSetSuccess(status: *mut XlaCustomCallStatus) {
    // SAFETY: the caller passes the live status the runtime handed it, or null.
    if let Some(status) = unsafe { status.as_mut() } {
        status.set_success();
    }
}

/// Sets `status` to failure with a copy of `message`: its first `message_len`
/// bytes, or up to its first NUL byte if that comes earlier (as XLA copies it).
/// Bytes that are not UTF-8 are replaced with U+FFFD. A null `status` is
/// ignored; a null `message` gives an empty message.
///
/// # Safety
/// `status` is null or the pointer the runtime passed to the running target;
/// `message` is null or points to at least `message_len` readable bytes (or to a
/// NUL-terminated string shorter than that).
#[no_mangle]
pub unsafe extern "C" fn XlaCustomCallStatusSetFailure(
    status: *mut XlaCustomCallStatus,
    message: *const c_char,
    message_len: usize,
) {
    // SAFETY: the caller passes the live status the runtime handed it, or null.
    let Some(status) = (unsafe { status.as_mut() }) else {
        return;
    };
    let text = if message.is_null() {
        String::new()
    } else {
        // SAFETY: the caller guarantees `message_len` readable bytes or a NUL
        // before them; we read no further than the first of the two.
        let bytes = unsafe { bytes_until_nul(message.cast::<u8>(), message_len) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    status.set_failure(text);
}

/// The first `len` bytes at `ptr`, cut at the first NUL.
///
/// # Safety
/// As for [`XlaCustomCallStatusSetFailure`]'s `message`.
unsafe fn bytes_until_nul<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    let mut n = 0;
    // SAFETY: every byte read is before `len` and before the first NUL.
    while n < len && unsafe { *ptr.add(n) } != 0 {
        n += 1;
    }
    // SAFETY: the `n` bytes just read are readable.
    unsafe { std::slice::from_raw_parts(ptr, n) }
}

type SetSuccessFn = unsafe extern "C" fn(*mut XlaCustomCallStatus);
type SetFailureFn = unsafe extern "C" fn(*mut XlaCustomCallStatus, *const c_char, usize);

/// Keeps both status functions in the object code even when nothing else in the
/// final program names them.
#[used]
static STATUS_ENTRY_POINTS: (SetSuccessFn, SetFailureFn) =
    (XlaCustomCallStatusSetSuccess, XlaCustomCallStatusSetFailure);

/// The addresses of the two exported status functions. Reading them (through
/// `black_box`) from a function the program really calls is what guarantees the
/// linker keeps them for libraries to bind to.
pub(crate) fn status_entry_points() -> [usize; 2] {
    let (success, failure) = std::hint::black_box(STATUS_ENTRY_POINTS);
    [success as usize, failure as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_copies_up_to_len_or_nul() {
        let mut status = XlaCustomCallStatus::new();
        let msg = b"bad input\0ignored";
        unsafe { XlaCustomCallStatusSetFailure(&mut status, msg.as_ptr().cast(), msg.len()) };
        assert_eq!(status.failure(), Some("bad input"));
        unsafe { XlaCustomCallStatusSetFailure(&mut status, msg.as_ptr().cast(), 3) };
        assert_eq!(status.failure(), Some("bad"));
        unsafe { XlaCustomCallStatusSetSuccess(&mut status) };
        assert_eq!(status.failure(), None);
    }

    #[test]
    fn null_pointers_are_harmless() {
        unsafe { XlaCustomCallStatusSetFailure(std::ptr::null_mut(), std::ptr::null(), 4) };
        unsafe { XlaCustomCallStatusSetSuccess(std::ptr::null_mut()) };
        let mut status = XlaCustomCallStatus::new();
        unsafe { XlaCustomCallStatusSetFailure(&mut status, std::ptr::null(), 4) };
        assert_eq!(status.failure(), Some(""));
        assert!(status_entry_points().iter().all(|&a| a != 0));
    }
}
