/* covariance: column means, centring, then the symmetric covariance
 * matrix by a triangular product (j >= i) whose k loop sums in memory and
 * which writes both cov[i][j] and cov[j][i]. Usage: covariance [N M]
 * (default 40 32): N samples of M variables. */
#include <stdio.h>
#include <stdlib.h>

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
		fprintf(stderr, "covariance: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 8192);
	int m = size(argc, argv, 2, 32, 8192);
	if (n < 2) {
		fprintf(stderr, "covariance: need at least 2 samples\n");
		return 2;
	}
	double (*data)[m] = malloc(sizeof(double) * n * m);
	double (*cov)[m] = malloc(sizeof(double) * m * m);
	double *mean = malloc(sizeof(double) * m);
	if (!data || !cov || !mean) {
		fprintf(stderr, "covariance: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < m; j++) /* LOOP: init.j */
			data[i][j] = (double)(i * j) / m + i;

	double fn = n;
	for (int j = 0; j < m; j++) { /* LOOP: mean.j */
		mean[j] = 0.0;
		for (int i = 0; i < n; i++) /* LOOP: mean.i */
			mean[j] += data[i][j];
		mean[j] /= fn;
	}
	for (int i = 0; i < n; i++) /* LOOP: center.i */
		for (int j = 0; j < m; j++) /* LOOP: center.j */
			data[i][j] -= mean[j];
	for (int i = 0; i < m; i++) /* LOOP: cov.i */
		for (int j = i; j < m; j++) { /* LOOP: cov.j */
			cov[i][j] = 0.0;
			for (int k = 0; k < n; k++) /* LOOP: cov.k */
				cov[i][j] += data[k][i] * data[k][j];
			cov[i][j] /= (fn - 1.0);
			cov[j][i] = cov[i][j];
		}

	fold(&cov[0][0], (long)m * m);
	fold(mean, m);
	printf("covariance %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	free(data);
	free(cov);
	free(mean);
	return 0;
}
