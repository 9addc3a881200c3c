/* Double-precision matrix multiply C = A*B with N = 200. */
#include <stdio.h>

#define N 200
static double A[N][N], B[N][N], C[N][N];

int main(void) {
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			A[i][j] = (double)((i * 3 + j) % 17) / 8.0 - 1.0;
			B[i][j] = (double)((i + j * 5) % 13) / 4.0;
		}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < N; k++)
				s += A[i][k] * B[k][j];
			C[i][j] = s;
		}
	double tr = 0, all = 0;
	for (int i = 0; i < N; i++) {
		tr += C[i][i];
		for (int j = 0; j < N; j++)
			all += C[i][j] * (double)((i ^ j) & 7);
	}
	printf("trace=%.17g weighted=%.17g c[17][93]=%.17g\n", tr, all, C[17][93]);
	return 0;
}
