/* Jacobi 2D with time steps, two arrays, PolyBench shape. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 40, ts = argc > 2 ? atoi(argv[2]) : 6;
	if (n < 3 || n > 8000 || ts < 1 || ts > 10000) {
		fprintf(stderr, "jacobi2d: bad size\n");
		return 2;
	}
	double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			A[i * n + j] = ((double)i * (j + 2) + 2) / n;
			B[i * n + j] = ((double)i * (j + 3) + 3) / n;
		}
	for (int t = 0; t < ts; t++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1] + A[(i + 1) * n + j] + A[(i - 1) * n + j]);
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				A[i * n + j] = 0.2 * (B[i * n + j] + B[i * n + j - 1] + B[i * n + j + 1] + B[(i + 1) * n + j] + B[(i - 1) * n + j]);
	}
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += A[i * n + j] * (1 + (i + j) % 3);
	printf("jacobi2d %d %d checksum=%.17g\n", n, ts, s);
	return 0;
}
