/* condrows N M: per row i, b[i][j] = a[i][j] * 0.5 where a[i][j] > 7.5
 * and a[i][j] * a[i][j] elsewhere, gcc -O2 making two stores of one
 * branch; a[i][j] = j % 97 + 0.25 * (i % 3), so the first store runs
 * from j = 8 on in every row, after the few iterations a probed row
 * records before skipping the rest (accel TestUnseenPrefixStore).
 * Prints the sum of b. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int m = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1 || m < 1 || n > 1 << 14 || m > 1 << 16) {
		fprintf(stderr, "condrows: bad arguments\n");
		return 2;
	}
	double (*a)[m] = malloc(sizeof(double) * n * m), (*b)[m] = malloc(sizeof(double) * n * m);
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: fill.i */
		for (int j = 0; j < m; j++) /* LOOP: fill.j */
			a[i][j] = j % 97 + 0.25 * (i % 3);
	for (int i = 0; i < n; i++) /* LOOP: rows.i */
		for (int j = 0; j < m; j++) { /* LOOP: rows.j */
			double x = a[i][j];
			if (x > 7.5)
				b[i][j] = x * 0.5;
			else
				b[i][j] = x * x;
		}
	double s = 0;
	for (int i = 0; i < n; i++) /* LOOP: sum.i */
		for (int j = 0; j < m; j++) /* LOOP: sum.j */
			s += b[i][j];
	printf("condrows %d %d %.17g\n", n, m, s);
	free(a);
	free(b);
	return 0;
}
