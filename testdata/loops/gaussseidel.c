/* In-place 2D Gauss-Seidel relaxation: every level carries a dependence,
 * so the nest is sequential. Usage: gaussseidel [N] [T] (default 128 10). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 128;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 3 || n > 4096 || steps < 0) {
		fprintf(stderr, "gaussseidel: bad arguments\n");
		return 2;
	}
	double *u = malloc((size_t)n * (size_t)n * sizeof *u);
	if (!u)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		for (int j = 0; j < n; j++) /* LOOP: init.j */
			u[i * n + j] = (i == 0 || j == n - 1) ? 10.0 : (double)((i + j) % 5);
	for (int t = 0; t < steps; t++) /* LOOP: gs.t */
		for (int i = 1; i < n - 1; i++) /* LOOP: gs.i */
			for (int j = 1; j < n - 1; j++) /* LOOP: gs.j */
				u[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
						       u[i * n + j + 1]);
	double sum = 0;
	for (int i = 0; i < n * n; i++) /* LOOP: sum.i */
		sum += u[i];
	printf("gaussseidel n=%d t=%d checksum=%.17g u[1][1]=%.17g\n", n, steps, sum, u[n + 1]);
	free(u);
	return 0;
}
