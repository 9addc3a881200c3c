/* Rows zeroed by memset, then written: the nest clears row i of t with a
 * call of memset and then writes its first n-CUT elements. With CUT 0 the
 * stores overwrite everything the memset wrote, and phase 2 may run the
 * nest as a 2D kernel that leaves the memset out; with CUT > 0 the last
 * CUT elements of each row must still be the memset's zeros, and it may
 * not (accel TestMemsetRows). Usage: memsetrows [M] [N] [CUT] (default
 * 40 50 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 40;
	int n = argc > 2 ? atoi(argv[2]) : 50;
	int cut = argc > 3 ? atoi(argv[3]) : 0;
	if (m < 4 || n < 4 || m > 1 << 14 || n > 1 << 14 || cut < 0 || cut >= n) {
		fprintf(stderr, "memsetrows: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * n);
	double *t = malloc(sizeof(double) * m * n);
	if (!a || !t)
		return 1;
	/* A carried recurrence: sequential, so the fill stays on the CPU. */
	double v = 1.0;
	for (long k = 0; k < (long)m * n; k++) { /* LOOP: fill.k */
		v = v * 0.999 + 0.5;
		a[k] = v;
		t[k] = -v;
	}
	for (int i = 0; i < m; i++) { /* LOOP: rows.i */
		memset(&t[(long)i * n], 0, sizeof(double) * n);
		for (int j = 0; j < n - cut; j++) /* LOOP: rows.j */
			t[(long)i * n + j] = 2.0 * a[(long)i * n + j] + j;
	}
	double st = 0;
	for (long k = 0; k < (long)m * n; k++) /* LOOP: sum.k */
		st += t[k] * (double)(k % 7 + 1);
	printf("memsetrows m=%d n=%d cut=%d st=%.17g\n", m, n, cut, st);
	free(a);
	free(t);
	return 0;
}
