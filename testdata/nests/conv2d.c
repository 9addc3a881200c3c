/* conv2d: a 3x3 convolution over a single-precision image with nine
 * constant weights: both levels parallel. Usage: conv2d [NI NJ]
 * (default 48 52). */
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
		fprintf(stderr, "conv2d: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int ni = size(argc, argv, 1, 48, 1 << 15);
	int nj = size(argc, argv, 2, 52, 1 << 15);
	if (ni < 3 || nj < 3) {
		fprintf(stderr, "conv2d: the image must be at least 3 x 3\n");
		return 2;
	}
	float (*in)[nj] = malloc(sizeof(float) * ni * nj);
	float (*out)[nj] = malloc(sizeof(float) * ni * nj);
	if (!in || !out) {
		fprintf(stderr, "conv2d: out of memory\n");
		return 1;
	}
	for (int i = 0; i < ni; i++) /* LOOP: init.i */
		for (int j = 0; j < nj; j++) { /* LOOP: init.j */
			in[i][j] = (float)((i * 3 + j * 5) % 17) / 17;
			out[i][j] = 0.0f;
		}

	float c11 = 0.2f, c12 = -0.3f, c13 = 0.4f;
	float c21 = 0.5f, c22 = 0.6f, c23 = 0.7f;
	float c31 = -0.8f, c32 = -0.9f, c33 = 0.1f;
	for (int i = 1; i < ni - 1; i++) /* LOOP: kernel.i */
		for (int j = 1; j < nj - 1; j++) /* LOOP: kernel.j */
			out[i][j] = c11 * in[i - 1][j - 1] + c12 * in[i][j - 1] + c13 * in[i + 1][j - 1]
				+ c21 * in[i - 1][j] + c22 * in[i][j] + c23 * in[i + 1][j]
				+ c31 * in[i - 1][j + 1] + c32 * in[i][j + 1] + c33 * in[i + 1][j + 1];

	fold(&out[0][0], (long)ni * nj);
	printf("conv2d %d %d sum=%.17g hash=%016llx\n", ni, nj, sum_all, hash_all);
	free(in);
	free(out);
	return 0;
}
