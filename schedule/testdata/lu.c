/* LU decomposition without pivoting, PolyBench-like (k outer, sequential). */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 24;
	if (n < 2 || n > 4000) {
		fprintf(stderr, "lu: bad size\n");
		return 2;
	}
	double *A = malloc(sizeof(double) * n * n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = (i == j) ? n + 1.0 : (double)((i * j) % 7 + 1) / n;
	for (int k = 0; k < n; k++) {
		for (int i = k + 1; i < n; i++)
			A[i * n + k] /= A[k * n + k];
		for (int i = k + 1; i < n; i++)
			for (int j = k + 1; j < n; j++)
				A[i * n + j] -= A[i * n + k] * A[k * n + j];
	}
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += A[i * n + j] * (1 + (i + j) % 3);
	printf("lu %d checksum=%.17g\n", n, s);
	return 0;
}
