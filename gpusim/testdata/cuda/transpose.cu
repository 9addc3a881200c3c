// transpose: out = in^T for a W x H f32 matrix through a 32x33 shared tile
// (padded against bank conflicts); each 32x8 block moves a 32x32 tile.
#include "fixture.h"

#define TD 32
#define ROWS 8

extern "C" __global__ void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[TD][TD + 1];
  int x = blockIdx.x * TD + threadIdx.x;
  int y = blockIdx.y * TD + threadIdx.y;
  for (int j = 0; j < TD; j += ROWS)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * TD + threadIdx.x;
  y = blockIdx.x * TD + threadIdx.y;
  for (int j = 0; j < TD; j += ROWS)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int w = 100, h = 72;
  Lcg r(909);
  std::vector<float> in(w * h);
  for (auto& v : in) v = r.range(-1000.0f, 1000.0f);
  Fixture f("transpose", "transpose");
  f.in("in", in);
  f.out("out", w * h * sizeof(float));
  f.s32("w", w);
  f.s32("h", h);
  f.launch((const void*)transpose, dim3((w + TD - 1) / TD, (h + TD - 1) / TD), dim3(TD, ROWS), 0);
}
