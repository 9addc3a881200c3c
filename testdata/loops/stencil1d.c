/* 1D 3-point stencil inside a sequential time loop, two malloc'd buffers
 * swapped after every step. Usage: stencil1d [N] [T] (default 100000 50). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int steps = argc > 2 ? atoi(argv[2]) : 50;
	if (n < 3 || steps < 0) {
		fprintf(stderr, "stencil1d: bad arguments\n");
		return 2;
	}
	double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		a[i] = b[i] = (double)((i * 37) % 101);
	for (int t = 0; t < steps; t++) { /* LOOP: st.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: st.i */
			b[i] = (a[i - 1] + 2.0 * a[i] + a[i + 1]) * 0.25;
		double *tmp = a;
		a = b;
		b = tmp;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) /* LOOP: sum.i */
		sum += a[i] * (double)(i % 7);
	printf("stencil1d n=%d t=%d checksum=%.17g a[n/2]=%.17g\n", n, steps, sum, a[n / 2]);
	free(a);
	free(b);
	return 0;
}
