/* nussinov: a Nussinov-like RNA folding dynamic program over a triangular
 * int table: cell (i, j) reads cells to its left and below, so both levels
 * are carried (only the anti-diagonals are parallel); it stays on the CPU.
 * Usage: nussinov [N] (default 40). */
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
		fprintf(stderr, "nussinov: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int n = size(argc, argv, 1, 40, 1 << 14);
	int *seq = malloc(sizeof(int) * n);
	int (*table)[n] = malloc(sizeof(int) * n * n);
	if (!seq || !table) {
		fprintf(stderr, "nussinov: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		seq[i] = (i + 1) % 4;
	for (int i = 0; i < n; i++) /* LOOP: zero.i */
		for (int j = 0; j < n; j++) /* LOOP: zero.j */
			table[i][j] = 0;

	for (int i = n - 1; i >= 0; i--) /* LOOP: kernel.i */
		for (int j = i + 1; j < n; j++) { /* LOOP: kernel.j */
			int best = table[i][j - 1];
			if (i + 1 < n && table[i + 1][j] > best)
				best = table[i + 1][j];
			if (i + 1 < n) {
				int pair = table[i + 1][j - 1] + (i < j - 1 && seq[i] + seq[j] == 3);
				if (pair > best)
					best = pair;
			}
			for (int k = i + 1; k < j; k++) /* LOOP: kernel.k */
				if (table[i][k] + table[k + 1][j] > best)
					best = table[i][k] + table[k + 1][j];
			table[i][j] = best;
		}

	fold(&table[0][0], (long)n * n);
	printf("nussinov %d sum=%lld hash=%016llx\n", n, sum_all, hash_all);
	free(seq);
	free(table);
	return 0;
}
