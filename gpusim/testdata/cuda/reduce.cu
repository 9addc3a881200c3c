// reduce: a tree reduction in dynamic shared memory (extern __shared__).
// Each block sums 2*blockDim.x f32 values into partial[blockIdx.x] (a fixed
// order, so bit-exact) and 2*blockDim.x ints, which it folds into
// totals[0..2] with atomicAdd, atomicMax and atomicMin.
#include "fixture.h"

#include <climits>

extern "C" __global__ void reduce(const float* x, const int* v, float* partial, int* totals, unsigned n) {
  extern __shared__ unsigned char smem[];
  float* sf = reinterpret_cast<float*>(smem);
  int* si = reinterpret_cast<int*>(sf + blockDim.x);
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x * 2 + tid;
  float s = 0.0f;
  int t = 0;
  if (i < n) {
    s = x[i];
    t = v[i];
  }
  if (i + blockDim.x < n) {
    s += x[i + blockDim.x];
    t += v[i + blockDim.x];
  }
  sf[tid] = s;
  si[tid] = t;
  __syncthreads();
  for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
    if (tid < st) {
      sf[tid] += sf[tid + st];
      si[tid] += si[tid + st];
    }
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = sf[0];
    atomicAdd(&totals[0], si[0]);
    atomicMax(&totals[1], si[0]);
    atomicMin(&totals[2], si[0]);
  }
}

int main() {
  const unsigned n = 5000, block = 128;
  const unsigned grid = (n + 2 * block - 1) / (2 * block);
  Lcg r(505);
  std::vector<float> x(n);
  std::vector<int> v(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = r.range(-1.0f, 1.0f);
    v[i] = r.irange(-1000, 1000);
  }
  std::vector<int> totals = {0, INT_MIN, INT_MAX};
  Fixture f("reduce", "reduce");
  f.in("x", x);
  f.in("v", v);
  f.out("partial", grid * sizeof(float));
  f.inout("totals", totals);
  f.u32("n", n);
  f.launch((const void*)reduce, dim3(grid), dim3(block), block * (sizeof(float) + sizeof(int)));
}
