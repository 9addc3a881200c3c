// divergence: per-thread trip counts, nested if/else inside the loop,
// break and continue, and a second data-dependent while loop, so that the
// lanes of each warp split and reconverge many times.
#include "fixture.h"

extern "C" __global__ void divergence(const int* trips, const int* vals, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int t = trips[i];
  unsigned v = (unsigned)vals[i];
  unsigned acc = 0;
  for (int k = 0; k < t; ++k) {
    if ((v + k) & 1) {
      if (k % 3 == 0)
        acc += v * (unsigned)k;
      else
        acc -= (unsigned)k;
    } else if ((int)v > 0) {
      acc ^= v << (k & 7);
      if (acc > 0x40000000u) break;
    } else {
      acc += 7;
      v += 3;
      continue;
    }
    v = v * 1103515245u + 12345u;
  }
  int w = 0;
  while (t > 0 && w < 50) {
    w += (t & 3) + 1;
    t >>= 1;
  }
  out[i] = (int)acc + w;
}

int main() {
  const int n = 777;
  Lcg r(1001);
  std::vector<int> trips(n), vals(n);
  for (int i = 0; i < n; ++i) {
    trips[i] = r.irange(0, 40);
    vals[i] = (int)r.next();
  }
  Fixture f("divergence", "divergence");
  f.in("trips", trips);
  f.in("vals", vals);
  f.out("out", n * sizeof(int));
  f.s32("n", n);
  f.launch((const void*)divergence, dim3((n + 63) / 64), dim3(64), 0);
}
