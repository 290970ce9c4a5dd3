/* Custom-call targets from XLA's custom-call guide, written in C against
 * include/xla_custom_call.h. Built into a shared library at test time and
 * loaded with load_library; none of them calls the status functions, so the
 * library loads into any program. */
#include <stdint.h>
#include <string.h>

#include "xla_custom_call.h"

/* A[i] = B[i % 128] + C[i]: f32[128], f32[2048] -> f32[2048]. */
void do_custom_call(void* out, const void** in) {
  float* out_buf = (float*)out;
  const float* in0 = (const float*)in[0];
  const float* in1 = (const float*)in[1];
  for (int i = 0; i < 2048; ++i) {
    out_buf[i] = in0[i % 128] + in1[i];
  }
}

/* The guide's tuple example: parameter (f32[32], (f32[64], f32[128]), f32[256]),
 * result (f32[512], f32[1024]) whose second element is scratch memory:
 *   scratch[j] = sub1[j % 64] * sub2[j % 128]                 (j < 1024)
 *   out0[i]    = scratch[2i] + scratch[2i+1] + sub0[i % 32] + sub3[i % 256]. */
void tuple_custom_call(void* out, const void** in) {
  const void* const* p0 = (const void* const*)in[0];
  const float* subbuf0 = (const float*)p0[0];
  const void* const* subtuple = (const void* const*)p0[1];
  const float* subbuf1 = (const float*)subtuple[0];
  const float* subbuf2 = (const float*)subtuple[1];
  const float* subbuf3 = (const float*)p0[2];
  void** outputs = (void**)out;
  float* out0 = (float*)outputs[0];
  float* scratch = (float*)outputs[1];
  for (int j = 0; j < 1024; ++j) {
    scratch[j] = subbuf1[j % 64] * subbuf2[j % 128];
  }
  for (int i = 0; i < 512; ++i) {
    out0[i] = scratch[2 * i] + scratch[2 * i + 1] + subbuf0[i % 32] +
              subbuf3[i % 256];
  }
}

/* Unified convention: writes the opaque bytes to an u8[n] result, and their
 * count plus whether a NUL follows them to an s64[2] result. */
void echo_opaque(void* out, const void** in, const char* opaque,
                 size_t opaque_len, XlaCustomCallStatus* status) {
  (void)in;
  (void)status;
  void** outputs = (void**)out;
  memcpy(outputs[0], opaque, opaque_len);
  int64_t* info = (int64_t*)outputs[1];
  info[0] = (int64_t)opaque_len;
  info[1] = opaque[opaque_len] == '\0';
}

/* Status-returning convention, never failing: out = 2 * in (f32[n], n read
 * from nothing: the caller passes f32[4]). */
void double_it(void* out, const void** in, XlaCustomCallStatus* status) {
  (void)status;
  const float* x = (const float*)in[0];
  float* y = (float*)out;
  for (int i = 0; i < 4; ++i) y[i] = 2.0f * x[i];
}
