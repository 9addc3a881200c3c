/* gemm: C = alpha*A*B + beta*C as numerical codes write it, the beta
 * scaling as its own loop and the product in k-j order, so that the i
 * loop's body holds two sibling loops. Usage: gemm [NI NJ NK]
 * (default 40 44 48). */
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
		fprintf(stderr, "gemm: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int ni = size(argc, argv, 1, 40, 8192);
	int nj = size(argc, argv, 2, 44, 8192);
	int nk = size(argc, argv, 3, 48, 8192);
	double alpha = 1.5, beta = 1.2;
	double (*A)[nk] = malloc(sizeof(double) * ni * nk);
	double (*B)[nj] = malloc(sizeof(double) * nk * nj);
	double (*C)[nj] = malloc(sizeof(double) * ni * nj);
	if (!A || !B || !C) {
		fprintf(stderr, "gemm: out of memory\n");
		return 1;
	}
	for (int i = 0; i < ni; i++) /* LOOP: initc.i */
		for (int j = 0; j < nj; j++) /* LOOP: initc.j */
			C[i][j] = (double)((i * j + 1) % ni) / ni;
	for (int i = 0; i < ni; i++) /* LOOP: inita.i */
		for (int k = 0; k < nk; k++) /* LOOP: inita.k */
			A[i][k] = (double)(i * (k + 1) % nk) / nk;
	for (int k = 0; k < nk; k++) /* LOOP: initb.k */
		for (int j = 0; j < nj; j++) /* LOOP: initb.j */
			B[k][j] = (double)(k * (j + 2) % nj) / nj;

	for (int i = 0; i < ni; i++) { /* LOOP: kernel.i */
		for (int j = 0; j < nj; j++) /* LOOP: kernel.j */
			C[i][j] *= beta;
		for (int k = 0; k < nk; k++) /* LOOP: kernel.k */
			for (int j = 0; j < nj; j++) /* LOOP: kernel.j2 */
				C[i][j] += alpha * A[i][k] * B[k][j];
	}

	fold(&C[0][0], (long)ni * nj);
	printf("gemm %d %d %d sum=%.17g hash=%016llx\n", ni, nj, nk, sum_all, hash_all);
	free(A);
	free(B);
	free(C);
	return 0;
}
