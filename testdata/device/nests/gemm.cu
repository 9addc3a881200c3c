/* gemm: the reference for testdata/nests/gemm.c. One thread per C[i][j]
 * scales it by beta and adds the products over k in order. */
#include "ref.h"

__global__ void gemm(int ni, int nj, int nk, double alpha, double beta, const double *A, const double *B, double *C) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= ni || j >= nj)
		return;
	double c = C[i * nj + j] * beta;
	for (int k = 0; k < nk; k++)
		c += alpha * A[i * nk + k] * B[k * nj + j];
	C[i * nj + j] = c;
}

int main(int argc, char **argv) {
	int ni = size("gemm", argc, argv, 1, 40, 8192);
	int nj = size("gemm", argc, argv, 2, 44, 8192);
	int nk = size("gemm", argc, argv, 3, 48, 8192);
	double alpha = 1.5, beta = 1.2;
	double *A = (double *)host_alloc(sizeof(double) * ni * nk);
	double *B = (double *)host_alloc(sizeof(double) * nk * nj);
	double *C = (double *)host_alloc(sizeof(double) * ni * nj);
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++)
			C[i * nj + j] = (double)((i * j + 1) % ni) / ni;
	for (int i = 0; i < ni; i++)
		for (int k = 0; k < nk; k++)
			A[i * nk + k] = (double)(i * (k + 1) % nk) / nk;
	for (int k = 0; k < nk; k++)
		for (int j = 0; j < nj; j++)
			B[k * nj + j] = (double)(k * (j + 2) % nj) / nj;

	double *dA = (double *)dev_alloc(sizeof(double) * ni * nk);
	double *dB = (double *)dev_alloc(sizeof(double) * nk * nj);
	double *dC = (double *)dev_alloc(sizeof(double) * ni * nj);
	to_dev(dA, A, sizeof(double) * ni * nk);
	to_dev(dB, B, sizeof(double) * nk * nj);
	to_dev(dC, C, sizeof(double) * ni * nj);
	timer_start();
	LAUNCH("kernel", gemm, DIM3(cdiv(nj, 16), cdiv(ni, 16), 1), DIM3(16, 16, 1), ni, nj, nk, alpha, beta, dA, dB, dC);
	report("gemm", timer_stop());
	to_host(C, dC, sizeof(double) * ni * nj);

	fold(C, (long)ni * nj);
	printf("gemm %d %d %d sum=%.17g hash=%016llx\n", ni, nj, nk, sum_all, hash_all);
	dev_free(dA);
	dev_free(dB);
	dev_free(dC);
	free(A);
	free(B);
	free(C);
	return 0;
}
