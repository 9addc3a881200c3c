/* 2D Jacobi stencil (5 points) over a 128x128 grid for 50 sweeps with two
 * buffers. */
#include <stdio.h>
#include <stdlib.h>

#define N 128

int main(void) {
	double (*a)[N] = malloc(sizeof(double[N][N]));
	double (*b)[N] = malloc(sizeof(double[N][N]));
	if (!a || !b)
		return 1;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			a[i][j] = b[i][j] = (i == 0 || j == 0) ? 100.0 : (double)((i * j) % 7);
	for (int t = 0; t < 50; t++) {
		for (int i = 1; i < N - 1; i++)
			for (int j = 1; j < N - 1; j++)
				b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
		double (*tmp)[N] = a;
		a = b;
		b = tmp;
	}
	double s = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			s += a[i][j] * (1 + (i + j) % 3);
	printf("sum=%.17g a[64][64]=%.17g a[1][1]=%a\n", s, a[64][64], a[1][1]);
	free(a);
	free(b);
	return 0;
}
