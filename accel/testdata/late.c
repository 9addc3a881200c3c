/* A nest entered once, long after another: an init nest long enough that
 * a profiling round ends inside it, then a product nest entered once,
 * which only a later profiling round sees. Arguments: n, k. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]);
	double *a = malloc((long)n * n * sizeof *a), *b = malloc((long)m * n * sizeof *b), *c = malloc((long)n * n * sizeof *c);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			a[(long)i * n + j] = (double)((i * 7 + j * 3) % 23) / 11.0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			b[(long)i * n + j] = (double)((i * 5 + j) % 19) / 7.0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < m; k++)
				s += a[(long)i * n + k] * b[(long)k * n + j];
			c[(long)i * n + j] = s;
		}
	double sum = 0;
	for (long i = 0; i < (long)n * n; i++)
		sum += c[i] * (double)(1 + i % 5);
	printf("%.17g\n", sum);
	return 0;
}
