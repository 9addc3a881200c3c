/* heat3d: the reference for testdata/nests/heat3d.c: the time loop on the
 * host, two 3D launches per step, arrays resident on the device. */
#include "ref.h"

__global__ void sweep(int n, const float *in, float *out) {
	int k = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
	int i = blockIdx.z * blockDim.z + threadIdx.z + 1;
	if (i >= n - 1 || j >= n - 1 || k >= n - 1)
		return;
#define IN(a, b, c) in[((a) * n + (b)) * n + (c)]
	out[(i * n + j) * n + k] = 0.125f * (IN(i + 1, j, k) - 2.0f * IN(i, j, k) + IN(i - 1, j, k))
		+ 0.125f * (IN(i, j + 1, k) - 2.0f * IN(i, j, k) + IN(i, j - 1, k))
		+ 0.125f * (IN(i, j, k + 1) - 2.0f * IN(i, j, k) + IN(i, j, k - 1))
		+ IN(i, j, k);
#undef IN
}

int main(int argc, char **argv) {
	int n = size("heat3d", argc, argv, 1, 14, 1024);
	int tsteps = size("heat3d", argc, argv, 2, 6, 1 << 20);
	size_t bytes = sizeof(float) * n * n * n;
	float *A = (float *)host_alloc(bytes), *B = (float *)host_alloc(bytes);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			for (int k = 0; k < n; k++)
				A[(i * n + j) * n + k] = B[(i * n + j) * n + k] = (float)(i + j + (n - k)) * 10 / n;

	float *dA = (float *)dev_alloc(bytes), *dB = (float *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	to_dev(dB, B, bytes);
	dim3 grid = DIM3(cdiv(n - 2, 32), cdiv(n - 2, 4), cdiv(n - 2, 2)), block = DIM3(32, 4, 2);
	timer_start();
	for (int t = 1; t <= tsteps; t++) {
		LAUNCH("steps", sweep, grid, block, n, dA, dB);
		LAUNCH("steps", sweep, grid, block, n, dB, dA);
	}
	report("heat3d", timer_stop());
	to_host(A, dA, bytes);

	fold_f(A, (long)n * n * n);
	printf("heat3d %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	return 0;
}
