/* hist: a histogram over int keys computed from the index: the key loop is
 * parallel, counts[key[i]]++ is not affine and stays on the CPU. Usage:
 * hist [N BINS] (default 20000 64). */
#include <stdio.h>
#include <stdlib.h>

static long long sum_all;
static unsigned long long hash_all = 1469598103934665603ULL;

/* fold adds n integers to the checksum: their sum and an FNV-1a hash of
 * their values. */
static void fold(const int *a, long n) {
	for (long i = 0; i < n; i++) { /* LOOP: fold.i */
		sum_all += a[i];
		hash_all = (hash_all ^ (unsigned int)a[i]) * 1099511628211ULL;
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
		fprintf(stderr, "hist: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 20000, 1 << 28);
	int bins = size(argc, argv, 2, 64, 1 << 20);
	int *key = malloc(sizeof(int) * n), *counts = malloc(sizeof(int) * bins);
	if (!key || !counts) {
		fprintf(stderr, "hist: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: keys.i */
		key[i] = (int)(((unsigned)i * 2654435761u) >> 11) % bins;
	for (int b = 0; b < bins; b++) /* LOOP: zero.b */
		counts[b] = 0;

	for (int i = 0; i < n; i++) /* LOOP: kernel.i */
		counts[key[i]]++;

	fold(counts, bins);
	printf("hist %d %d sum=%lld hash=%016llx\n", n, bins, sum_all, hash_all);
	free(key);
	free(counts);
	return 0;
}
