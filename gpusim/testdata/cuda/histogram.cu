// histogram: a grid-stride loop counts bytes into 64 bins in shared memory
// with shared atomics, then folds them into global bins with global
// atomicAdd; atomicOr sets one bit per seen byte value in a 256-bit mask.
#include "fixture.h"

#define BINS 64

extern "C" __global__ void histogram(const unsigned char* data, unsigned n, unsigned* bins, unsigned* seen) {
  __shared__ unsigned local[BINS];
  for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned d = data[i];
    atomicAdd(&local[d % BINS], 1u);
    atomicOr(&seen[d / 32], 1u << (d % 32));
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main() {
  const unsigned n = 20000;
  Lcg r(606);
  std::vector<unsigned char> data(n);
  for (unsigned i = 0; i < n; ++i) {
    uint32_t u = r.next();
    // Skewed: half the bytes come from a narrow range, so some bins are hot.
    data[i] = (u & 1) ? (unsigned char)(u >> 24) : (unsigned char)(40 + ((u >> 8) % 8));
  }
  Fixture f("histogram", "histogram");
  f.in("data", data);
  f.u32("n", n);
  f.out("bins", BINS * sizeof(unsigned));
  f.out("seen", 8 * sizeof(unsigned));
  f.launch((const void*)histogram, dim3(8), dim3(128), 0);
}
