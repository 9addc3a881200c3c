/* trmm: triangular matrix product B = alpha * A^T * B with A unit lower
 * triangular, in place: row i of B reads the rows below it before they
 * change, so i is sequential, while every column j is independent (the
 * schedule should make j the grid and run i and k inside the thread).
 * Usage: trmm [M N] (default 32 36): A is M x M, B is M x N. */
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
		fprintf(stderr, "trmm: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int m = size(argc, argv, 1, 32, 1 << 14);
	int n = size(argc, argv, 2, 36, 1 << 14);
	double alpha = 1.5;
	double (*A)[m] = malloc(sizeof(double) * m * m);
	double (*B)[n] = malloc(sizeof(double) * m * n);
	if (!A || !B) {
		fprintf(stderr, "trmm: out of memory\n");
		return 1;
	}
	for (int i = 0; i < m; i++) { /* LOOP: init.i */
		for (int j = 0; j < i; j++) /* LOOP: init.j */
			A[i][j] = (double)((i + j) % m) / m;
		A[i][i] = 1.0;
		for (int j = 0; j < n; j++) /* LOOP: init.j2 */
			B[i][j] = (double)((n + (i - j)) % n) / n;
	}

	for (int i = 0; i < m; i++) /* LOOP: kernel.i */
		for (int j = 0; j < n; j++) { /* LOOP: kernel.j */
			for (int k = i + 1; k < m; k++) /* LOOP: kernel.k */
				B[i][j] += A[k][i] * B[k][j];
			B[i][j] = alpha * B[i][j];
		}

	fold(&B[0][0], (long)m * n);
	printf("trmm %d %d sum=%.17g hash=%016llx\n", m, n, sum_all, hash_all);
	free(A);
	free(B);
	return 0;
}
