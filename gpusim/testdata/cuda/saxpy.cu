// saxpy: y[i] = a*x[i] + y[i] over f32 (nvcc contracts this into fma.rn.f32).
#include "fixture.h"

extern "C" __global__ void saxpy(unsigned n, float a, const float* x, float* y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const unsigned n = 1500;
  Lcg r(202);
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = r.range(-10.0f, 10.0f);
    y[i] = r.range(-10.0f, 10.0f);
  }
  Fixture f("saxpy", "saxpy");
  f.u32("n", n);
  f.f32("a", 2.718281828f);
  f.in("x", x);
  f.inout("y", y);
  f.launch((const void*)saxpy, dim3((n + 127) / 128), dim3(128), 0);
}
