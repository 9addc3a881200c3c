/* alias: y[i] = 2*x[i] + 1 over n doubles, with x and y placed in one
 * buffer at offsets chosen on the command line, so that one binary runs
 * with disjoint or overlapping arrays. Usage: alias N XOFF YOFF. */
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((noinline)) kern(double *y, const double *x, long n) {
	for (long i = 0; i < n; i++)
		y[i] = 2.0 * x[i] + 1.0;
}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long xo = argc > 2 ? atol(argv[2]) : 0;
	long yo = argc > 3 ? atol(argv[3]) : 1000;
	if (n < 0 || xo < 0 || yo < 0 || n > 10000000 || xo > 10000000 || yo > 10000000) {
		fprintf(stderr, "alias: bad arguments\n");
		return 2;
	}
	long total = n + (xo > yo ? xo : yo) + 1;
	double *buf = malloc((size_t)total * sizeof *buf);
	if (!buf)
		return 1;
	for (long i = 0; i < total; i++)
		buf[i] = (double)(i % 17) * 0.25;
	kern(buf + yo, buf + xo, n);
	double s = 0;
	for (long i = 0; i < total; i++)
		s += buf[i] * (double)(i % 7 + 1);
	printf("alias n=%ld x=%ld y=%ld sum=%.17g\n", n, xo, yo, s);
	free(buf);
	return 0;
}
