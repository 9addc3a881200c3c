/* A nest root entered once per iteration of an outer loop that is not
 * part of its nest, with a trip count that shrinks by one at every entry:
 * the j loop of a modified Gram-Schmidt step, from k+1 to n, with two
 * inner loops over the m rows. Here the j loop is in a function of its
 * own, called once per k. Once the nest has spent its probe budget its
 * entries are only counted, and each must keep its own trip count
 * (n-k-1) rather than add a second one to the last sampled entry (accel
 * TestShrinkingEntries). Arguments: m, n. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Projects column k of q out of the columns of a after k, writing the
 * dot products into row k of r. */
__attribute__((noinline)) static void project_out(double *a, const double *q, double *r, int m, int n, int k) {
	for (int j = k + 1; j < n; j++) {
		double dot = 0;
		for (int i = 0; i < m; i++)
			dot += q[i * n + k] * a[i * n + j];
		r[k * n + j] = dot;
		for (int i = 0; i < m; i++)
			a[i * n + j] -= q[i * n + k] * dot;
	}
}

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 60, n = argc > 2 ? atoi(argv[2]) : 50;
	if (m < 2 || n < 2 || m > 4096 || n > 4096) {
		fprintf(stderr, "shrinkrows: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * n), *q = malloc(sizeof(double) * m * n);
	double *r = calloc((size_t)n * n, sizeof(double));
	if (!a || !q || !r)
		return 1;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			a[i * n + j] = (i * 7 + j * 3) % 13 + 1.0 + (i == j);
	for (int k = 0; k < n; k++) {
		double norm = 0;
		for (int i = 0; i < m; i++)
			norm += a[i * n + k] * a[i * n + k];
		r[k * n + k] = sqrt(norm);
		for (int i = 0; i < m; i++)
			q[i * n + k] = a[i * n + k] / r[k * n + k];
		project_out(a, q, r, m, n, k);
	}
	double s = 0;
	for (int i = 0; i < n * n; i++)
		s += r[i] * (i % 5 + 1);
	for (int i = 0; i < m * n; i++)
		s += q[i];
	printf("%.9e\n", s);
	return 0;
}
