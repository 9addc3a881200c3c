/* lu: the reference for testdata/nests/lu.c: the k loop on the host, two
 * launches per k (the column below the pivot, then the trailing update),
 * the matrix resident on the device. */
#include "ref.h"

__global__ void scale(int n, int k, double *A) {
	int i = blockIdx.x * blockDim.x + threadIdx.x + k + 1;
	if (i >= n)
		return;
	A[i * n + k] /= A[k * n + k];
}

__global__ void update(int n, int k, double *A) {
	int j = blockIdx.x * blockDim.x + threadIdx.x + k + 1;
	int i = blockIdx.y * blockDim.y + threadIdx.y + k + 1;
	if (i >= n || j >= n)
		return;
	A[i * n + j] -= A[i * n + k] * A[k * n + j];
}

int main(int argc, char **argv) {
	int n = size("lu", argc, argv, 1, 40, 1 << 14);
	size_t bytes = sizeof(double) * n * n;
	double *A = (double *)host_alloc(bytes);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = i == j ? n + 1.0 : (double)((i + 2 * j) % 7 + 1) / (4 * n);

	double *dA = (double *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	timer_start();
	for (int k = 0; k < n; k++) {
		int rest = n - k - 1;
		if (rest <= 0)
			continue;
		LAUNCH("kernel", scale, DIM3(cdiv(rest, 256), 1, 1), DIM3(256, 1, 1), n, k, dA);
		LAUNCH("kernel", update, DIM3(cdiv(rest, 16), cdiv(rest, 16), 1), DIM3(16, 16, 1), n, k, dA);
	}
	report("lu", timer_stop());
	to_host(A, dA, bytes);

	fold(A, (long)n * n);
	printf("lu %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
