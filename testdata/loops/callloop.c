/* A loop calling a function that is kept out of line (noinline): the nest
 * contains a call, so it is not a candidate; the same computation written
 * inline is parallel. Usage: callloop [N] (default 200000). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double f(double x) { return x * x * 0.5 + 1.0 / (1.0 + x); }

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	if (n < 1) {
		fprintf(stderr, "callloop: bad N\n");
		return 2;
	}
	double *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
	double *out2 = malloc((size_t)n * sizeof *out2);
	if (!in || !out || !out2)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		in[i] = (double)(i % 1000) * 0.001;
	for (int i = 0; i < n; i++) /* LOOP: call.i */
		out[i] = f(in[i]);
	for (int i = 0; i < n; i++) /* LOOP: inl.i */
		out2[i] = in[i] * in[i] * 0.5 + 1.0 / (1.0 + in[i]);
	double s = 0;
	int same = 1;
	for (int i = 0; i < n; i++) { /* LOOP: sum.i */
		s += out[i];
		same &= out[i] == out2[i];
	}
	printf("callloop n=%d sum=%.17g same=%d\n", n, s, same);
	free(in);
	free(out);
	free(out2);
	return same ? 0 : 1;
}
