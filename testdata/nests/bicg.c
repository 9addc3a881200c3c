/* bicg: the two products of BiCG in one loop nest, q = A*p and s = A^T*r:
 * in the j loop, s[j] += r[i]*A[i][j] (s carried by i) and q[i] +=
 * A[i][j]*p[j] (a reduction over j). Usage: bicg [N M] (default 42 38):
 * A is N x M. */
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
		fprintf(stderr, "bicg: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 42, 1 << 16);
	int m = size(argc, argv, 2, 38, 1 << 16);
	double (*A)[m] = malloc(sizeof(double) * n * m);
	double *s = malloc(sizeof(double) * m), *q = malloc(sizeof(double) * n);
	double *p = malloc(sizeof(double) * m), *r = malloc(sizeof(double) * n);
	if (!A || !s || !q || !p || !r) {
		fprintf(stderr, "bicg: out of memory\n");
		return 1;
	}
	for (int j = 0; j < m; j++) /* LOOP: initp.j */
		p[j] = (double)(j % m) / m;
	for (int i = 0; i < n; i++) { /* LOOP: initar.i */
		r[i] = (double)(i % n) / n;
		for (int j = 0; j < m; j++) /* LOOP: initar.j */
			A[i][j] = (double)(i * (j + 1) % n) / n;
	}

	for (int j = 0; j < m; j++) /* LOOP: zero.j */
		s[j] = 0.0;
	for (int i = 0; i < n; i++) { /* LOOP: kernel.i */
		q[i] = 0.0;
		for (int j = 0; j < m; j++) { /* LOOP: kernel.j */
			s[j] = s[j] + r[i] * A[i][j];
			q[i] = q[i] + A[i][j] * p[j];
		}
	}

	fold(s, m);
	fold(q, n);
	printf("bicg %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	free(A);
	free(s);
	free(q);
	free(p);
	free(r);
	return 0;
}
