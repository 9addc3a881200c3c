/* heat3d: time-stepped seven-point heat equation in 3D, single precision,
 * A -> B then B -> A in every step. Usage: heat3d [N T] (default 14 6). */
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
		fprintf(stderr, "heat3d: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 14, 1024);
	int tsteps = size(argc, argv, 2, 6, 1 << 20);
	float (*A)[n][n] = malloc(sizeof(float) * n * n * n);
	float (*B)[n][n] = malloc(sizeof(float) * n * n * n);
	if (!A || !B) {
		fprintf(stderr, "heat3d: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			for (int k = 0; k < n; k++) /* LOOP: init.k */
				A[i][j][k] = B[i][j][k] = (float)(i + j + (n - k)) * 10 / n;

	for (int t = 1; t <= tsteps; t++) { /* LOOP: steps.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: steps.j */
				for (int k = 1; k < n - 1; k++) /* LOOP: steps.k */
					B[i][j][k] = 0.125f * (A[i + 1][j][k] - 2.0f * A[i][j][k] + A[i - 1][j][k])
						+ 0.125f * (A[i][j + 1][k] - 2.0f * A[i][j][k] + A[i][j - 1][k])
						+ 0.125f * (A[i][j][k + 1] - 2.0f * A[i][j][k] + A[i][j][k - 1])
						+ A[i][j][k];
		for (int i = 1; i < n - 1; i++) /* LOOP: steps.i2 */
			for (int j = 1; j < n - 1; j++) /* LOOP: steps.j2 */
				for (int k = 1; k < n - 1; k++) /* LOOP: steps.k2 */
					A[i][j][k] = 0.125f * (B[i + 1][j][k] - 2.0f * B[i][j][k] + B[i - 1][j][k])
						+ 0.125f * (B[i][j + 1][k] - 2.0f * B[i][j][k] + B[i][j - 1][k])
						+ 0.125f * (B[i][j][k + 1] - 2.0f * B[i][j][k] + B[i][j][k - 1])
						+ B[i][j][k];
	}

	fold(&A[0][0][0], (long)n * n * n);
	printf("heat3d %d %d sum=%.17g hash=%016llx\n", n, tsteps, sum_all, hash_all);
	free(A);
	free(B);
	return 0;
}
