/* A row loop whose inner loop has an if the first iterations of each row
 * never take: x > 5 only from column 4 on. Bounded probing records the
 * first iterations of a row, which all ran the same instructions, and
 * skips the rest, which did not. Arguments: n, m, rounds. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]), rounds = atoi(argv[3]);
	double *a = malloc(sizeof(double) * n * m);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			a[(long)i * m + j] = j < 4 ? 1.0 : ((i * 31 + j * 17) % 101) / 10.0;
	double *b = malloc(sizeof(double) * n * m);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < m; j++) {
				long k = (long)i * m + j;
				b[k] = a[k] > 5.0 ? a[k] : a[k] + 0.25;
			}
		for (long k = 0; k < (long)n * m; k++)
			a[k] = b[k] * 0.5 + r;
	}
	double s = 0;
	for (long i = 0; i < (long)n * m; i++)
		s += a[i] * (double)(1 + i % 7);
	printf("%.17g\n", s);
	return 0;
}
