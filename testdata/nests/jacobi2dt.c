/* jacobi2dt: time-stepped five-point Jacobi in 2D, A -> B then B -> A in
 * every step. Usage: jacobi2dt [N T] (default 40 8). */
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
		fprintf(stderr, "jacobi2dt: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 1 << 14);
	int tsteps = size(argc, argv, 2, 8, 1 << 20);
	double (*A)[n] = malloc(sizeof(double) * n * n);
	double (*B)[n] = malloc(sizeof(double) * n * n);
	if (!A || !B) {
		fprintf(stderr, "jacobi2dt: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[i][j] = ((double)i * (j + 2) + 2) / n;
			B[i][j] = ((double)i * (j + 3) + 3) / n;
		}

	for (int t = 0; t < tsteps; t++) { /* LOOP: steps.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: steps.j */
				B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i2 */
			for (int j = 1; j < n - 1; j++) /* LOOP: steps.j2 */
				A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
	}

	fold(&A[0][0], (long)n * n);
	fold(&B[0][0], (long)n * n);
	printf("jacobi2dt %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	free(A);
	free(B);
	return 0;
}
