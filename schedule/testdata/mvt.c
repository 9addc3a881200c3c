/* Transposed matrix-vector product: x2[j] += A[i][j] * y[i], i outer (row-major walk). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 40;
	if (n < 1 || n > 20000) {
		fprintf(stderr, "mvt: bad size\n");
		return 2;
	}
	double *A = malloc(sizeof(double) * n * n), *y = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++) {
		y[i] = (double)(i % 5) / n;
		x[i] = 0;
		for (int j = 0; j < n; j++)
			A[i * n + j] = (double)((i + 2 * j) % n) / n;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			x[j] = x[j] + A[i * n + j] * y[i];
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * (1 + i % 3);
	printf("mvt %d checksum=%.17g\n", n, s);
	return 0;
}
