/* A parallel loop around sqrt: gcc computes it inline and calls the
 * library only for a negative argument, to set errno. From round `neg` on,
 * one argument is negative: the call runs, the result is NaN and errno is
 * EDOM, which the program prints. Arguments: n, rounds, neg. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = atoi(argv[1]), rounds = atoi(argv[2]), neg = atoi(argv[3]);
	double *x = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++)
		x[i] = (i * 37 % 101) / 10.0;
	double sum = 0;
	for (int r = 0; r < rounds; r++) {
		if (r == neg)
			x[n / 2] = -50.0;
		for (int i = 0; i < n; i++) {
			double acc = 0;
			for (int j = 0; j < n; j++) {
				double d = x[j] - x[i];
				acc += sqrt(d * d * x[j] + 1.0);
			}
			f[i] = acc;
		}
		for (int i = 0; i < n; i++)
			sum += f[i] * (double)(1 + i % 3);
	}
	printf("%.17g errno=%d\n", sum, errno);
	return 0;
}
