/* twomm: two chained matrix products, D = alpha*A*B*C + beta*D, the
 * first product accumulated in memory (tmp[i][j] += ... over k), the
 * second after scaling D by beta in the same j loop. Usage: twomm
 * [NI NJ NK NL] (default 24 26 28 30). */
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
		fprintf(stderr, "twomm: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int ni = size(argc, argv, 1, 24, 8192);
	int nj = size(argc, argv, 2, 26, 8192);
	int nk = size(argc, argv, 3, 28, 8192);
	int nl = size(argc, argv, 4, 30, 8192);
	double alpha = 1.5, beta = 1.2;
	double (*A)[nk] = malloc(sizeof(double) * ni * nk);
	double (*B)[nj] = malloc(sizeof(double) * nk * nj);
	double (*C)[nl] = malloc(sizeof(double) * nj * nl);
	double (*D)[nl] = malloc(sizeof(double) * ni * nl);
	double (*tmp)[nj] = malloc(sizeof(double) * ni * nj);
	if (!A || !B || !C || !D || !tmp) {
		fprintf(stderr, "twomm: out of memory\n");
		return 1;
	}
	for (int i = 0; i < ni; i++) /* LOOP: inita.i */
		for (int k = 0; k < nk; k++) /* LOOP: inita.k */
			A[i][k] = (double)((i * k + 1) % ni) / ni;
	for (int k = 0; k < nk; k++) /* LOOP: initb.k */
		for (int j = 0; j < nj; j++) /* LOOP: initb.j */
			B[k][j] = (double)(k * (j + 1) % nj) / nj;
	for (int j = 0; j < nj; j++) /* LOOP: initc.j */
		for (int l = 0; l < nl; l++) /* LOOP: initc.l */
			C[j][l] = (double)((j * (l + 3) + 1) % nl) / nl;
	for (int i = 0; i < ni; i++) /* LOOP: initd.i */
		for (int l = 0; l < nl; l++) /* LOOP: initd.l */
			D[i][l] = (double)(i * (l + 2) % nk) / nk;

	for (int i = 0; i < ni; i++) /* LOOP: mm1.i */
		for (int j = 0; j < nj; j++) { /* LOOP: mm1.j */
			tmp[i][j] = 0.0;
			for (int k = 0; k < nk; k++) /* LOOP: mm1.k */
				tmp[i][j] += alpha * A[i][k] * B[k][j];
		}
	for (int i = 0; i < ni; i++) /* LOOP: mm2.i */
		for (int l = 0; l < nl; l++) { /* LOOP: mm2.l */
			D[i][l] *= beta;
			for (int j = 0; j < nj; j++) /* LOOP: mm2.j */
				D[i][l] += tmp[i][j] * C[j][l];
		}

	fold(&D[0][0], (long)ni * nl);
	printf("twomm %d %d %d %d sum=%.17g hash=%016llx\n", ni, nj, nk, nl, sum_all, hash_all);
	free(A);
	free(B);
	free(C);
	free(D);
	free(tmp);
	return 0;
}
