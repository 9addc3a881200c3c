/* jacobi1d: time-stepped three-point Jacobi in 1D, A -> B then B -> A in
 * every step. Usage: jacobi1d [N T] (default 400 20). */
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
		fprintf(stderr, "jacobi1d: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 400, 1 << 26);
	int tsteps = size(argc, argv, 2, 20, 1 << 20);
	double *A = malloc(sizeof(double) * n), *B = malloc(sizeof(double) * n);
	if (!A || !B) {
		fprintf(stderr, "jacobi1d: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		A[i] = ((double)i + 2) / n;
		B[i] = ((double)i + 3) / n;
	}

	for (int t = 0; t < tsteps; t++) { /* LOOP: steps.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i */
			B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i2 */
			A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
	}

	fold(A, n);
	fold(B, n);
	printf("jacobi1d %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	free(A);
	free(B);
	return 0;
}
