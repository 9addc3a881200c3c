/* cholesky: the reference for testdata/nests/cholesky.c: the column loop on
 * the host; per column one thread computes the diagonal element, then one
 * thread per row below it runs the dot product over k < j. */
#include <math.h>
#include "ref.h"

__global__ void diag(int n, int j, double *A) {
	if (blockIdx.x * blockDim.x + threadIdx.x != 0)
		return;
	double d = A[j * n + j];
	for (int k = 0; k < j; k++)
		d -= A[j * n + k] * A[j * n + k];
	A[j * n + j] = sqrt(d);
}

__global__ void below(int n, int j, double *A) {
	int i = blockIdx.x * blockDim.x + threadIdx.x + j + 1;
	if (i >= n)
		return;
	double a = A[i * n + j];
	for (int k = 0; k < j; k++)
		a -= A[i * n + k] * A[j * n + k];
	A[i * n + j] = a / A[j * n + j];
}

int main(int argc, char **argv) {
	int n = size("cholesky", argc, argv, 1, 40, 1 << 14);
	size_t bytes = sizeof(double) * n * n;
	double *A = (double *)host_alloc(bytes);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = 1.0 / (1 + (i > j ? i - j : j - i)) + (i == j ? n : 0);

	double *dA = (double *)dev_alloc(bytes);
	to_dev(dA, A, bytes);
	timer_start();
	for (int j = 0; j < n; j++) {
		LAUNCH("kernel", diag, DIM3(1, 1, 1), DIM3(1, 1, 1), n, j, dA);
		if (n - j - 1 > 0)
			LAUNCH("kernel", below, DIM3(cdiv(n - j - 1, 256), 1, 1), DIM3(256, 1, 1), n, j, dA);
	}
	report("cholesky", timer_stop());
	to_host(A, dA, bytes);

	fold(A, (long)n * n);
	printf("cholesky %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
