/* Two truly sequential loop nests, for a hand-edited profile that marks
 * them parallel: a prefix sum (iteration i reads what i-1 wrote) and a
 * Gauss-Seidel sweep in place (row i reads row i-1 as this sweep left
 * it). Arguments: the prefix sum's length, the grid's side. */
#include <stdio.h>
#include <stdlib.h>

static void prefix(double *a, const double *b, int n) {
	for (int i = 1; i < n; i++)
		a[i] = a[i - 1] * 0.5 + b[i];
}

static void gauss_seidel(double *g, int n) {
	for (int i = 1; i < n - 1; i++)
		for (int j = 1; j < n - 1; j++)
			g[i * n + j] = (g[(i - 1) * n + j] + g[i * n + j - 1] + g[i * n + j] + g[(i + 1) * n + j] + g[i * n + j + 1]) * 0.2;
}

int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]);
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	double *g = malloc((long)m * m * sizeof *g);
	for (int i = 0; i < n; i++) {
		a[i] = i % 3;
		b[i] = (i * 7) % 11;
	}
	for (long i = 0; i < (long)m * m; i++)
		g[i] = i % 13;
	prefix(a, b, n);
	gauss_seidel(g, m);
	double s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * (i % 5 + 1);
	for (long i = 0; i < (long)m * m; i++)
		s += g[i] * (i % 7 + 1);
	printf("%.17g\n", s);
	return 0;
}
