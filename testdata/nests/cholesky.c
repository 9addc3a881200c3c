/* cholesky: Cholesky factorisation A = L*L^T in place (lower triangle),
 * column by column: the j loop is sequential, the rows below the diagonal
 * (i) are parallel, each with an inner dot product over k < j. Usage:
 * cholesky [N] (default 40). */
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
		fprintf(stderr, "cholesky: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 1 << 14);
	double (*A)[n] = malloc(sizeof(double) * n * n);
	if (!A) {
		fprintf(stderr, "cholesky: out of memory\n");
		return 1;
	}
	/* Symmetric and diagonally dominant, so positive definite. */
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = 1.0 / (1 + (i > j ? i - j : j - i)) + (i == j ? n : 0);

	for (int j = 0; j < n; j++) { /* LOOP: kernel.j */
		for (int k = 0; k < j; k++) /* LOOP: kernel.k */
			A[j][j] -= A[j][k] * A[j][k];
		A[j][j] = sqrt(A[j][j]);
		for (int i = j + 1; i < n; i++) { /* LOOP: kernel.i */
			for (int k = 0; k < j; k++) /* LOOP: kernel.k2 */
				A[i][j] -= A[i][k] * A[j][k];
			A[i][j] /= A[j][j];
		}
	}

	fold(&A[0][0], (long)n * n);
	printf("cholesky %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	return 0;
}
