/* A nest whose mapped level's instances are long but for some of one or
 * two iterations: out[i][j] is the sum over k of a[j][k], for j below
 * m in most rows i and below 1 + i % 2 in every fourth. The j level's rows
 * hold an inner loop, so phase 2 probes them dry; a short instance ends
 * within the rows it probes, its dry rows reaching the level's exit,
 * which must fail it as too short and leave the later instances dry
 * (accel TestDryShortInstances). Usage: shortrows [N] [M] [K] (default
 * 40 64 200). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 40;
	int m = argc > 2 ? atoi(argv[2]) : 64;
	int kk = argc > 3 ? atoi(argv[3]) : 200;
	if (n < 4 || m < 4 || kk < 1 || n > 1 << 12 || m > 1 << 12 || kk > 1 << 14) {
		fprintf(stderr, "shortrows: bad arguments\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * m * kk);
	double *out = calloc((size_t)n * m, sizeof(double));
	if (!a || !out)
		return 1;
	for (int j = 0; j < m; j++)
		for (int k = 0; k < kk; k++)
			a[j * kk + k] = (double)((j * 7 + k * 3) % 101) / 101;
	for (int i = 0; i < n; i++) {
		int len = i % 4 == 3 ? 1 + i % 2 : m;
		for (int j = 0; j < len; j++) {
			double s = 0;
			for (int k = 0; k < kk; k++)
				s += a[j * kk + k];
			out[i * m + j] = s;
		}
	}
	double sum = 0;
	unsigned long long h = 1469598103934665603ULL;
	for (int i = 0; i < n * m; i++) {
		union { double d; unsigned long long u; } v = {out[i]};
		sum += out[i];
		h = (h ^ v.u) * 1099511628211ULL;
	}
	printf("shortrows %d %d %d sum=%.10g hash=%016llx\n", n, m, kk, sum, h);
	return 0;
}
