/* Inclusive prefix sum over a global int64 array: a loop-carried
 * dependence through a[i-1], so the loop is sequential. Usage:
 * prefixsum [N] (N <= 1000000, default 100000). */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define MAXN 1000000
static int64_t a[MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	if (n < 1 || n > MAXN) {
		fprintf(stderr, "prefixsum: bad N\n");
		return 2;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		a[i] = (int64_t)((i * 7919) % 1000) - 500;
	for (int i = 1; i < n; i++) /* LOOP: scan.i */
		a[i] = a[i] + a[i - 1];
	uint64_t h = 0;
	for (int i = 0; i < n; i += 97) /* LOOP: hash.i */
		h = h * 31 + (uint64_t)a[i];
	printf("prefixsum n=%d last=%lld hash=%llu\n", n, (long long)a[n - 1], (unsigned long long)h);
	return 0;
}
