//! XLA's custom-call calling conventions, as Rust function-pointer types, and the
//! rule that picks one from an instruction's `api_version`.
//!
//! The C spellings (what `include/xla_custom_call.h` declares):
//!
//! | convention | C signature |
//! | --- | --- |
//! | CPU, `API_VERSION_ORIGINAL` | `void f(void* out, const void** in)` |
//! | CPU, `API_VERSION_STATUS_RETURNING` | `void f(void* out, const void** in, XlaCustomCallStatus* status)` |
//! | CPU, `API_VERSION_STATUS_RETURNING_UNIFIED` | `void f(void* out, const void** in, const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)` |
//! | GPU, `API_VERSION_ORIGINAL` | `void f(CUstream stream, void** buffers, const char* opaque, size_t opaque_len)` |
//! | GPU, `API_VERSION_STATUS_RETURNING(_UNIFIED)` | `void f(CUstream stream, void** buffers, const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)` |
//! | `API_VERSION_TYPED_FFI` | this project's typed Rust API ([`super::typed`]) |
//!
//! On the CPU, `in[i]` points to operand `i`'s buffer, or for a tuple operand to
//! its table of element pointers (nested tuples are tables of tables); `out`
//! points to the result's buffer, or for a tuple result to its table. On the GPU,
//! `buffers` lists the operands' array leaves and then the result's, each in
//! preorder of its shape (the guide's newer edition: leaf buffers only).
//!
//! Which platforms take which family is decided by [`DeviceKind::of_platform`].

use super::status::XlaCustomCallStatus;
use crate::hlo::CustomCallApiVersion;
use crate::shape::Shape;
use std::ffi::{c_char, c_void};
use std::fmt;

/// CPU, `API_VERSION_ORIGINAL`: `void f(void* out, const void** in)`.
pub type CpuOriginalFn = unsafe extern "C" fn(out: *mut c_void, ins: *const *const c_void);

/// CPU, `API_VERSION_STATUS_RETURNING`:
/// `void f(void* out, const void** in, XlaCustomCallStatus* status)`.
pub type CpuStatusReturningFn = unsafe extern "C" fn(
    out: *mut c_void,
    ins: *const *const c_void,
    status: *mut XlaCustomCallStatus,
);

/// CPU, `API_VERSION_STATUS_RETURNING_UNIFIED`: `void f(void* out, const void**
/// in, const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)`.
pub type CpuStatusReturningUnifiedFn = unsafe extern "C" fn(
    out: *mut c_void,
    ins: *const *const c_void,
    opaque: *const c_char,
    opaque_len: usize,
    status: *mut XlaCustomCallStatus,
);

/// A CUDA stream handle (`CUstream`), as the driver API hands it out.
pub type CuStream = *mut c_void;

/// GPU, `API_VERSION_ORIGINAL`:
/// `void f(CUstream stream, void** buffers, const char* opaque, size_t opaque_len)`.
pub type GpuOriginalFn = unsafe extern "C" fn(
    stream: CuStream,
    buffers: *mut *mut c_void,
    opaque: *const c_char,
    opaque_len: usize,
);

/// GPU, `API_VERSION_STATUS_RETURNING` and `API_VERSION_STATUS_RETURNING_UNIFIED`
/// (the same signature on the GPU): `void f(CUstream stream, void** buffers,
/// const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)`.
pub type GpuStatusReturningFn = unsafe extern "C" fn(
    stream: CuStream,
    buffers: *mut *mut c_void,
    opaque: *const c_char,
    opaque_len: usize,
    status: *mut XlaCustomCallStatus,
);

/// Where a platform's custom calls run their code: on host buffers (CPU
/// conventions) or enqueueing work on a GPU stream (GPU conventions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Host,
    Gpu,
}

impl DeviceKind {
    /// "CUDA", "ROCM" and the alias "gpu" (any case) take GPU conventions; every
    /// other platform ("Host", "Interpreter", a plug-in's) takes CPU ones.
    pub fn of_platform(platform: &str) -> DeviceKind {
        if ["cuda", "rocm", "gpu"]
            .iter()
            .any(|g| platform.eq_ignore_ascii_case(g))
        {
            DeviceKind::Gpu
        } else {
            DeviceKind::Host
        }
    }
}

/// A calling convention: the signature a target was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Convention {
    CpuOriginal,
    CpuStatusReturning,
    CpuStatusReturningUnified,
    GpuOriginal,
    GpuStatusReturning,
    /// The typed Rust API (`API_VERSION_TYPED_FFI`), on any platform.
    Typed,
}

impl Convention {
    /// The convention an instruction with `api_version` calls its target with on
    /// a platform of kind `device`.
    pub fn for_api_version(api_version: CustomCallApiVersion, device: DeviceKind) -> Convention {
        use CustomCallApiVersion as V;
        match (device, api_version) {
            (_, V::TypedFfi) => Convention::Typed,
            (DeviceKind::Host, V::Original) => Convention::CpuOriginal,
            (DeviceKind::Host, V::StatusReturning) => Convention::CpuStatusReturning,
            (DeviceKind::Host, V::StatusReturningUnified) => Convention::CpuStatusReturningUnified,
            (DeviceKind::Gpu, V::Original) => Convention::GpuOriginal,
            (DeviceKind::Gpu, V::StatusReturning | V::StatusReturningUnified) => {
                Convention::GpuStatusReturning
            }
        }
    }

    /// Whether an instruction with `api_version` may call a target written with
    /// this convention (on the GPU, both status-returning versions share one).
    pub fn accepts(self, api_version: CustomCallApiVersion) -> bool {
        use CustomCallApiVersion as V;
        matches!(
            (self, api_version),
            (Convention::CpuOriginal, V::Original)
                | (Convention::CpuStatusReturning, V::StatusReturning)
                | (
                    Convention::CpuStatusReturningUnified,
                    V::StatusReturningUnified
                )
                | (Convention::GpuOriginal, V::Original)
                | (
                    Convention::GpuStatusReturning,
                    V::StatusReturning | V::StatusReturningUnified
                )
                | (Convention::Typed, V::TypedFfi)
        )
    }

    /// The platforms this convention serves.
    pub fn device(self) -> Option<DeviceKind> {
        match self {
            Convention::CpuOriginal
            | Convention::CpuStatusReturning
            | Convention::CpuStatusReturningUnified => Some(DeviceKind::Host),
            Convention::GpuOriginal | Convention::GpuStatusReturning => Some(DeviceKind::Gpu),
            Convention::Typed => None,
        }
    }

    /// The `api_version` spelling(s) that select this convention.
    pub fn api_version_names(self) -> &'static str {
        match self {
            Convention::CpuOriginal | Convention::GpuOriginal => "API_VERSION_ORIGINAL",
            Convention::CpuStatusReturning => "API_VERSION_STATUS_RETURNING",
            Convention::CpuStatusReturningUnified => "API_VERSION_STATUS_RETURNING_UNIFIED",
            Convention::GpuStatusReturning => {
                "API_VERSION_STATUS_RETURNING or API_VERSION_STATUS_RETURNING_UNIFIED"
            }
            Convention::Typed => "API_VERSION_TYPED_FFI",
        }
    }

    /// The C signature (or, for [`Convention::Typed`], the Rust one).
    pub fn signature(self) -> &'static str {
        match self {
            Convention::CpuOriginal => "void(void* out, const void** in)",
            Convention::CpuStatusReturning => {
                "void(void* out, const void** in, XlaCustomCallStatus* status)"
            }
            Convention::CpuStatusReturningUnified => {
                "void(void* out, const void** in, const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)"
            }
            Convention::GpuOriginal => {
                "void(CUstream stream, void** buffers, const char* opaque, size_t opaque_len)"
            }
            Convention::GpuStatusReturning => {
                "void(CUstream stream, void** buffers, const char* opaque, size_t opaque_len, XlaCustomCallStatus* status)"
            }
            Convention::Typed => "fn(&mut CallFrame) -> Result<()>",
        }
    }
}

impl fmt::Display for Convention {
    /// `API_VERSION_ORIGINAL (void(void* out, const void** in))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.api_version_names(), self.signature())
    }
}

/// One entry of the GPU `buffers` array: which array leaf it points to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GpuBufferSlot {
    /// Leaf `index` (a tuple index path) of operand `operand`.
    Operand { operand: usize, index: Vec<usize> },
    /// Leaf `index` of the result.
    Result { index: Vec<usize> },
}

/// The entries of the GPU `buffers` array, in order: every array leaf of every
/// operand, then every array leaf of the result, each shape walked in preorder
/// (the guide's newer edition: leaves only, no tuple tables). For the guide's
/// example, operand `(f32[32], (f32[64], f32[128]), f32[256])` and result
/// `(f32[512], f32[1024])`, that is six entries.
pub fn gpu_buffer_slots(operand_shapes: &[Shape], result_shape: &Shape) -> Vec<GpuBufferSlot> {
    let mut slots = Vec::new();
    for (operand, shape) in operand_shapes.iter().enumerate() {
        for (index, _) in shape.leaves() {
            slots.push(GpuBufferSlot::Operand { operand, index });
        }
    }
    for (index, _) in result_shape.leaves() {
        slots.push(GpuBufferSlot::Result { index });
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use CustomCallApiVersion as V;

    #[test]
    fn api_versions_pick_the_guide_signatures() {
        let all = [
            V::Original,
            V::StatusReturning,
            V::StatusReturningUnified,
            V::TypedFfi,
        ];
        for device in [DeviceKind::Host, DeviceKind::Gpu] {
            for v in all {
                let c = Convention::for_api_version(v, device);
                assert!(c.accepts(v), "{c:?} should accept {v:?}");
                if let Some(d) = c.device() {
                    assert_eq!(d, device);
                }
            }
        }
        assert!(!Convention::CpuOriginal.accepts(V::StatusReturning));
        assert!(Convention::GpuStatusReturning.accepts(V::StatusReturningUnified));
        assert_eq!(DeviceKind::of_platform("cuda"), DeviceKind::Gpu);
        assert_eq!(DeviceKind::of_platform("Interpreter"), DeviceKind::Host);
    }

    #[test]
    fn gpu_buffers_follow_the_guides_newer_layout() {
        let p0 = Shape::parse("(f32[32], (f32[64], f32[128]), f32[256])").unwrap();
        let out = Shape::parse("(f32[512], f32[1024])").unwrap();
        let slots = gpu_buffer_slots(&[p0], &out);
        let operand = |index: &[usize]| GpuBufferSlot::Operand {
            operand: 0,
            index: index.to_vec(),
        };
        let result = |index: &[usize]| GpuBufferSlot::Result {
            index: index.to_vec(),
        };
        assert_eq!(
            slots,
            vec![
                operand(&[0]),
                operand(&[1, 0]),
                operand(&[1, 1]),
                operand(&[2]),
                result(&[0]),
                result(&[1]),
            ]
        );
    }
}
