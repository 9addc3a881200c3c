/* gemver: A += u1*v1^T + u2*v2^T, then x = beta*A^T*y + z, then
 * w = alpha*A*x: four nests over the same arrays, one of them reading A
 * by columns. Usage: gemver [N] (default 48). */
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
		fprintf(stderr, "gemver: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 48, 1 << 16);
	double alpha = 1.5, beta = 1.2;
	double (*A)[n] = malloc(sizeof(double) * n * n);
	double *u1 = malloc(sizeof(double) * n), *v1 = malloc(sizeof(double) * n);
	double *u2 = malloc(sizeof(double) * n), *v2 = malloc(sizeof(double) * n);
	double *w = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
	double *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
	if (!A || !u1 || !v1 || !u2 || !v2 || !w || !x || !y || !z) {
		fprintf(stderr, "gemver: out of memory\n");
		return 1;
	}
	double fn = n;
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		u1[i] = i;
		u2[i] = ((i + 1) / fn) / 2.0;
		v1[i] = ((i + 1) / fn) / 4.0;
		v2[i] = ((i + 1) / fn) / 6.0;
		y[i] = ((i + 1) / fn) / 8.0;
		z[i] = ((i + 1) / fn) / 9.0;
		x[i] = 0.0;
		w[i] = 0.0;
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = (double)(i * j % n) / n;
	}

	for (int i = 0; i < n; i++) /* LOOP: rank2.i */
		for (int j = 0; j < n; j++) /* LOOP: rank2.j */
			A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
	for (int i = 0; i < n; i++) /* LOOP: atx.i */
		for (int j = 0; j < n; j++) /* LOOP: atx.j */
			x[i] = x[i] + beta * A[j][i] * y[j];
	for (int i = 0; i < n; i++) /* LOOP: addz.i */
		x[i] = x[i] + z[i];
	for (int i = 0; i < n; i++) /* LOOP: ax.i */
		for (int j = 0; j < n; j++) /* LOOP: ax.j */
			w[i] = w[i] + alpha * A[i][j] * x[j];

	fold(w, n);
	fold(x, n);
	printf("gemver %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	free(u1);
	free(v1);
	free(u2);
	free(v2);
	free(w);
	free(x);
	free(y);
	free(z);
	return 0;
}
