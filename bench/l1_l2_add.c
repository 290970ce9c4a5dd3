/* What one cheap pass over a fusion block costs when its registers are in L1
 * and when they are not: `c = a + b` over n floats, AVX-512, best of 7 batches,
 * for n from 256 to 16384 (three arrays of n floats: L1 holds them up to about
 * n = 4096 on a 48 KiB L1). The figures behind `ELEMENTWISE_BLOCK`
 * (platform-host/src/fusion/program.rs).
 *
 *   cc -O2 -march=native bench/l1_l2_add.c -o /tmp/l1_l2_add && /tmp/l1_l2_add
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void add(const float *a, const float *b, float *c, int n) {
  for (int i = 0; i < n; i += 16)
    _mm512_storeu_ps(c + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
}

int main(void) {
  for (int n = 256; n <= 16384; n *= 2) {
    float *a = aligned_alloc(64, n * 4 + 4096), *b = aligned_alloc(64, n * 4 + 4096),
          *c = aligned_alloc(64, n * 4 + 4096);
    for (int i = 0; i < n; i++) a[i] = i, b[i] = 1, c[i] = 0;
    long reps = 200000000 / n;
    double best = 1e9;
    for (int r = 0; r < 7; r++) {
      double t = now();
      for (long k = 0; k < reps; k++) {
        add(a, b, c, n);
        __asm__ volatile("" ::"r"(c) : "memory");
      }
      t = now() - t;
      if (t < best) best = t;
    }
    printf("n=%5d: %.4f ns/element\n", n, best / (reps * (double)n) * 1e9);
    free(a), free(b), free(c);
  }
  return 0;
}
