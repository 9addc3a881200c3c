/* Triangular loop nests (j <= i): filling a lower-triangular matrix
 * (both levels parallel) and a lower-triangular matrix-vector product
 * (rows parallel, columns a reduction). Usage: triangular [N] (default 200). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 200;
	if (n < 1 || n > 4096) {
		fprintf(stderr, "triangular: bad N\n");
		return 2;
	}
	double *L = calloc((size_t)n * (size_t)n, sizeof *L);
	double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
	if (!L || !x || !y)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: x.i */
		x[i] = (double)(i % 9) - 4.0;
	for (int i = 0; i < n; i++) /* LOOP: fill.i */
		for (int j = 0; j <= i; j++) /* LOOP: fill.j */
			L[i * n + j] = 1.0 / (double)(i - j + 1);
	for (int i = 0; i < n; i++) { /* LOOP: trmv.i */
		double s = 0.0;
		for (int j = 0; j <= i; j++) /* LOOP: trmv.j */
			s += L[i * n + j] * x[j];
		y[i] = s;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) /* LOOP: sum.i */
		sum += y[i] * (double)(i + 1);
	printf("triangular n=%d checksum=%.17g y[n-1]=%.17g\n", n, sum, y[n - 1]);
	free(L);
	free(x);
	free(y);
	return 0;
}
