/* An if whose two sides each end with their own copy of the loop's
 * compare: gcc -O2 duplicates the tail (store, step, cmp) into both, one
 * leaving with je, the other going back with jne. Arguments: n, m. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]);
	double *a = malloc(sizeof(double) * n * m);
	for (long k = 0; k < (long)n * m; k++)
		a[k] = (k * 37 % 101) / 10.0;
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < m; j++) {
				double x = a[(long)i * m + j];
				if (x > 5.0)
					x = x * 0.5 + r;
				else
					x = x * x + 0.25;
				a[(long)i * m + j] = x;
			}
	double s = 0;
	for (long k = 0; k < (long)n * m; k++)
		s += a[k];
	printf("%.17g\n", s);
	return 0;
}
