/* datasteps: a time-stepped 1D sweep whose load address depends on the
 * data, then a plain copy back. Each step, b[i] reads a[i-1] while a[i]
 * is below 1024 (always, from the initial values), else a[i-1+n] (far past
 * the elements the profile saw). At step FLIP the host sets a[n/2] to
 * 1500: that step's sweep reads outside its footprint, and its kernel
 * must fail, leaving the CPU to run the step (accel
 * TestDataDependentReplays). Usage: datasteps [N] [STEPS] [FLIP]
 * (default 2000 10 -1: never). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	int flip = argc > 3 ? atoi(argv[3]) : -1;
	if (n < 4 || n > 1 << 24 || steps < 1 || steps > 1 << 16) {
		fprintf(stderr, "datasteps: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * 2 * (n + 1));
	double *b = malloc(sizeof(double) * (n + 1));
	if (!a || !b)
		return 1;
	for (long i = 0; i < 2L * (n + 1); i++) /* LOOP: init.i */
		a[i] = 1.0 + 0.001 * (double)i;
	for (long i = 0; i <= n; i++) /* LOOP: initb.i */
		b[i] = 0;
	for (int t = 0; t < steps; t++) { /* LOOP: steps.t */
		if (t == flip)
			a[n / 2] = 1500.0;
		for (long i = 1; i < n; i++) { /* LOOP: steps.i */
			long k = i - 1 + ((long)a[i] >> 10) * n;
			b[i] = a[k] * 0.5 + 0.25;
		}
		for (long i = 1; i < n; i++) /* LOOP: steps.i2 */
			a[i] = b[i] + 0.001;
	}
	double s = 0;
	for (long i = 0; i <= n; i++) /* LOOP: sum.i */
		s += a[i] * (double)(i % 7 + 1);
	printf("datasteps n=%d steps=%d flip=%d sum=%.17g\n", n, steps, flip, s);
	free(a);
	free(b);
	return 0;
}
