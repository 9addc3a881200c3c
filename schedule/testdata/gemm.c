/* gemm as PolyBench writes it: C = alpha*A*B + beta*C, k-j order with a beta loop. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int ni = argc > 1 ? atoi(argv[1]) : 40, nj = argc > 2 ? atoi(argv[2]) : 44, nk = argc > 3 ? atoi(argv[3]) : 48;
	if (ni < 1 || nj < 1 || nk < 1 || ni > 4000 || nj > 4000 || nk > 4000) {
		fprintf(stderr, "gemm: bad size\n");
		return 2;
	}
	double alpha = 1.5, beta = 1.2;
	double *A = malloc(sizeof(double) * ni * nk), *B = malloc(sizeof(double) * nk * nj), *C = malloc(sizeof(double) * ni * nj);
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++)
			C[i * nj + j] = (double)((i * j + 1) % ni) / ni;
	for (int i = 0; i < ni; i++)
		for (int k = 0; k < nk; k++)
			A[i * nk + k] = (double)(i * (k + 1) % nk) / nk;
	for (int k = 0; k < nk; k++)
		for (int j = 0; j < nj; j++)
			B[k * nj + j] = (double)(k * (j + 2) % nj) / nj;
	for (int i = 0; i < ni; i++) {
		for (int j = 0; j < nj; j++)
			C[i * nj + j] *= beta;
		for (int k = 0; k < nk; k++)
			for (int j = 0; j < nj; j++)
				C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
	}
	double s = 0;
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++)
			s += C[i * nj + j] * (1 + (i + j) % 5);
	printf("gemm %d %d %d checksum=%.17g\n", ni, nj, nk, s);
	return 0;
}
