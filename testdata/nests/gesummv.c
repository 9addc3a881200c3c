/* gesummv: y = alpha*A*x + beta*B*x in single precision, both products in
 * one j loop with the sums in memory. Usage: gesummv [N] (default 56). */
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
		fprintf(stderr, "gesummv: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 56, 1 << 16);
	float alpha = 1.5f, beta = 1.2f;
	float (*A)[n] = malloc(sizeof(float) * n * n);
	float (*B)[n] = malloc(sizeof(float) * n * n);
	float *tmp = malloc(sizeof(float) * n), *x = malloc(sizeof(float) * n);
	float *y = malloc(sizeof(float) * n);
	if (!A || !B || !tmp || !x || !y) {
		fprintf(stderr, "gesummv: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		x[i] = (float)(i % n) / n;
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[i][j] = (float)((i * j + 1) % n) / n;
			B[i][j] = (float)((i * j + 2) % n) / n;
		}
	}

	for (int i = 0; i < n; i++) { /* LOOP: kernel.i */
		tmp[i] = 0.0f;
		y[i] = 0.0f;
		for (int j = 0; j < n; j++) { /* LOOP: kernel.j */
			tmp[i] = A[i][j] * x[j] + tmp[i];
			y[i] = B[i][j] * x[j] + y[i];
		}
		y[i] = alpha * tmp[i] + beta * y[i];
	}

	fold(y, n);
	printf("gesummv %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	free(A);
	free(B);
	free(tmp);
	free(x);
	free(y);
	return 0;
}
