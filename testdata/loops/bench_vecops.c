/* Benchmark: vector operations on malloc'd double arrays of length N,
 * repeated R times: saxpy y = a*x + y, an element-wise product z = x*y, and
 * a dot product. The rep loop is sequential (each pass reads the last);
 * the element loops are parallel, the dot product a reduction. Usage:
 * bench_vecops [N] [R] (default 1000000 x 300, about 1 s natively at -O2;
 * see README.md). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 300;
	if (n < 1 || n > 100000000 || reps < 1) {
		fprintf(stderr, "bench_vecops: bad N or R\n");
		return 2;
	}
	double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
	if (!x || !y || !z)
		return 1;
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		x[i] = (double)(i % 97) / 97.0;
		y[i] = (double)(i % 89) / 178.0;
	}
	double dot = 0;
	for (int r = 0; r < reps; r++) { /* LOOP: rep.r */
		double a = 1.0 / (r + 2);
		for (int i = 0; i < n; i++) /* LOOP: saxpy.i */
			y[i] = a * x[i] + y[i];
		for (int i = 0; i < n; i++) /* LOOP: mul.i */
			z[i] = x[i] * y[i];
		for (int i = 0; i < n; i++) /* LOOP: dot.i */
			dot += z[i];
	}
	printf("bench_vecops n=%d reps=%d dot=%.17g\n", n, reps, dot);
	free(x);
	free(y);
	free(z);
	return 0;
}
