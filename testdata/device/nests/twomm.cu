/* twomm: the reference for testdata/nests/twomm.c. One thread per tmp[i][j]
 * sums alpha*A*B over k; then one thread per D[i][l] scales it by beta and
 * adds tmp*C over j. */
#include "ref.h"

__global__ void mm1(int ni, int nj, int nk, double alpha, const double *A, const double *B, double *tmp) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= ni || j >= nj)
		return;
	double t = 0.0;
	for (int k = 0; k < nk; k++)
		t += alpha * A[i * nk + k] * B[k * nj + j];
	tmp[i * nj + j] = t;
}

__global__ void mm2(int ni, int nj, int nl, double beta, const double *tmp, const double *C, double *D) {
	int l = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= ni || l >= nl)
		return;
	double d = D[i * nl + l] * beta;
	for (int j = 0; j < nj; j++)
		d += tmp[i * nj + j] * C[j * nl + l];
	D[i * nl + l] = d;
}

int main(int argc, char **argv) {
	int ni = size("twomm", argc, argv, 1, 24, 8192);
	int nj = size("twomm", argc, argv, 2, 26, 8192);
	int nk = size("twomm", argc, argv, 3, 28, 8192);
	int nl = size("twomm", argc, argv, 4, 30, 8192);
	double alpha = 1.5, beta = 1.2;
	size_t sA = sizeof(double) * ni * nk, sB = sizeof(double) * nk * nj, sC = sizeof(double) * nj * nl;
	size_t sD = sizeof(double) * ni * nl, sT = sizeof(double) * ni * nj;
	double *A = (double *)host_alloc(sA), *B = (double *)host_alloc(sB), *C = (double *)host_alloc(sC);
	double *D = (double *)host_alloc(sD);
	for (int i = 0; i < ni; i++)
		for (int k = 0; k < nk; k++)
			A[i * nk + k] = (double)((i * k + 1) % ni) / ni;
	for (int k = 0; k < nk; k++)
		for (int j = 0; j < nj; j++)
			B[k * nj + j] = (double)(k * (j + 1) % nj) / nj;
	for (int j = 0; j < nj; j++)
		for (int l = 0; l < nl; l++)
			C[j * nl + l] = (double)((j * (l + 3) + 1) % nl) / nl;
	for (int i = 0; i < ni; i++)
		for (int l = 0; l < nl; l++)
			D[i * nl + l] = (double)(i * (l + 2) % nk) / nk;

	double *dA = (double *)dev_alloc(sA), *dB = (double *)dev_alloc(sB), *dC = (double *)dev_alloc(sC);
	double *dD = (double *)dev_alloc(sD), *dT = (double *)dev_alloc(sT);
	to_dev(dA, A, sA);
	to_dev(dB, B, sB);
	to_dev(dC, C, sC);
	to_dev(dD, D, sD);
	timer_start();
	LAUNCH("mm1", mm1, DIM3(cdiv(nj, 16), cdiv(ni, 16), 1), DIM3(16, 16, 1), ni, nj, nk, alpha, dA, dB, dT);
	LAUNCH("mm2", mm2, DIM3(cdiv(nl, 16), cdiv(ni, 16), 1), DIM3(16, 16, 1), ni, nj, nl, beta, dT, dC, dD);
	report("twomm", timer_stop());
	to_host(D, dD, sD);

	fold(D, (long)ni * nl);
	printf("twomm %d %d %d %d sum=%.17g hash=%016llx\n", ni, nj, nk, nl, sum_all, hash_all);
	return 0;
}
