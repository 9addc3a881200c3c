/* Loop bodies with two statements in one inner loop (statement
 * distribution): bicg's pair, which splits into a kernel per statement;
 * a pair where one statement reads what the other writes, and one where
 * the column statement reads the row's running sum: neither splits. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 40, m = argc > 2 ? atoi(argv[2]) : 36;
	double (*A)[m] = malloc(sizeof(double) * n * m);
	double *s = malloc(sizeof(double) * m), *q = malloc(sizeof(double) * n);
	double *p = malloc(sizeof(double) * m), *r = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++) {
		r[i] = i % 7;
		for (int j = 0; j < m; j++)
			A[i][j] = (i * j) % 11;
	}
	for (int j = 0; j < m; j++) {
		p[j] = j % 5;
		s[j] = 0;
	}
	/* bicg: splits */
	for (int i = 0; i < n; i++) {
		q[i] = 0;
		for (int j = 0; j < m; j++) {
			s[j] = s[j] + r[i] * A[i][j];
			q[i] = q[i] + A[i][j] * p[j];
		}
	}
	/* q reads s, which the other statement writes: no split */
	for (int i = 0; i < n; i++) {
		q[i] = 0;
		for (int j = 0; j < m; j++) {
			s[j] = s[j] + r[i] * A[i][j];
			q[i] = q[i] + A[i][j] * s[j];
		}
	}
	/* s[j] takes the row's running sum: the column statement reads the
	 * register j carries, so it has no parallel level */
	for (int i = 0; i < n; i++) {
		double t = 0;
		for (int j = 0; j < m; j++) {
			t += A[i][j] * p[j];
			s[j] = s[j] + t;
		}
		q[i] = t;
	}
	double sum = 0;
	for (int j = 0; j < m; j++)
		sum += s[j];
	for (int i = 0; i < n; i++)
		sum += q[i];
	printf("%.17g\n", sum);
	return 0;
}
