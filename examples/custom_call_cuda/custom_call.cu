// XLA's custom-call guide, GPU example, as written there (plus `extern "C"`
// so the symbol keeps its name, and a status-returning variant).
//
//   nvcc -shared -Xcompiler -fPIC -I ../../include -o libguide.so custom_call.cu
//   hlorun run custom_call.hlo b.npy c.npy --platform cuda --custom-call-lib ./libguide.so
//
// buffers[] holds the operands' device pointers, then the result's.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "xla_custom_call.h"

__global__ void custom_call_kernel(const float* in0, const float* in1, float* out) {
  size_t idx = blockIdx.x * blockDim.x + threadIdx.x;
  out[idx] = in0[idx % 128] + in1[idx];
}

extern "C" void do_custom_call(cudaStream_t stream, void** buffers,
                               const char* opaque, size_t opaque_len) {
  const float* in0 = reinterpret_cast<const float*>(buffers[0]);
  const float* in1 = reinterpret_cast<const float*>(buffers[1]);
  float* out = reinterpret_cast<float*>(buffers[2]);

  const int64_t block_dim = 64;
  const int64_t grid_dim = 2048 / block_dim;
  custom_call_kernel<<<grid_dim, block_dim,
                       /*dynamic_shared_mem_bytes=*/0, stream>>>(in0, in1, out);
}

// API_VERSION_STATUS_RETURNING: scales by the factor in the opaque bytes
// (backend_config, a decimal number), failing on an empty one.
__global__ void scale_kernel(const float* in, float* out, float factor, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) out[idx] = in[idx] * factor;
}

extern "C" void scale_by_opaque(cudaStream_t stream, void** buffers,
                                const char* opaque, size_t opaque_len,
                                XlaCustomCallStatus* status) {
  if (opaque_len == 0) {
    const char* msg = "scale_by_opaque: backend_config must hold the factor";
    XlaCustomCallStatusSetFailure(status, msg, strlen(msg));
    return;
  }
  float factor = strtof(opaque, nullptr);
  const float* in = reinterpret_cast<const float*>(buffers[0]);
  float* out = reinterpret_cast<float*>(buffers[1]);
  scale_kernel<<<(2048 + 255) / 256, 256, 0, stream>>>(in, out, factor, 2048);
}
