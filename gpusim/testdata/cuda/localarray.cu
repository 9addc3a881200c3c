// localarray: per-thread arrays in local memory indexed by run-time values:
// an insertion sort of 24 keys, a 16-bucket table indexed by key bits, and a
// data-dependent pick.
#include "fixture.h"

#define K 24
#define OUTS (K + 2)

extern "C" __global__ void localarray(const int* keys, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int a[K];
  int h[16];
  for (int k = 0; k < 16; ++k) h[k] = 0;
  for (int k = 0; k < K; ++k) a[k] = keys[i * K + k];
  for (int k = 0; k < K; ++k) h[a[k] & 15] += k + 1;
  for (int k = 1; k < K; ++k) {
    int v = a[k];
    int j = k - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
  int* o = out + i * OUTS;
  for (int k = 0; k < K; ++k) o[k] = a[k];
  o[K] = a[(unsigned)keys[i * K] % K];
  o[K + 1] = h[keys[i * K + 1] & 15];
}

int main() {
  const int n = 100;
  Lcg r(1401);
  std::vector<int> keys(n * K);
  for (auto& k : keys) k = r.irange(-500, 500);
  Fixture f("localarray", "localarray");
  f.in("keys", keys);
  f.out("out", n * OUTS * sizeof(int));
  f.s32("n", n);
  f.launch((const void*)localarray, dim3((n + 31) / 32), dim3(32), 0);
}
