/* atax: y = A^T * (A * x). In one i loop, tmp[i] = A[i][:]*x (a reduction
 * over j) and then y[j] += A[i][j]*tmp[i] for every j (y is carried by
 * i). Usage: atax [M N] (default 38 42): A is M x N. */
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
		fprintf(stderr, "atax: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int m = size(argc, argv, 1, 38, 1 << 16);
	int n = size(argc, argv, 2, 42, 1 << 16);
	double (*A)[n] = malloc(sizeof(double) * m * n);
	double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
	double *tmp = malloc(sizeof(double) * m);
	if (!A || !x || !y || !tmp) {
		fprintf(stderr, "atax: out of memory\n");
		return 1;
	}
	for (int j = 0; j < n; j++) /* LOOP: initx.j */
		x[j] = 1.0 + (double)j / n;
	for (int i = 0; i < m; i++) /* LOOP: inita.i */
		for (int j = 0; j < n; j++) /* LOOP: inita.j */
			A[i][j] = (double)((i + j) % n) / (5 * m);

	for (int j = 0; j < n; j++) /* LOOP: zero.j */
		y[j] = 0.0;
	for (int i = 0; i < m; i++) { /* LOOP: kernel.i */
		tmp[i] = 0.0;
		for (int j = 0; j < n; j++) /* LOOP: kernel.j */
			tmp[i] += A[i][j] * x[j];
		for (int j = 0; j < n; j++) /* LOOP: kernel.j2 */
			y[j] += A[i][j] * tmp[i];
	}

	fold(y, n);
	fold(tmp, m);
	printf("atax %d %d sum=%.17g hash=%016llx\n", m, n, sum_all, hash_all);
	free(A);
	free(x);
	free(y);
	free(tmp);
	return 0;
}
