/* A status-returning target that fails on bad input, for the hlorun test: the
 * library calls XlaCustomCallStatusSetFailure, which the program loading it
 * must export (hlorun does). */
#include <stdio.h>
#include <string.h>

#include "xla_custom_call.h"

/* out[i] = a[i] / b[i] for f32[4]; fails if some b[i] is zero. */
void checked_divide(void* out, const void** in, XlaCustomCallStatus* status) {
  const float* a = (const float*)in[0];
  const float* b = (const float*)in[1];
  float* y = (float*)out;
  for (int i = 0; i < 4; ++i) {
    if (b[i] == 0.0f) {
      char message[96];
      int n = snprintf(message, sizeof message,
                       "checked_divide: division by zero at index %d", i);
      XlaCustomCallStatusSetFailure(status, message, (size_t)n);
      return;
    }
    y[i] = a[i] / b[i];
  }
  XlaCustomCallStatusSetSuccess(status);
}
