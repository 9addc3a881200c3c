/* syrk: symmetric rank-k update of the lower triangle, C = alpha*A*A^T +
 * beta*C, triangular bounds (j <= i), k outside the j loop. Usage: syrk
 * [N M] (default 32 24): C is N x N, A is N x M. */
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
		fprintf(stderr, "syrk: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 32, 8192);
	int m = size(argc, argv, 2, 24, 8192);
	double alpha = 1.5, beta = 1.2;
	double (*A)[m] = malloc(sizeof(double) * n * m);
	double (*C)[n] = malloc(sizeof(double) * n * n);
	if (!A || !C) {
		fprintf(stderr, "syrk: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: inita.i */
		for (int k = 0; k < m; k++) /* LOOP: inita.k */
			A[i][k] = (double)((i * k + 1) % n) / n;
	for (int i = 0; i < n; i++) /* LOOP: initc.i */
		for (int j = 0; j < n; j++) /* LOOP: initc.j */
			C[i][j] = (double)((i * j + 2) % m) / m;

	for (int i = 0; i < n; i++) { /* LOOP: kernel.i */
		for (int j = 0; j <= i; j++) /* LOOP: kernel.j */
			C[i][j] *= beta;
		for (int k = 0; k < m; k++) /* LOOP: kernel.k */
			for (int j = 0; j <= i; j++) /* LOOP: kernel.j2 */
				C[i][j] += alpha * A[i][k] * A[j][k];
	}

	fold(&C[0][0], (long)n * n);
	printf("syrk %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	free(A);
	free(C);
	return 0;
}
