// fma32: single-precision fused multiply-add in each rounding mode, the
// unfused __fmul_rn/__fadd_rn pair, a contracted a*b+c, IEEE division and
// square root (div.rn, sqrt.rn and directed forms), reciprocal, min/max,
// floor/ceil/trunc/rint and copysign, over ordinary and special values.
#include "fixture.h"

#include <limits>

#define OUTS 20

extern "C" __global__ void fma32(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  float* o = out + i * OUTS;
  o[0] = fmaf(x, y, z);
  o[1] = __fmaf_rz(x, y, z);
  o[2] = __fmaf_rd(x, y, z);
  o[3] = __fmaf_ru(x, y, z);
  o[4] = __fadd_rn(__fmul_rn(x, y), z);
  o[5] = x * y + z;
  o[6] = x / y;
  o[7] = __fdiv_rz(x, y);
  o[8] = sqrtf(fabsf(x));
  o[9] = __fsqrt_rd(fabsf(z));
  o[10] = __frcp_rn(y);
  o[11] = __fadd_ru(x, z);
  o[12] = __fsub_rd(x, z);
  o[13] = __fmul_rz(x, z);
  o[14] = fminf(x, y);
  o[15] = fmaxf(y, z);
  o[16] = floorf(x) + ceilf(z);
  o[17] = truncf(y) - rintf(x);
  o[18] = copysignf(x, z);
  o[19] = sqrtf(x);
}

int main() {
  const int n = 192;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.5f, -2.5f, 3.0f, 1e-40f, -1.4e-45f, 3e38f, -3e38f,
                      inf, -inf, nan, 0.1f, 1.0f / 3.0f, 1.0000001f};
  const int ns = sizeof sp / sizeof sp[0];
  Lcg r(1601);
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    if (i < ns * 4) {
      a[i] = sp[i % ns];
      b[i] = sp[(i / ns + i) % ns];
      c[i] = sp[(i * 5) % ns];
    } else {
      a[i] = r.range(-1e4f, 1e4f);
      b[i] = r.range(-100.0f, 100.0f);
      c[i] = r.range(-1.0f, 1.0f);
    }
  }
  Fixture f("fma32", "fma32");
  f.in("a", a);
  f.in("b", b);
  f.in("c", c);
  f.out("out", n * OUTS * sizeof(float));
  f.s32("n", n);
  f.launch((const void*)fma32, dim3((n + 63) / 64), dim3(64), 0);
}
