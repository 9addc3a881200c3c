/* 2mm: D = alpha*A*B*C + beta*D, PolyBench shape (tmp then D, each with an init statement). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int ni = argc > 1 ? atoi(argv[1]) : 30, nj = argc > 2 ? atoi(argv[2]) : 34, nk = argc > 3 ? atoi(argv[3]) : 38, nl = argc > 4 ? atoi(argv[4]) : 42;
	if (ni < 1 || nj < 1 || nk < 1 || nl < 1 || ni > 4000 || nj > 4000 || nk > 4000 || nl > 4000) {
		fprintf(stderr, "twomm: bad size\n");
		return 2;
	}
	double alpha = 1.5, beta = 1.2;
	double *tmp = malloc(sizeof(double) * ni * nj), *A = malloc(sizeof(double) * ni * nk), *B = malloc(sizeof(double) * nk * nj);
	double *C = malloc(sizeof(double) * nj * nl), *D = malloc(sizeof(double) * ni * nl);
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
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++) {
			tmp[i * nj + j] = 0.0;
			for (int k = 0; k < nk; ++k)
				tmp[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
		}
	for (int i = 0; i < ni; i++)
		for (int l = 0; l < nl; l++) {
			D[i * nl + l] *= beta;
			for (int j = 0; j < nj; ++j)
				D[i * nl + l] += tmp[i * nj + j] * C[j * nl + l];
		}
	double s = 0;
	for (int i = 0; i < ni; i++)
		for (int l = 0; l < nl; l++)
			s += D[i * nl + l] * (1 + (i + l) % 5);
	printf("twomm %d checksum=%.17g\n", ni, s);
	return 0;
}
