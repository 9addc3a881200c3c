/* threemm: three chained products in single precision, G = (A*B)*(C*D),
 * each with the sum in a register. Usage: threemm [N] (default 28): all
 * matrices are N x N. */
#include <stdio.h>
#include <stdlib.h>

static double sum_all;
static unsigned long long hash_all = 1469598103934665603ULL;

/* fold adds n floats to the checksum: their sum (in double) and an FNV-1a
 * hash of their bit patterns. */
static void fold(const float *a, long n) {
	for (long i = 0; i < n; i++) { /* LOOP: fold.i */
		union { float f; unsigned int u; } v = {a[i]};
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
		fprintf(stderr, "threemm: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

/* product sets X = P*Q for n x n matrices. */
static void product(int n, float (*X)[n], float (*P)[n], float (*Q)[n]) {
	for (int i = 0; i < n; i++) /* LOOP: mm.i */
		for (int j = 0; j < n; j++) { /* LOOP: mm.j */
			float s = 0.0f;
			for (int k = 0; k < n; k++) /* LOOP: mm.k */
				s += P[i][k] * Q[k][j];
			X[i][j] = s;
		}
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 28, 8192);
	size_t bytes = sizeof(float) * n * n;
	float (*A)[n] = malloc(bytes), (*B)[n] = malloc(bytes), (*C)[n] = malloc(bytes);
	float (*D)[n] = malloc(bytes), (*E)[n] = malloc(bytes), (*F)[n] = malloc(bytes);
	float (*G)[n] = malloc(bytes);
	if (!A || !B || !C || !D || !E || !F || !G) {
		fprintf(stderr, "threemm: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[i][j] = (float)((i * j + 1) % n) / (5 * n);
			B[i][j] = (float)((i * (j + 1) + 2) % n) / (5 * n);
			C[i][j] = (float)(i * (j + 3) % n) / (5 * n);
			D[i][j] = (float)((i * (j + 2) + 2) % n) / (5 * n);
		}

	product(n, E, A, B);
	product(n, F, C, D);
	product(n, G, E, F);

	fold(&G[0][0], (long)n * n);
	printf("threemm %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	free(B);
	free(C);
	free(D);
	free(E);
	free(F);
	free(G);
	return 0;
}
