/* Gauss-Seidel 2D in place: every loop carries a dependence. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 30, ts = argc > 2 ? atoi(argv[2]) : 4;
	if (n < 3 || n > 8000 || ts < 1) {
		fprintf(stderr, "seidel: bad size\n");
		return 2;
	}
	double *A = malloc(sizeof(double) * n * n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = ((double)i * (j + 2) + 2) / n;
	for (int t = 0; t < ts; t++)
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				A[i * n + j] = (A[(i - 1) * n + j] + A[i * n + j - 1] + A[i * n + j] + A[i * n + j + 1] + A[(i + 1) * n + j]) / 5.0;
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += A[i * n + j];
	printf("seidel %d checksum=%.17g\n", n, s);
	return 0;
}
