/* Matrix multiply C = A*B on global arrays: i and j parallel, k a reduction
 * into C[i][j]. Usage: matmul [N] (N <= 512, default 64). */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 512
static double A[MAXN][MAXN], B[MAXN][MAXN], C[MAXN][MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 64;
	if (n < 1 || n > MAXN) {
		fprintf(stderr, "matmul: N must be in 1..%d\n", MAXN);
		return 2;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) { /* LOOP: init.j */
			A[i][j] = (double)((i * 7 + j * 3) % 23) / 11.0 - 1.0;
			B[i][j] = (double)((i * 5 + j) % 19) / 7.0;
			C[i][j] = 0.0;
		}
	for (int i = 0; i < n; i++) /* LOOP: mm.i */
		for (int j = 0; j < n; j++) /* LOOP: mm.j */
			for (int k = 0; k < n; k++) /* LOOP: mm.k */
				C[i][j] += A[i][k] * B[k][j];
	double sum = 0;
	for (int i = 0; i < n; i++) /* LOOP: sum.i */
		for (int j = 0; j < n; j++) /* LOOP: sum.j */
			sum += C[i][j] * (double)(1 + (i + 2 * j) % 5);
	printf("matmul n=%d checksum=%.17g c[n-1][0]=%.17g\n", n, sum, C[n - 1][0]);
	return 0;
}
