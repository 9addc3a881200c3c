/* Benchmark: 2D 5-point Jacobi stencil on malloc'd N x N grids inside a
 * sequential time loop with buffer swap. Usage: bench_stencil2d [N] [T]
 * (default 2000 120, about 1 s natively at -O2; see README.md). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int steps = argc > 2 ? atoi(argv[2]) : 120;
	if (n < 3 || n > 20000 || steps < 0) {
		fprintf(stderr, "bench_stencil2d: bad arguments\n");
		return 2;
	}
	size_t nn = (size_t)n * (size_t)n;
	double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			a[(size_t)i * n + j] = b[(size_t)i * n + j] = (double)((i * 5 + j * 3) % 17);
	for (int t = 0; t < steps; t++) { /* LOOP: st.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: st.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: st.j */
				b[(size_t)i * n + j] =
				    0.2 * (a[(size_t)i * n + j] + a[(size_t)(i - 1) * n + j] + a[(size_t)(i + 1) * n + j] +
					   a[(size_t)i * n + j - 1] + a[(size_t)i * n + j + 1]);
		double *tmp = a;
		a = b;
		b = tmp;
	}
	double sum = 0;
	for (size_t p = 0; p < nn; p++) /* LOOP: sum.p */
		sum += a[p] * (double)(p % 3 + 1);
	printf("bench_stencil2d n=%d t=%d checksum=%.17g\n", n, steps, sum);
	free(a);
	free(b);
	return 0;
}
