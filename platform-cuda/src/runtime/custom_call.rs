//! Calling custom-call targets with XLA's GPU ABI.
//!
//! Targets are found as every platform finds them
//! ([`platform_api::custom_call::resolve`]): the registry for platform
//! "CUDA" (static or run-time registrations), then the symbols of loaded
//! libraries. The call itself happens on the host, at enqueue time, with the
//! stream handle: the target enqueues its own work on it.

use crate::PLATFORM_NAME;
use platform_api::custom_call::{
    resolve, CuStream, GpuOriginalFn, GpuStatusReturningFn, Resolved, Target, XlaCustomCallStatus,
};
use platform_api::hlo::{CustomCallApiVersion, CustomCallAttrs, Op};
use platform_api::{Error, HloInstruction, Result, Shape};
use std::ffi::c_void;

/// A resolved GPU target, typed by its convention.
#[derive(Clone, Copy, Debug)]
pub enum GpuCallee {
    /// `void f(CUstream, void** buffers, const char* opaque, size_t opaque_len)`.
    Original(GpuOriginalFn),
    /// `void f(CUstream, void** buffers, const char* opaque, size_t opaque_len,
    /// XlaCustomCallStatus* status)`.
    StatusReturning(GpuStatusReturningFn),
}

/// A stand-in instruction so the shared resolver (which checks conventions
/// and lists registered targets in its errors) can be used by name.
fn stand_in(target: &str, api_version: CustomCallApiVersion) -> HloInstruction {
    let attrs = CustomCallAttrs::new(target, api_version);
    HloInstruction::new(
        target,
        Shape::tuple(Vec::new()),
        Op::CustomCall(Box::new(attrs)),
        Vec::new(),
    )
}

/// Finds `target` for "CUDA" with the convention `api_version` names. An
/// unknown target is `NotFound` naming it and the registered ones; typed
/// (`API_VERSION_TYPED_FFI`) and built-in targets are `Unimplemented` on
/// CUDA for now.
pub fn resolve_gpu_target(target: &str, api_version: CustomCallApiVersion) -> Result<GpuCallee> {
    let typed = || {
        Error::unimplemented(format!(
            "custom-call target \"{target}\": typed (API_VERSION_TYPED_FFI) and built-in targets \
             are not supported on {PLATFORM_NAME} yet"
        ))
    };
    if api_version == CustomCallApiVersion::TypedFfi {
        return Err(typed());
    }
    match resolve(PLATFORM_NAME, &stand_in(target, api_version))? {
        Resolved::Registered(Target::GpuOriginal(f)) => Ok(GpuCallee::Original(f)),
        Resolved::Registered(Target::GpuStatusReturning(f)) => Ok(GpuCallee::StatusReturning(f)),
        Resolved::Registered(Target::Typed(_) | Target::TypedClosure(_) | Target::Builtin(_)) => {
            Err(typed())
        }
        Resolved::Registered(other) => Err(Error::invalid_argument(format!(
            "custom-call target \"{target}\" is registered for {PLATFORM_NAME} as {other:?}, \
             not with a GPU convention"
        ))),
        Resolved::Symbol { address, .. } => Ok(symbol_callee(address, api_version)),
    }
}

/// A library symbol, called with the convention `api_version` names (the
/// library's author vouches for the signature, as in XLA).
fn symbol_callee(address: usize, api_version: CustomCallApiVersion) -> GpuCallee {
    let ptr = address as *const c_void;
    if api_version == CustomCallApiVersion::Original {
        // SAFETY: a non-null function symbol; the signature is the ABI the
        // instruction's api_version promises.
        GpuCallee::Original(unsafe { std::mem::transmute::<*const c_void, GpuOriginalFn>(ptr) })
    } else {
        // SAFETY: as above.
        GpuCallee::StatusReturning(unsafe {
            std::mem::transmute::<*const c_void, GpuStatusReturningFn>(ptr)
        })
    }
}

/// Calls `callee` with `stream`, a host array of the device pointers
/// `buffers`, and `opaque`; a failure it reports through its status becomes
/// an `Internal` error naming `target` and carrying its message.
///
/// # Safety
/// `stream` is a live stream whose context is current on this thread;
/// `buffers` are device pointers with the sizes the target expects.
pub unsafe fn call_gpu_target(
    target: &str,
    callee: GpuCallee,
    stream: CuStream,
    buffers: &[u64],
    opaque: &[u8],
) -> Result<()> {
    let mut pointers: Vec<*mut c_void> = buffers.iter().map(|&b| b as usize as *mut _).collect();
    let (opaque_ptr, opaque_len) = (opaque.as_ptr().cast(), opaque.len());
    match callee {
        // SAFETY: the ABI the target was registered or declared with; the
        // arrays outlive the call.
        GpuCallee::Original(f) => unsafe {
            f(stream, pointers.as_mut_ptr(), opaque_ptr, opaque_len)
        },
        GpuCallee::StatusReturning(f) => {
            let mut status = XlaCustomCallStatus::new();
            // SAFETY: as above; `status` outlives the call.
            unsafe {
                f(
                    stream,
                    pointers.as_mut_ptr(),
                    opaque_ptr,
                    opaque_len,
                    &mut status,
                )
            };
            if let Some(message) = status.failure() {
                return Err(Error::internal(format!(
                    "custom-call target \"{target}\" failed: {message}"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::custom_call::{register_target, XlaCustomCallStatusSetFailure};
    use platform_api::Code;

    unsafe extern "C" fn fails(
        _stream: CuStream,
        buffers: *mut *mut c_void,
        _opaque: *const std::ffi::c_char,
        _len: usize,
        status: *mut XlaCustomCallStatus,
    ) {
        // SAFETY: the test passes two entries.
        let second = unsafe { *buffers.add(1) } as usize;
        let msg = format!("second buffer {second:#x}");
        // SAFETY: live status; message bytes valid.
        unsafe { XlaCustomCallStatusSetFailure(status, msg.as_ptr().cast(), msg.len()) };
    }

    #[test]
    fn status_failures_and_unknown_targets_are_errors() {
        register_target(
            "cudart_test_fails",
            PLATFORM_NAME,
            Target::GpuStatusReturning(fails),
        )
        .unwrap();
        let callee =
            resolve_gpu_target("cudart_test_fails", CustomCallApiVersion::StatusReturning).unwrap();
        // No stream is needed: the target never touches it.
        let err = unsafe {
            call_gpu_target(
                "cudart_test_fails",
                callee,
                std::ptr::null_mut(),
                &[1, 0x20],
                b"",
            )
        }
        .unwrap_err();
        assert_eq!(err.code(), Code::Internal);
        assert!(
            err.message().contains("second buffer 0x20"),
            "{}",
            err.message()
        );

        let missing =
            resolve_gpu_target("cudart_no_such", CustomCallApiVersion::Original).unwrap_err();
        assert_eq!(missing.code(), Code::NotFound);
        assert!(
            missing.message().contains("cudart_no_such"),
            "{}",
            missing.message()
        );
        assert!(
            missing.message().contains("cudart_test_fails"),
            "{}",
            missing.message()
        );

        let typed =
            resolve_gpu_target("cudart_test_fails", CustomCallApiVersion::TypedFfi).unwrap_err();
        assert_eq!(typed.code(), Code::Unimplemented);
    }
}
