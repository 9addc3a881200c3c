/* pingpong: a time-stepped pair of 2D sweeps, A -> B then B -> A in every
 * step, over float arrays the CPU fills with a sequential recurrence (so
 * that they start on the host, and the first launch copies them in). The
 * sweeps are cheap per point (a launch's copies of both arrays cost more
 * than a step on the CPU) and use the step, so that every instance is
 * probed and priced (no replay). Usage: pingpong [N T]. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 48;
	int tsteps = argc > 2 ? atoi(argv[2]) : 4;
	if (n < 3 || n > 1 << 14 || tsteps < 1) {
		fprintf(stderr, "pingpong: bad size\n");
		return 2;
	}
	float (*A)[n] = malloc(sizeof(float) * n * n);
	float (*B)[n] = malloc(sizeof(float) * n * n);
	if (!A || !B)
		return 1;
	unsigned seed = 12345;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			seed = seed * 1103515245u + 12345u;
			A[i][j] = B[i][j] = (float)(seed >> 16) / 65536.0f;
		}
	for (int t = 0; t < tsteps; t++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				B[i][j] = 0.5f * (A[i][j - 1] + A[i][j + 1]) + 1e-6f * t;
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				A[i][j] = 0.5f * (B[i - 1][j] + B[i + 1][j]);
	}
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += (double)A[i][j] * (i + 1) + B[i][j];
	printf("%.9e\n", s);
	return 0;
}
