// warpops: warp shuffles (up, down, xor, idx, with a sub-warp width, on
// 32-bit ints, f32 and f64) and votes (all, any, ballot), all with the full
// mask, plus a butterfly sum. Each thread writes 12 words.
#include "fixture.h"

#define OUTS 12

extern "C" __global__ void warpops(const int* in, int* out) {
  const unsigned full = 0xffffffffu;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  int* o = out + i * OUTS;
  o[0] = __shfl_up_sync(full, v, 3);
  o[1] = __shfl_down_sync(full, v, 5);
  o[2] = __shfl_xor_sync(full, v, 6);
  o[3] = __shfl_sync(full, v, v & 31);
  o[4] = __shfl_down_sync(full, v, 1, 16);
  float fv = __shfl_xor_sync(full, (float)v * 0.5f, 1);
  o[5] = __float_as_int(fv);
  double dv = __shfl_sync(full, (double)v * 0.25, (threadIdx.x * 7) & 31);
  long long dl = __double_as_longlong(dv);
  o[6] = (int)dl;
  o[7] = (int)(dl >> 32);
  o[8] = (int)__ballot_sync(full, v > 0);
  o[9] = __all_sync(full, v > -1000000);
  o[10] = __any_sync(full, v > 900000);
  int sum = v;
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(full, sum, off);
  o[11] = sum;
}

int main() {
  const int block = 128, grid = 2, n = block * grid;
  Lcg r(1101);
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) {
    int warp = i / 32;
    switch (warp % 4) {
      case 0: in[i] = r.irange(1, 999999); break;          // all positive
      case 1: in[i] = r.irange(-999999, -1); break;        // all negative
      case 2: in[i] = r.irange(-2000000, 2000000); break;  // mixed, some below -1e6
      default: in[i] = r.irange(-999999, 950000); break;   // mixed
    }
  }
  Fixture f("warpops", "warpops");
  f.in("in", in);
  f.out("out", n * OUTS * sizeof(int));
  f.launch((const void*)warpops, dim3(grid), dim3(block), 0);
}
