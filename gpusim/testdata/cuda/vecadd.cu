// vecadd: c[i] = a[i] + b[i] over f32, with a bounds check for the last,
// partial block.
#include "fixture.h"

extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1000;
  Lcg r(101);
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = r.range(-100.0f, 100.0f);
    b[i] = r.range(-1.0f, 1.0f);
  }
  Fixture f("vecadd", "vecadd");
  f.in("a", a);
  f.in("b", b);
  f.out("c", n * sizeof(float));
  f.s32("n", n);
  f.launch((const void*)vecadd, dim3((n + 255) / 256), dim3(256), 0);
}
