/* 2D 5-point Jacobi stencil on global arrays inside a sequential time loop;
 * the two buffers are swapped through pointers. Usage: stencil2d [N] [T]
 * (N <= 1024, default 256 20). */
#include <stdio.h>
#include <stdlib.h>

#define MAXN 1024
static double G0[MAXN][MAXN], G1[MAXN][MAXN];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int steps = argc > 2 ? atoi(argv[2]) : 20;
	if (n < 3 || n > MAXN || steps < 0) {
		fprintf(stderr, "stencil2d: bad arguments\n");
		return 2;
	}
	double (*a)[MAXN] = G0, (*b)[MAXN] = G1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			G0[i][j] = G1[i][j] = (double)((i * 13 + j * 7) % 31) - 15.0;
	for (int t = 0; t < steps; t++) { /* LOOP: st.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: st.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: st.j */
				b[i][j] = 0.2 * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
		double (*tmp)[MAXN] = a;
		a = b;
		b = tmp;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) /* LOOP: sum.i */
		for (int j = 0; j < n; j++) /* LOOP: sum.j */
			sum += a[i][j] * (double)((i + j) % 3 + 1);
	printf("stencil2d n=%d t=%d checksum=%.17g a[1][1]=%.17g\n", n, steps, sum, a[1][1]);
	return 0;
}
