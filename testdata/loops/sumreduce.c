/* Scalar sum reductions over a global double array and a malloc'd int
 * array. Usage: sumreduce [N] (N <= 4000000, default 1000000). */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 4000000
static double v[MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	if (n < 1 || n > MAXN) {
		fprintf(stderr, "sumreduce: bad N\n");
		return 2;
	}
	int *w = malloc((size_t)n * sizeof *w);
	if (!w)
		return 1;
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		v[i] = 1.0 / (double)(i + 1);
		w[i] = (i % 201) - 100;
	}
	double s = 0.0;
	for (int i = 0; i < n; i++) /* LOOP: dsum.i */
		s += v[i];
	long long t = 0;
	for (int i = 0; i < n; i++) /* LOOP: isum.i */
		t += w[i];
	printf("sumreduce n=%d dsum=%.17g isum=%lld\n", n, s, t);
	free(w);
	return 0;
}
