/* scan: an inclusive prefix sum over int, in place: a[i] += a[i-1] is
 * carried by i and must stay on the CPU. Usage: scan [N] (default 20000). */
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
		fprintf(stderr, "scan: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 20000, 1 << 28);
	int *a = malloc(sizeof(int) * n);
	if (!a) {
		fprintf(stderr, "scan: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		a[i] = (i * 7 + 3) % 13 - 6;

	for (int i = 1; i < n; i++) /* LOOP: kernel.i */
		a[i] += a[i - 1];

	fold(a, n);
	printf("scan %d last=%d sum=%lld hash=%016llx\n", n, a[n - 1], sum_all, hash_all);
	free(a);
	return 0;
}
