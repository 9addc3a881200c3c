/* rowinit: an initialisation nest whose outer body stores before its row
 * loop, cheaply (TestInitOuterStores2D): first[i] = i, scale[i] = 2i, then
 * A[i][j] = i + j/2. Usage: rowinit [M N] (default 40 48). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 40;
	int n = argc > 2 ? atoi(argv[2]) : 48;
	if (m < 1 || n < 1 || m > 1 << 14 || n > 1 << 14) {
		fprintf(stderr, "rowinit: bad size\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * n);
	long *first = malloc(sizeof(long) * m), *scale = malloc(sizeof(long) * m);
	if (!a || !first || !scale)
		return 1;
	for (int i = 0; i < m; i++) {
		first[i] = i;
		scale[i] = 2L * i;
		for (int j = 0; j < n; j++)
			a[(long)i * n + j] = i + j * 0.5;
	}
	double s = 0;
	unsigned long long h = 1469598103934665603ULL;
	for (long i = 0; i < (long)m * n; i++) {
		union { double d; unsigned long long u; } v = {a[i]};
		s += a[i];
		h = (h ^ v.u) * 1099511628211ULL;
	}
	for (int i = 0; i < m; i++)
		h = (h ^ (unsigned long long)(first[i] + 3 * scale[i])) * 1099511628211ULL;
	printf("rowinit %d %d sum=%.17g hash=%016llx\n", m, n, s, h);
	return 0;
}
