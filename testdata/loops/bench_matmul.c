/* Benchmark: double matrix multiply C = A*B (i, j parallel; k a reduction)
 * on malloc'd N x N matrices. Usage: bench_matmul [N] (default 850,
 * about 1 s natively at -O2; see README.md). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 850;
	if (n < 1 || n > 8192) {
		fprintf(stderr, "bench_matmul: bad N\n");
		return 2;
	}
	size_t nn = (size_t)n * (size_t)n;
	double *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *C = malloc(nn * sizeof *C);
	if (!A || !B || !C)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[(size_t)i * n + j] = (double)((i * 3 + j * 7) % 29) / 14.0 - 1.0;
			B[(size_t)i * n + j] = (double)((i + j * 11) % 31) / 15.0;
		}
	for (int i = 0; i < n; i++) /* LOOP: mm.i */
		for (int j = 0; j < n; j++) { /* LOOP: mm.j */
			double s = 0.0;
			for (int k = 0; k < n; k++) /* LOOP: mm.k */
				s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
			C[(size_t)i * n + j] = s;
		}
	double sum = 0;
	for (size_t p = 0; p < nn; p++) /* LOOP: sum.p */
		sum += C[p] * (double)(p % 7 + 1);
	printf("bench_matmul n=%d checksum=%.17g\n", n, sum);
	free(A);
	free(B);
	free(C);
	return 0;
}
