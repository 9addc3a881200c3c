/* jacobi2dt: the reference for testdata/nests/jacobi2dt.c: the time loop
 * on the host, two 2D launches per step, arrays resident on the device. */
#include "ref.h"

__global__ void sweep(int n, const double *in, double *out) {
	int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
	if (i >= n - 1 || j >= n - 1)
		return;
	out[i * n + j] = 0.2 * (in[i * n + j] + in[i * n + j - 1] + in[i * n + j + 1] + in[(i + 1) * n + j] + in[(i - 1) * n + j]);
}

int main(int argc, char **argv) {
	int n = size("jacobi2dt", argc, argv, 1, 40, 1 << 14);
	int tsteps = size("jacobi2dt", argc, argv, 2, 8, 1 << 20);
	size_t bytes = sizeof(double) * n * n;
	double *A = (double *)host_alloc(bytes), *B = (double *)host_alloc(bytes);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			A[i * n + j] = ((double)i * (j + 2) + 2) / n;
			B[i * n + j] = ((double)i * (j + 3) + 3) / n;
		}

	double *dA = (double *)dev_alloc(bytes), *dB = (double *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	to_dev(dB, B, bytes);
	dim3 grid = DIM3(cdiv(n - 2, 16), cdiv(n - 2, 16), 1), block = DIM3(16, 16, 1);
	timer_start();
	for (int t = 0; t < tsteps; t++) {
		LAUNCH("steps", sweep, grid, block, n, dA, dB);
		LAUNCH("steps", sweep, grid, block, n, dB, dA);
	}
	report("jacobi2dt", timer_stop());
	to_host(A, dA, bytes);
	to_host(B, dB, bytes);

	fold(A, (long)n * n);
	fold(B, (long)n * n);
	printf("jacobi2dt %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	return 0;
}
