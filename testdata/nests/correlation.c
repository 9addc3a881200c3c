/* correlation: column means and standard deviations (with a branch for a
 * near-zero deviation and a square root), normalisation, then the
 * correlation matrix by a triangular product (j > i) writing both halves.
 * Usage: correlation [N M] (default 40 32): N samples of M variables. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

static double sum_all;
static unsigned long long hash_all = 1469598103934665603ULL;

/* fold adds n doubles to the checksum: their sum and an FNV-1a hash of
 * their bit patterns. */
static void fold(const double *a, long n) {
	for (long i = 0; i < n; i++) { /* LOOP: fold.i */
		union { double d; unsigned long long u; } v = {a[i]};
		sum_all += a[i];
		hash_all = (hash_all ^ v.u) * 1099511628211ULL;
	}
}

/* size returns argv[k] as an integer in [1, max], def when absent; a bad
 * one ends the program with status 2. */
static int size(int argc, char **argv, int k, int def, int max) {
	if (argc <= k)
		return def;
	char *end;
	long v = strtol(argv[k], &end, 10);
	if (*end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "correlation: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 8192);
	int m = size(argc, argv, 2, 32, 8192);
	double (*data)[m] = malloc(sizeof(double) * n * m);
	double (*corr)[m] = malloc(sizeof(double) * m * m);
	double *mean = malloc(sizeof(double) * m), *stddev = malloc(sizeof(double) * m);
	if (!data || !corr || !mean || !stddev) {
		fprintf(stderr, "correlation: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < m; j++) /* LOOP: init.j */
			data[i][j] = (double)(i * j % 17) / m + (j % 3 == 0 ? 0.0 : i);

	double fn = n, eps = 0.1;
	for (int j = 0; j < m; j++) { /* LOOP: mean.j */
		mean[j] = 0.0;
		for (int i = 0; i < n; i++) /* LOOP: mean.i */
			mean[j] += data[i][j];
		mean[j] /= fn;
	}
	for (int j = 0; j < m; j++) { /* LOOP: stddev.j */
		stddev[j] = 0.0;
		for (int i = 0; i < n; i++) /* LOOP: stddev.i */
			stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
		stddev[j] /= fn;
		stddev[j] = sqrt(stddev[j]);
		stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
	}
	double sqn = sqrt(fn);
	for (int i = 0; i < n; i++) /* LOOP: norm.i */
		for (int j = 0; j < m; j++) { /* LOOP: norm.j */
			data[i][j] -= mean[j];
			data[i][j] /= sqn * stddev[j];
		}
	for (int i = 0; i < m - 1; i++) { /* LOOP: corr.i */
		corr[i][i] = 1.0;
		for (int j = i + 1; j < m; j++) { /* LOOP: corr.j */
			corr[i][j] = 0.0;
			for (int k = 0; k < n; k++) /* LOOP: corr.k */
				corr[i][j] += data[k][i] * data[k][j];
			corr[j][i] = corr[i][j];
		}
	}
	corr[m - 1][m - 1] = 1.0;

	fold(&corr[0][0], (long)m * m);
	fold(stddev, m);
	printf("correlation %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	free(data);
	free(corr);
	free(mean);
	free(stddev);
	return 0;
}
