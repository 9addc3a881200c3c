/* A row whose length the probed ones do not tell: the nest writes c[i]
 * (so it has no 2D kernel) and the first lens[i] elements of a's row i,
 * every one of them. With SHORT given, row M-10 is SHORT elements shorter
 * than the others, those phase 2 probes among them: a launch that took
 * each row to be as long as those, and so a's footprint to be overwritten
 * wholly, would leave the device's bytes in the gap instead of the fill
 * loop's; the 1D kernel's trip count check must fail it instead (accel
 * TestDenseCountedRows). Usage: rowtrips [M] [N] [SHORT] (default 200 300
 * 0). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 200;
	int n = argc > 2 ? atoi(argv[2]) : 300;
	int shorter = argc > 3 ? atoi(argv[3]) : 0;
	if (m < 20 || n < 4 || m > 1 << 14 || n > 1 << 14 || shorter < 0 || shorter >= n) {
		fprintf(stderr, "rowtrips: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * n);
	double *c = malloc(sizeof(double) * m);
	int *lens = malloc(sizeof(int) * m);
	if (!a || !c || !lens)
		return 1;
	/* A carried recurrence: sequential, so the fill stays on the CPU. */
	double v = 1.0;
	for (long k = 0; k < (long)m * n; k++) { /* LOOP: fill.k */
		v = v * 0.999 + 0.5;
		a[k] = v;
	}
	for (int i = 0; i < m; i++) /* LOOP: lens.i */
		lens[i] = i == m - 10 ? n - shorter : n;
	for (int i = 0; i < m; i++) { /* LOOP: rows.i */
		c[i] = 0.25 * i;
		for (int j = 0; j < lens[i]; j++) /* LOOP: rows.j */
			a[(long)i * n + j] = i + 0.5 * j;
	}
	double sa = 0, sc = 0;
	for (long k = 0; k < (long)m * n; k++) /* LOOP: suma.k */
		sa += a[k] * (double)(k % 7 + 1);
	for (int i = 0; i < m; i++) /* LOOP: sumc.i */
		sc += c[i];
	printf("rowtrips m=%d n=%d short=%d sa=%.17g sc=%.17g\n", m, n, shorter, sa, sc);
	free(a);
	free(c);
	free(lens);
	return 0;
}
