/* trmm: the reference for testdata/nests/trmm.c, interchanged: one thread
 * per column j of B runs the rows i in order, each with its sum over k > i
 * (rows below i are still unchanged when row i reads them). */
#include "ref.h"

__global__ void trmm(int m, int n, double alpha, const double *A, double *B) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= n)
		return;
	for (int i = 0; i < m; i++) {
		double b = B[i * n + j];
		for (int k = i + 1; k < m; k++)
			b += A[k * m + i] * B[k * n + j];
		B[i * n + j] = alpha * b;
	}
}

int main(int argc, char **argv) {
	int m = size("trmm", argc, argv, 1, 32, 1 << 14);
	int n = size("trmm", argc, argv, 2, 36, 1 << 14);
	double alpha = 1.5;
	size_t sA = sizeof(double) * m * m, sB = sizeof(double) * m * n;
	double *A = (double *)host_alloc(sA), *B = (double *)host_alloc(sB);
	memset(A, 0, sA);
	for (int i = 0; i < m; i++) {
		for (int j = 0; j < i; j++)
			A[i * m + j] = (double)((i + j) % m) / m;
		A[i * m + i] = 1.0;
		for (int j = 0; j < n; j++)
			B[i * n + j] = (double)((n + (i - j)) % n) / n;
	}

	double *dA = (double *)dev_alloc(sA), *dB = (double *)dev_alloc(sB);
	to_dev(dA, A, sA);
	to_dev(dB, B, sB);
	timer_start();
	LAUNCH("kernel", trmm, DIM3(cdiv(n, 128), 1, 1), DIM3(128, 1, 1), m, n, alpha, dA, dB);
	report("trmm", timer_stop());
	to_host(B, dB, sB);

	fold(B, (long)m * n);
	printf("trmm %d %d sum=%.17g hash=%016llx\n", m, n, sum_all, hash_all);
	return 0;
}
