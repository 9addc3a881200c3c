/* ownpages: time steps over rows of a page each. Step t writes column t
 * of every row from a sum over the row's right half, m terms long: m is
 * the full width but at step 1, where it is 1 (a short instance that the
 * cost model sends to the CPU, which then writes a double in every row's
 * page). Usage: ownpages ROWS WIDTH STEPS. */
#include <stdio.h>
#include <stdlib.h>

#define ROW 512 /* doubles: a page */

int main(int argc, char **argv) {
	if (argc != 4)
		return 2;
	int n = atoi(argv[1]), w = atoi(argv[2]), steps = atoi(argv[3]);
	if (n < 1 || w < 1 || w > ROW / 2 || steps < 1 || steps > ROW / 2)
		return 2;
	double *a = malloc(sizeof(double) * ROW * n);
	if (!a)
		return 1;
	for (long i = 0; i < (long)ROW * n; i++)
		a[i] = (double)(i % 1000) / 7;
	for (int t = 0; t < steps; t++) {
		int m = t == 1 ? 1 : w;
		for (int i = 0; i < n; i++) {
			double s = 0;
			for (int k = 0; k < m; k++)
				s += a[(long)i * ROW + ROW / 2 + k] * (k + t);
			a[(long)i * ROW + t] = s;
		}
	}
	double sum = 0;
	for (long i = 0; i < (long)ROW * n; i++)
		sum += a[i] * (i % 13);
	printf("%.17g\n", sum);
	free(a);
	return 0;
}
