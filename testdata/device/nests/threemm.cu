/* threemm: the reference for testdata/nests/threemm.c. One thread per
 * element of each product, the sum in a float register. */
#include "ref.h"

__global__ void product(int n, float *X, const float *P, const float *Q) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= n)
		return;
	float s = 0.0f;
	for (int k = 0; k < n; k++)
		s += P[i * n + k] * Q[k * n + j];
	X[i * n + j] = s;
}

int main(int argc, char **argv) {
	int n = size("threemm", argc, argv, 1, 28, 8192);
	size_t bytes = sizeof(float) * n * n;
	float *A = (float *)host_alloc(bytes), *B = (float *)host_alloc(bytes);
	float *C = (float *)host_alloc(bytes), *D = (float *)host_alloc(bytes);
	float *G = (float *)host_alloc(bytes);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			A[i * n + j] = (float)((i * j + 1) % n) / (5 * n);
			B[i * n + j] = (float)((i * (j + 1) + 2) % n) / (5 * n);
			C[i * n + j] = (float)(i * (j + 3) % n) / (5 * n);
			D[i * n + j] = (float)((i * (j + 2) + 2) % n) / (5 * n);
		}

	float *dA = (float *)dev_alloc(bytes), *dB = (float *)dev_alloc(bytes), *dC = (float *)dev_alloc(bytes);
	float *dD = (float *)dev_alloc(bytes), *dE = (float *)dev_alloc(bytes), *dF = (float *)dev_alloc(bytes);
	float *dG = (float *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	to_dev(dB, B, bytes);
	to_dev(dC, C, bytes);
	to_dev(dD, D, bytes);
	dim3 grid = DIM3(cdiv(n, 16), cdiv(n, 16), 1), block = DIM3(16, 16, 1);
	timer_start();
	LAUNCH("mm", product, grid, block, n, dE, dA, dB);
	LAUNCH("mm", product, grid, block, n, dF, dC, dD);
	LAUNCH("mm", product, grid, block, n, dG, dE, dF);
	report("threemm", timer_stop());
	to_host(G, dG, bytes);

	fold_f(G, (long)n * n);
	printf("threemm %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
