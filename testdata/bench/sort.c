/* sort: qsort n pseudo-random ints r times; prints a checksum.
 * Build: gcc -O2 -static */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000000;
	int r = argc > 2 ? atoi(argv[2]) : 3;
	if (n < 1 || r < 1)
		return 2;
	int *v = malloc(sizeof(int) * n);
	if (!v)
		return 1;
	unsigned s = 1;
	long sum = 0;
	for (int k = 0; k < r; k++) {
		for (int i = 0; i < n; i++) {
			s = s * 1103515245u + 12345u;
			v[i] = (int)(s >> 1);
		}
		qsort(v, n, sizeof(int), cmp);
		for (int i = 0; i < n; i += 1000)
			sum += v[i] % 1000;
	}
	printf("sort n=%d r=%d check=%ld\n", n, r, sum);
	return 0;
}
