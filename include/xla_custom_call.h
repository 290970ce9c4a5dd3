/*
 * xla_custom_call.h: writing custom-call targets in C, C++ or CUDA for this
 * project's runtime. The ABI is XLA's (see XLA's custom-call guide); a target
 * written against XLA's headers works here unchanged, and one written against
 * this header works with XLA.
 *
 * Conventions, chosen by the custom-call instruction's api_version:
 *
 *   CPU platforms ("Host", "Interpreter"):
 *     API_VERSION_ORIGINAL                  xla_cpu_custom_call_original
 *     API_VERSION_STATUS_RETURNING          xla_cpu_custom_call_status_returning
 *     API_VERSION_STATUS_RETURNING_UNIFIED  xla_cpu_custom_call_unified
 *   GPU platforms ("CUDA"):
 *     API_VERSION_ORIGINAL                  xla_gpu_custom_call_original
 *     API_VERSION_STATUS_RETURNING(_UNIFIED) xla_gpu_custom_call_status_returning
 *   API_VERSION_TYPED_FFI is served by typed Rust handlers only.
 *
 * Buffers. CPU: in[i] points to operand i's elements (dense, in the layout of
 * the operand's shape, row-major by default); for a tuple operand, in[i] points
 * to a table of pointers, one per element (a nested tuple is a table of
 * tables). out points to the result's elements, or for a tuple result to its
 * table of element pointers. Every element of a tuple result is allocated,
 * even one the program never reads, so such an element can serve as scratch
 * memory. GPU: buffers[] holds device pointers to the operands' array leaves
 * and then the result's, each shape walked in preorder.
 *
 * opaque / opaque_len: the instruction's backend_config, byte for byte
 * (followed by a NUL that opaque_len does not count).
 *
 * Errors: call XlaCustomCallStatusSetFailure and return; the execution stops,
 * its outputs are discarded and the message becomes its error. A status starts
 * in the success state. The runtime defines both functions; a shared library
 * calling them links nothing: the program that loads it (hlorun) exports them.
 *
 * Registration. Build a shared library (cc -shared -fPIC -o libmine.so mine.c)
 * whose targets are visible, non-static extern "C" functions, and load it:
 *     hlorun run --custom-call-lib ./libmine.so program.hlo ...
 * or from Rust with platform_api::custom_call::load_library(path). A
 * custom_call_target with no registration is looked up as a symbol of the
 * loaded libraries, and called with the convention api_version names: the
 * symbol has no type, so the HLO must name the convention the function was
 * written with. (From Rust, `register_custom_call!("name", "Host",
 * CpuOriginal(f))` is the counterpart of XLA_REGISTER_CUSTOM_CALL_TARGET.)
 */
#ifndef XLA_CUSTOM_CALL_H_
#define XLA_CUSTOM_CALL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The status a target reports through. Opaque: only ever used by pointer. */
typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;

/* Sets the status to success (the state it starts in). */
void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus* status);

/* Sets the status to failure with a copy of message: its first message_len
 * bytes, or up to its first NUL if that comes earlier. */
void XlaCustomCallStatusSetFailure(XlaCustomCallStatus* status,
                                   const char* message, size_t message_len);

/* CPU, API_VERSION_ORIGINAL. */
typedef void (*xla_cpu_custom_call_original)(void* out, const void** in);

/* CPU, API_VERSION_STATUS_RETURNING. */
typedef void (*xla_cpu_custom_call_status_returning)(
    void* out, const void** in, XlaCustomCallStatus* status);

/* CPU, API_VERSION_STATUS_RETURNING_UNIFIED. */
typedef void (*xla_cpu_custom_call_unified)(void* out, const void** in,
                                            const char* opaque,
                                            size_t opaque_len,
                                            XlaCustomCallStatus* status);

/* A CUDA stream (CUstream); void* so this header needs no CUDA headers. */
typedef void* xla_cu_stream;

/* GPU, API_VERSION_ORIGINAL. */
typedef void (*xla_gpu_custom_call_original)(xla_cu_stream stream,
                                             void** buffers,
                                             const char* opaque,
                                             size_t opaque_len);

/* GPU, API_VERSION_STATUS_RETURNING and API_VERSION_STATUS_RETURNING_UNIFIED. */
typedef void (*xla_gpu_custom_call_status_returning)(
    xla_cu_stream stream, void** buffers, const char* opaque,
    size_t opaque_len, XlaCustomCallStatus* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLA_CUSTOM_CALL_H_ */
