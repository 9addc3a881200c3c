/* atax: y = A^T (A x), PolyBench shape (tmp per row, y accumulated across rows). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 38, n = argc > 2 ? atoi(argv[2]) : 42;
	if (m < 1 || n < 1 || m > 20000 || n > 20000) {
		fprintf(stderr, "atax: bad size\n");
		return 2;
	}
	double *A = malloc(sizeof(double) * m * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *tmp = malloc(sizeof(double) * m);
	for (int i = 0; i < n; i++)
		x[i] = 1 + (double)i / n;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = (double)((i + j) % n) / (5 * m);
	for (int i = 0; i < n; i++)
		y[i] = 0;
	for (int i = 0; i < m; i++) {
		tmp[i] = 0.0;
		for (int j = 0; j < n; j++)
			tmp[i] = tmp[i] + A[i * n + j] * x[j];
		for (int j = 0; j < n; j++)
			y[j] = y[j] + A[i * n + j] * tmp[i];
	}
	double s = 0;
	for (int i = 0; i < n; i++)
		s += y[i] * (1 + i % 7);
	printf("atax %d %d checksum=%.17g\n", m, n, s);
	return 0;
}
