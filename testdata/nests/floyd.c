/* floyd: Floyd-Warshall all-pairs shortest paths over int distances, in
 * place. Iteration k reads row k and column k while it may write them, so
 * a memory-based dependence test finds i and j carried; only the value
 * fact d[k][k] == 0 makes them parallel. Usage: floyd [N] (default 40). */
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
		fprintf(stderr, "floyd: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 1 << 14);
	int (*d)[n] = malloc(sizeof(int) * n * n);
	if (!d) {
		fprintf(stderr, "floyd: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			d[i][j] = i == j ? 0 : (i * j) % 7 + 1 + ((i + j) % 13 == 0 ? 999 : (i + j) % 11);

	for (int k = 0; k < n; k++) /* LOOP: kernel.k */
		for (int i = 0; i < n; i++) /* LOOP: kernel.i */
			for (int j = 0; j < n; j++) /* LOOP: kernel.j */
				d[i][j] = d[i][j] < d[i][k] + d[k][j] ? d[i][j] : d[i][k] + d[k][j];

	fold(&d[0][0], (long)n * n);
	printf("floyd %d sum=%lld hash=%016llx\n", n, sum_all, hash_all);
	free(d);
	return 0;
}
