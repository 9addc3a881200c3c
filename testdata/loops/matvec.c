/* Matrix-vector products y = A*x (rows parallel, columns a reduction) and
 * z = A^T*y written row-major, so the outer loop is the reduction and the
 * inner loop parallel. Global arrays. Usage: matvec [N] (N <= 1024, default 256). */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 1024
static double A[MAXN][MAXN], x[MAXN], y[MAXN], z[MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 256;
	if (n < 1 || n > MAXN) {
		fprintf(stderr, "matvec: bad N\n");
		return 2;
	}
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		x[i] = 1.0 + (double)(i % 13) / 13.0;
		z[i] = 0.0;
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			A[i][j] = (double)((i * 17 + j * 29) % 101) / 50.0 - 1.0;
	}
	for (int i = 0; i < n; i++) { /* LOOP: mv.i */
		double s = 0.0;
		for (int j = 0; j < n; j++) /* LOOP: mv.j */
			s += A[i][j] * x[j];
		y[i] = s;
	}
	for (int i = 0; i < n; i++) /* LOOP: mtv.i */
		for (int j = 0; j < n; j++) /* LOOP: mtv.j */
			z[j] += A[i][j] * y[i];
	double sy = 0, sz = 0;
	for (int i = 0; i < n; i++) { /* LOOP: sum.i */
		sy += y[i];
		sz += z[i] * (double)(i % 4);
	}
	printf("matvec n=%d y=%.17g z=%.17g\n", n, sy, sz);
	return 0;
}
