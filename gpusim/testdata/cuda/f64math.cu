// f64math: double-precision add, sub, mul (each rounded on its own, via the
// _rn intrinsics, and a contracted a*b+c), division, reciprocal, sqrt, fma,
// the directed-rounding forms, min/max, floor/ceil/trunc/rint and negation,
// over ordinary values, signed zeros, denormals, infinities and NaN.
#include "fixture.h"

#include <limits>

#define OUTS 20

extern "C" __global__ void f64math(const double* a, const double* b, const double* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], z = c[i];
  double* o = out + i * OUTS;
  o[0] = __dadd_rn(x, y);
  o[1] = __dsub_rn(x, y);
  o[2] = __dmul_rn(x, y);
  o[3] = __dadd_rn(__dmul_rn(x, y), z);
  o[4] = x * y + z;
  o[5] = fma(x, y, z);
  o[6] = x / y;
  o[7] = 1.0 / y;
  o[8] = sqrt(fabs(x));
  o[9] = sqrt(x);
  o[10] = __dadd_rz(x, y);
  o[11] = __dmul_ru(x, y);
  o[12] = __ddiv_rd(x, y);
  o[13] = __fma_rz(x, y, z);
  o[14] = fmin(x, y);
  o[15] = fmax(x, z);
  o[16] = floor(x) + ceil(y);
  o[17] = trunc(z) - rint(x);
  o[18] = -x;
  o[19] = __dsqrt_ru(fabs(z));
}

int main() {
  const int n = 160;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double sp[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, 1e-310, -4.9e-324, 1e308, -1e308,
                       inf, -inf, nan, 0.1, 1.0 / 3.0, 2.0};
  const int ns = sizeof sp / sizeof sp[0];
  Lcg r(1501);
  std::vector<double> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    if (i < ns * 4) {
      a[i] = sp[i % ns];
      b[i] = sp[(i / ns + i) % ns];
      c[i] = sp[(i * 7) % ns];
    } else {
      a[i] = r.drange(-1e6, 1e6);
      b[i] = r.drange(-1e3, 1e3);
      c[i] = r.drange(-1.0, 1.0);
    }
  }
  Fixture f("f64math", "f64math");
  f.in("a", a);
  f.in("b", b);
  f.in("c", c);
  f.out("out", n * OUTS * sizeof(double));
  f.s32("n", n);
  f.launch((const void*)f64math, dim3((n + 63) / 64), dim3(64), 0);
}
