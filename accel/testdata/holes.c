/* Stores that leave holes: one nest writes every other element of a's
 * rows, another writes b only where a condition holds. Neither overwrites
 * its footprint, so phase 2 must copy the arrays in before the kernels
 * run (the bytes between the stores are the fill loop's); an init nest
 * that writes every element need not (accel TestDenseStoresOnly).
 * Usage: holes [M] [N] (default 200 300). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 200;
	int n = argc > 2 ? atoi(argv[2]) : 300;
	if (m < 2 || n < 2 || m > 1 << 14 || n > 1 << 14) {
		fprintf(stderr, "holes: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * 2 * n);
	double *b = malloc(sizeof(double) * m * n);
	if (!a || !b)
		return 1;
	/* A carried recurrence: sequential, so the fill stays on the CPU. */
	double v = 1.0;
	for (long k = 0; k < 2L * m * n; k++) { /* LOOP: fill.k */
		v = v * 0.999 + 0.5;
		a[k] = v;
		if (k % 2)
			b[k / 2] = -v;
	}
	for (int i = 0; i < m; i++) /* LOOP: stride.i */
		for (int j = 0; j < n; j++) /* LOOP: stride.j */
			a[(long)i * 2 * n + 2 * j] = i + 0.5 * j;
	for (int i = 0; i < m; i++) /* LOOP: cond.i */
		for (int j = 0; j < n; j++) /* LOOP: cond.j */
			if ((i + j) % 3 != 0)
				b[(long)i * n + j] = i - j;
	double sa = 0, sb = 0;
	for (long k = 0; k < 2L * m * n; k++) /* LOOP: suma.k */
		sa += a[k] * (double)(k % 7 + 1);
	for (long k = 0; k < (long)m * n; k++) /* LOOP: sumb.k */
		sb += b[k] * (double)(k % 5 + 1);
	printf("holes m=%d n=%d sa=%.17g sb=%.17g\n", m, n, sa, sb);
	free(a);
	free(b);
	return 0;
}
