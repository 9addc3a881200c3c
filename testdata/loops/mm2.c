/* Two chained matrix multiplies on malloc'd blocks: T = A*B, then
 * D = T*C. Usage: mm2 [N] (default 48). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 48;
	if (n < 1 || n > 2048) {
		fprintf(stderr, "mm2: bad N\n");
		return 2;
	}
	size_t nn = (size_t)n * (size_t)n;
	double *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *C = malloc(nn * sizeof *C);
	double *T = malloc(nn * sizeof *T), *D = malloc(nn * sizeof *D);
	if (!A || !B || !C || !T || !D)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[i * n + j] = (double)((i + j) % 10) * 0.1;
			B[i * n + j] = (double)((i * j) % 7) - 3.0;
			C[i * n + j] = (double)((2 * i + j) % 9) * 0.25;
		}
	for (int i = 0; i < n; i++) /* LOOP: mm1.i */
		for (int j = 0; j < n; j++) { /* LOOP: mm1.j */
			double s = 0.0;
			for (int k = 0; k < n; k++) /* LOOP: mm1.k */
				s += A[i * n + k] * B[k * n + j];
			T[i * n + j] = s;
		}
	for (int i = 0; i < n; i++) /* LOOP: mm2.i */
		for (int j = 0; j < n; j++) { /* LOOP: mm2.j */
			double s = 0.0;
			for (int k = 0; k < n; k++) /* LOOP: mm2.k */
				s += T[i * n + k] * C[k * n + j];
			D[i * n + j] = s;
		}
	double sum = 0;
	for (size_t i = 0; i < nn; i++) /* LOOP: sum.i */
		sum += D[i] * (double)(i % 3 + 1);
	printf("mm2 n=%d checksum=%.17g d0=%.17g\n", n, sum, D[0]);
	free(A);
	free(B);
	free(C);
	free(T);
	free(D);
	return 0;
}
