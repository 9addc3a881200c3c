// matmul_tiled: C = A*B for row-major f32 matrices through 16x16 tiles in
// static shared memory, with __syncthreads between the tile phases and
// zero padding at the matrix edges.
#include "fixture.h"

#define TILE 16

extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ka = t * TILE + tx, kb = t * TILE + ty;
    As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
  const int M = 50, N = 45, K = 70;
  Lcg r(404);
  std::vector<float> A(M * K), B(K * N);
  for (auto& v : A) v = r.range(-2.0f, 2.0f);
  for (auto& v : B) v = r.range(-2.0f, 2.0f);
  Fixture f("matmul_tiled", "matmul_tiled");
  f.in("A", A);
  f.in("B", B);
  f.out("C", M * N * sizeof(float));
  f.s32("M", M);
  f.s32("N", N);
  f.s32("K", K);
  f.launch((const void*)matmul_tiled, dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), dim3(TILE, TILE), 0);
}
