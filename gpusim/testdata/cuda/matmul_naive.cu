// matmul_naive: C = A*B for row-major f32 matrices, one thread per element
// of C, over a 2D grid whose edge blocks are partly idle.
#include "fixture.h"

extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

int main() {
  const int M = 48, N = 40, K = 36;
  Lcg r(303);
  std::vector<float> A(M * K), B(K * N);
  for (auto& v : A) v = r.range(-1.0f, 1.0f);
  for (auto& v : B) v = r.range(-1.0f, 1.0f);
  Fixture f("matmul_naive", "matmul_naive");
  f.in("A", A);
  f.in("B", B);
  f.out("C", M * N * sizeof(float));
  f.s32("M", M);
  f.s32("N", N);
  f.s32("K", K);
  f.launch((const void*)matmul_naive, dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0);
}
