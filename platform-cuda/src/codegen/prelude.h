/* hlorun CUDA prelude: types and the element semantics every kernel shares.
 * The same text compiles as CUDA C++ (NVRTC) and, with HLORUN_EMULATE
 * defined, as C11 on the host, where the tests run the kernels one thread at
 * a time to check the generated code without a GPU. */
#ifdef HLORUN_EMULATE
#include <math.h>
#define KERNEL
#define DEVICE static inline
#define THREAD_START 0LL
#define THREAD_STRIDE 1LL
#else
#define KERNEL extern "C" __global__
#define DEVICE static __device__ __forceinline__
#define THREAD_START ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define THREAD_STRIDE ((long long)gridDim.x * blockDim.x)
#endif

typedef unsigned char u8;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
/* Half floats are stored as their bits; arithmetic on them is legalized to f32. */
typedef unsigned short f16b;
typedef unsigned short bf16b;
typedef struct { float re, im; } c64;
typedef struct { double re, im; } c128;

DEVICE c64 make_c64(float re, float im) { c64 c; c.re = re; c.im = im; return c; }
DEVICE c128 make_c128(double re, double im) { c128 c; c.re = re; c.im = im; return c; }
DEVICE void copy_bytes(void* dst, const void* src, int n) {
  for (int i = 0; i < n; i++) ((char*)dst)[i] = ((const char*)src)[i];
}
DEVICE float f32_from_bits(u32 b) { float f; copy_bytes(&f, &b, 4); return f; }
DEVICE u32 f32_bits(float f) { u32 b; copy_bytes(&b, &f, 4); return b; }
DEVICE double f64_from_bits(u64 b) { double f; copy_bytes(&f, &b, 8); return f; }
DEVICE u64 f64_bits(double f) { u64 b; copy_bytes(&b, &f, 8); return b; }

/* XLA's TOTALORDER on floats as a signed integer order. */
DEVICE s64 total_order_f32(float x) {
  s32 s = (s32)f32_bits(x);
  return s < 0 ? (s64)(s ^ 0x7fffffff) : (s64)s;
}
DEVICE s64 total_order_f64(double x) {
  s64 s = (s64)f64_bits(x);
  return s < 0 ? (s ^ 0x7fffffffffffffffLL) : s;
}

/* f16 and bf16 conversions, rounding to nearest-even. */
DEVICE float f16_to_f32(f16b h) {
  u32 sign = ((u32)h & 0x8000u) << 16, e = ((u32)h >> 10) & 0x1fu, m = (u32)h & 0x3ffu;
  if (e == 0) {
    float r = (float)m * f32_from_bits(0x33800000u); /* m * 2^-24, exact */
    return sign ? -r : r;
  }
  if (e == 31) return f32_from_bits(sign | 0x7f800000u | (m << 13));
  return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}
DEVICE f16b f64_to_f16(double x) {
  u64 b = f64_bits(x);
  u16 sign = (u16)((b >> 48) & 0x8000u);
  if (x != x) return (f16b)(sign | 0x7e00u | (u16)((b >> 42) & 0x3ffu));
  double a = x < 0 ? -x : x;
  if (a >= 65520.0) return (f16b)(sign | 0x7c00u);
  if (a < 6.103515625e-05) return (f16b)(sign | (u16)rint(a * 16777216.0));
  s64 e = (s64)((b >> 52) & 0x7ffu) - 1023;
  u64 mant = b & 0xfffffffffffffull, keep = mant >> 42, rest = mant & 0x3ffffffffffull;
  u64 half = 0x20000000000ull;
  if (rest > half || (rest == half && (keep & 1u))) keep++;
  return (f16b)(sign | (u16)((((u64)(e + 15)) << 10) + keep));
}
DEVICE f16b f32_to_f16(float x) { return f64_to_f16((double)x); }
DEVICE float bf16_to_f32(bf16b h) { return f32_from_bits((u32)h << 16); }
DEVICE bf16b f32_to_bf16(float x) {
  u32 b = f32_bits(x);
  if (x != x) return (bf16b)(((b >> 16) & 0x8000u) | 0x7fc0u);
  return (bf16b)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/* Integer division, shifts and float-to-integer conversion with XLA's rules:
 * x / 0 is all ones, MIN / -1 is MIN; shift amounts are unsigned and past the
 * width give 0 (the sign fill for arithmetic shifts); float to integer
 * truncates, saturates, and maps NaN to 0. Arithmetic runs on the unsigned
 * type of the same width, so overflow wraps instead of being undefined. */
#define INT_HELPERS(T, U, S, BITS, MIN, MAX)                                   \
  DEVICE T div_##T(T a, T b) {                                                 \
    if (b == 0) return (T)-1;                                                  \
    if (b == (T)-1 && a == (T)(MIN)) return (T)(MIN);                          \
    return (T)(a / b);                                                         \
  }                                                                            \
  DEVICE T shl_##T(T a, T b) {                                                 \
    u64 n = (u64)(U)b;                                                         \
    return n < BITS ? (T)(U)((u64)(U)a << n) : (T)0;                           \
  }                                                                            \
  DEVICE T lshr_##T(T a, T b) {                                                \
    u64 n = (u64)(U)b;                                                         \
    return n < BITS ? (T)(U)((u64)(U)a >> n) : (T)0;                           \
  }                                                                            \
  DEVICE T ashr_##T(T a, T b) {                                                \
    u64 n = (u64)(U)b;                                                         \
    if (n < BITS) return (T)(S)((S)a >> n);                                    \
    return ((S)a < 0) ? (T)-1 : (T)0;                                          \
  }                                                                            \
  DEVICE T from_float_##T(double x) {                                          \
    if (x != x) return (T)0;                                                   \
    if (x <= (double)(T)(MIN)) return (T)(MIN);                                \
    if (x >= (double)(T)(MAX)) return (T)(MAX);                                \
    return (T)x;                                                               \
  }
INT_HELPERS(s8, u8, s8, 8, -128, 127)
INT_HELPERS(s16, u16, s16, 16, -32768, 32767)
INT_HELPERS(s32, u32, s32, 32, (-2147483647 - 1), 2147483647)
INT_HELPERS(s64, u64, s64, 64, (-9223372036854775807LL - 1), 9223372036854775807LL)
INT_HELPERS(u8, u8, s8, 8, 0, 255)
INT_HELPERS(u16, u16, s16, 16, 0, 65535)
INT_HELPERS(u32, u32, s32, 32, 0, 4294967295u)
INT_HELPERS(u64, u64, s64, 64, 0, 18446744073709551615ull)
