// stencil2d: a 5-point f32 stencil on a W x H grid; boundary cells are
// copied unchanged.
#include "fixture.h"

extern "C" __global__ void stencil2d(const float* in, float* out, int w, int h, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int i = y * w + x;
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = c0 * in[i] + c1 * (in[i - w] + in[i + w] + in[i - 1] + in[i + 1]);
}

int main() {
  const int w = 70, h = 50;
  Lcg r(707);
  std::vector<float> in(w * h);
  for (auto& v : in) v = r.range(0.0f, 100.0f);
  Fixture f("stencil2d", "stencil2d");
  f.in("in", in);
  f.out("out", w * h * sizeof(float));
  f.s32("w", w);
  f.s32("h", h);
  f.f32("c0", 0.5f);
  f.f32("c1", 0.125f);
  f.launch((const void*)stencil2d, dim3((w + 15) / 16, (h + 7) / 8), dim3(16, 8), 0);
}
