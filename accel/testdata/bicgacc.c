/* bicgacc: bicg's two products accumulated into vectors that hold values
 * already (no q[i] = 0 in the nest), so that running a statement twice
 * shows: s += A^T r and q += A p in one j loop. Usage: bicgacc N M. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 40, m = argc > 2 ? atoi(argv[2]) : 36;
	if (n < 1 || m < 1)
		return 2;
	double (*A)[m] = malloc(sizeof(double) * n * m);
	double *s = malloc(sizeof(double) * m), *q = malloc(sizeof(double) * n);
	double *p = malloc(sizeof(double) * m), *r = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++) {
		r[i] = (double)(i % 7) / 7;
		q[i] = i % 3;
		for (int j = 0; j < m; j++)
			A[i][j] = (double)(i * (j + 1) % 11) / 11;
	}
	for (int j = 0; j < m; j++) {
		p[j] = (double)(j % 5) / 5;
		s[j] = j % 2;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++) {
			s[j] = s[j] + r[i] * A[i][j];
			q[i] = q[i] + A[i][j] * p[j];
		}
	double sum = 0;
	for (int j = 0; j < m; j++)
		sum = sum * 0.5 + s[j];
	for (int i = 0; i < n; i++)
		sum = sum * 0.5 + q[i];
	printf("bicgacc %d %d %.17g\n", n, m, sum);
	return 0;
}
