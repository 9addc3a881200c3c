/* doitgen: a batched tensor contraction, out[r][q][p] = sum over s of
 * A[r][q][s] * C4[s][p]: three parallel levels over a reduction. Usage:
 * doitgen [NR NQ NP] (default 10 12 14). */
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
		fprintf(stderr, "doitgen: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int nr = size(argc, argv, 1, 10, 4096);
	int nq = size(argc, argv, 2, 12, 4096);
	int np = size(argc, argv, 3, 14, 4096);
	double (*A)[nq][np] = malloc(sizeof(double) * nr * nq * np);
	double (*out)[nq][np] = malloc(sizeof(double) * nr * nq * np);
	double (*C4)[np] = malloc(sizeof(double) * np * np);
	if (!A || !out || !C4) {
		fprintf(stderr, "doitgen: out of memory\n");
		return 1;
	}
	for (int r = 0; r < nr; r++) /* LOOP: inita.r */
		for (int q = 0; q < nq; q++) /* LOOP: inita.q */
			for (int p = 0; p < np; p++) /* LOOP: inita.p */
				A[r][q][p] = (double)((r * q + p) % np) / np;
	for (int s = 0; s < np; s++) /* LOOP: initc.s */
		for (int p = 0; p < np; p++) /* LOOP: initc.p */
			C4[s][p] = (double)(s * p % np) / np;

	for (int r = 0; r < nr; r++) /* LOOP: kernel.r */
		for (int q = 0; q < nq; q++) /* LOOP: kernel.q */
			for (int p = 0; p < np; p++) { /* LOOP: kernel.p */
				double sum = 0.0;
				for (int s = 0; s < np; s++) /* LOOP: kernel.s */
					sum += A[r][q][s] * C4[s][p];
				out[r][q][p] = sum;
			}

	fold(&out[0][0][0], (long)nr * nq * np);
	printf("doitgen %d %d %d sum=%.17g hash=%016llx\n", nr, nq, np, sum_all, hash_all);
	free(A);
	free(out);
	free(C4);
	return 0;
}
