/* mvt: two matrix-vector products, x1 += A*y1 (rows) and x2 += A^T*y2
 * (columns: A[j][i] with i outer). Usage: mvt [N] (default 48). */
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
		fprintf(stderr, "mvt: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 48, 1 << 16);
	double (*A)[n] = malloc(sizeof(double) * n * n);
	double *x1 = malloc(sizeof(double) * n), *x2 = malloc(sizeof(double) * n);
	double *y1 = malloc(sizeof(double) * n), *y2 = malloc(sizeof(double) * n);
	if (!A || !x1 || !x2 || !y1 || !y2) {
		fprintf(stderr, "mvt: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		x1[i] = (double)(i % n) / n;
		x2[i] = (double)((i + 1) % n) / n;
		y1[i] = (double)((i + 3) % n) / n;
		y2[i] = (double)((i + 4) % n) / n;
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = (double)(i * j % n) / n;
	}

	for (int i = 0; i < n; i++) /* LOOP: rows.i */
		for (int j = 0; j < n; j++) /* LOOP: rows.j */
			x1[i] = x1[i] + A[i][j] * y1[j];
	for (int i = 0; i < n; i++) /* LOOP: cols.i */
		for (int j = 0; j < n; j++) /* LOOP: cols.j */
			x2[i] = x2[i] + A[j][i] * y2[j];

	fold(x1, n);
	fold(x2, n);
	printf("mvt %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	free(x1);
	free(x2);
	free(y1);
	free(y2);
	return 0;
}
