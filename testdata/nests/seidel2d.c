/* seidel2d: time-stepped nine-point Gauss-Seidel in 2D, in place: every
 * level carries a dependence, so the whole nest must stay on the CPU.
 * Usage: seidel2d [N T] (default 30 4). */
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
		fprintf(stderr, "seidel2d: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 30, 1 << 14);
	int tsteps = size(argc, argv, 2, 4, 1 << 20);
	double (*A)[n] = malloc(sizeof(double) * n * n);
	if (!A) {
		fprintf(stderr, "seidel2d: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = ((double)i * (j + 2) + 2) / n;

	for (int t = 0; t < tsteps; t++) /* LOOP: steps.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: steps.j */
				A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
					+ A[i][j - 1] + A[i][j] + A[i][j + 1]
					+ A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;

	fold(&A[0][0], (long)n * n);
	printf("seidel2d %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	free(A);
	return 0;
}
