/* lu: LU decomposition without pivoting in right-looking k-i-j order: the
 * k loop is sequential; under it the column scaling (i) and the trailing
 * update (i, j) are parallel, their bounds depending on k. Usage: lu [N]
 * (default 40). */
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
		fprintf(stderr, "lu: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 1 << 14);
	double (*A)[n] = malloc(sizeof(double) * n * n);
	if (!A) {
		fprintf(stderr, "lu: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = i == j ? n + 1.0 : (double)((i + 2 * j) % 7 + 1) / (4 * n);

	for (int k = 0; k < n; k++) { /* LOOP: kernel.k */
		for (int i = k + 1; i < n; i++) /* LOOP: kernel.i */
			A[i][k] /= A[k][k];
		for (int i = k + 1; i < n; i++) /* LOOP: kernel.i2 */
			for (int j = k + 1; j < n; j++) /* LOOP: kernel.j */
				A[i][j] -= A[i][k] * A[k][j];
	}

	fold(&A[0][0], (long)n * n);
	printf("lu %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	return 0;
}
