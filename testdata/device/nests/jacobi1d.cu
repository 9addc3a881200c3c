/* jacobi1d: the reference for testdata/nests/jacobi1d.c: the time loop on
 * the host, two launches per step, arrays resident on the device. */
#include "ref.h"

__global__ void sweep(int n, const double *in, double *out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
	if (i >= n - 1)
		return;
	out[i] = 0.33333 * (in[i - 1] + in[i] + in[i + 1]);
}

int main(int argc, char **argv) {
	int n = size("jacobi1d", argc, argv, 1, 400, 1 << 26);
	int tsteps = size("jacobi1d", argc, argv, 2, 20, 1 << 20);
	size_t bytes = sizeof(double) * n;
	double *A = (double *)host_alloc(bytes), *B = (double *)host_alloc(bytes);
	for (int i = 0; i < n; i++) {
		A[i] = ((double)i + 2) / n;
		B[i] = ((double)i + 3) / n;
	}

	double *dA = (double *)dev_alloc(bytes), *dB = (double *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	to_dev(dB, B, bytes);
	dim3 grid = DIM3(cdiv(n - 2, 256), 1, 1), block = DIM3(256, 1, 1);
	timer_start();
	for (int t = 0; t < tsteps; t++) {
		LAUNCH("steps", sweep, grid, block, n, dA, dB);
		LAUNCH("steps", sweep, grid, block, n, dB, dA);
	}
	report("jacobi1d", timer_stop());
	to_host(A, dA, bytes);
	to_host(B, dB, bytes);

	fold(A, n);
	fold(B, n);
	printf("jacobi1d %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	return 0;
}
