/* syr2k: the reference for testdata/nests/syr2k.c. One thread per element of
 * the lower triangle of C scales it by beta and adds the k terms in order;
 * threads above the diagonal do nothing. */
#include "ref.h"

__global__ void syr2k(int n, int m, double alpha, double beta, const double *A, const double *B, double *C) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j > i)
		return;
	double c = C[i * n + j] * beta;
	for (int k = 0; k < m; k++)
		c += A[j * m + k] * alpha * B[i * m + k] + B[j * m + k] * alpha * A[i * m + k];
	C[i * n + j] = c;
}

int main(int argc, char **argv) {
	int n = size("syr2k", argc, argv, 1, 32, 8192);
	int m = size("syr2k", argc, argv, 2, 24, 8192);
	double alpha = 1.5, beta = 1.2;
	size_t sA = sizeof(double) * n * m, sC = sizeof(double) * n * n;
	double *A = (double *)host_alloc(sA), *B = (double *)host_alloc(sA), *C = (double *)host_alloc(sC);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < m; k++) {
			A[i * m + k] = (double)((i * k + 1) % n) / n;
			B[i * m + k] = (double)((i * k + 2) % m) / m;
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			C[i * n + j] = (double)((i * j + 3) % n) / m;

	double *dA = (double *)dev_alloc(sA), *dB = (double *)dev_alloc(sA), *dC = (double *)dev_alloc(sC);
	to_dev(dA, A, sA);
	to_dev(dB, B, sA);
	to_dev(dC, C, sC);
	timer_start();
	LAUNCH("kernel", syr2k, DIM3(cdiv(n, 16), cdiv(n, 16), 1), DIM3(16, 16, 1), n, m, alpha, beta, dA, dB, dC);
	report("syr2k", timer_stop());
	to_host(C, dC, sC);

	fold(C, (long)n * n);
	printf("syr2k %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	return 0;
}
