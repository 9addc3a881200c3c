/* 3D 7-point stencil on malloc'd grids inside a sequential time loop, two
 * buffers swapped. Usage: stencil3d [N] [T] (default 64 10). */
#include <stdio.h>
#include <stdlib.h>

#define IDX(i, j, k) (((size_t)(i) * n + (size_t)(j)) * n + (size_t)(k))

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 64;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 3 || n > 512 || steps < 0) {
		fprintf(stderr, "stencil3d: bad arguments\n");
		return 2;
	}
	size_t total = (size_t)n * n * n;
	float *a = malloc(total * sizeof *a), *b = malloc(total * sizeof *b);
	if (!a || !b)
		return 1;
	for (size_t p = 0; p < total; p++) /* LOOP: init.p */
		a[p] = b[p] = (float)(p % 17) * 0.5f;
	for (int t = 0; t < steps; t++) { /* LOOP: st.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: st.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: st.j */
				for (int k = 1; k < n - 1; k++) /* LOOP: st.k */
					b[IDX(i, j, k)] = 0.4f * a[IDX(i, j, k)] +
							  0.1f * (a[IDX(i - 1, j, k)] + a[IDX(i + 1, j, k)] +
								  a[IDX(i, j - 1, k)] + a[IDX(i, j + 1, k)] +
								  a[IDX(i, j, k - 1)] + a[IDX(i, j, k + 1)]);
		float *tmp = a;
		a = b;
		b = tmp;
	}
	double sum = 0;
	for (size_t p = 0; p < total; p++) /* LOOP: sum.p */
		sum += (double)a[p] * (double)(p % 5);
	printf("stencil3d n=%d t=%d checksum=%.17g center=%.9g\n", n, steps, sum,
	       (double)a[IDX(n / 2, n / 2, n / 2)]);
	free(a);
	free(b);
	return 0;
}
