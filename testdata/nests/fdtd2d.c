/* fdtd2d: time-stepped 2D finite-difference time domain on three fields:
 * each step sets a boundary row of ey from a source array, then updates
 * ey, ex and hz in three nests. Usage: fdtd2d [NX NY T] (default 30 34 8). */
#include <stdio.h>
#include <stdlib.h>

static double sum_all;
static unsigned long long hash_all = 1469598103934665603ULL;

/* fold adds n doubles to the checksum: their sum and an FNV-1a hash of
 * their bit patterns. */
static void fold(const double *a, long n) {
	for (long i = 0; i < n; i++) { /* LOOP: fold.i */
		union { double d; unsigned long long u; } v = {a[i]};
		sum_all += a[i];
		hash_all = (hash_all ^ v.u) * 1099511628211ULL;
	}
}

/* size returns argv[k] as an integer in [1, max], def when absent; a bad
 * one ends the program with status 2. */
static int size(int argc, char **argv, int k, int def, int max) {
	if (argc <= k)
		return def;
	char *end;
	long v = strtol(argv[k], &end, 10);
	if (*end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "fdtd2d: bad size %s (want 1..%d)\n", argv[k], max);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv) {
	int nx = size(argc, argv, 1, 30, 1 << 14);
	int ny = size(argc, argv, 2, 34, 1 << 14);
	int tmax = size(argc, argv, 3, 8, 1 << 20);
	double (*ex)[ny] = malloc(sizeof(double) * nx * ny);
	double (*ey)[ny] = malloc(sizeof(double) * nx * ny);
	double (*hz)[ny] = malloc(sizeof(double) * nx * ny);
	double *fict = malloc(sizeof(double) * tmax);
	if (!ex || !ey || !hz || !fict) {
		fprintf(stderr, "fdtd2d: out of memory\n");
		return 1;
	}
	for (int t = 0; t < tmax; t++) /* LOOP: initf.t */
		fict[t] = (double)t;
	for (int i = 0; i < nx; i++) /* LOOP: init.i */
		for (int j = 0; j < ny; j++) { /* LOOP: init.j */
			ex[i][j] = ((double)i * (j + 1)) / nx;
			ey[i][j] = ((double)i * (j + 2)) / ny;
			hz[i][j] = ((double)i * (j + 3)) / nx;
		}

	for (int t = 0; t < tmax; t++) { /* LOOP: steps.t */
		for (int j = 0; j < ny; j++) /* LOOP: steps.j */
			ey[0][j] = fict[t];
		for (int i = 1; i < nx; i++) /* LOOP: steps.i */
			for (int j = 0; j < ny; j++) /* LOOP: steps.j2 */
				ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
		for (int i = 0; i < nx; i++) /* LOOP: steps.i2 */
			for (int j = 1; j < ny; j++) /* LOOP: steps.j3 */
				ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
		for (int i = 0; i < nx - 1; i++) /* LOOP: steps.i3 */
			for (int j = 0; j < ny - 1; j++) /* LOOP: steps.j4 */
				hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
	}

	fold(&ex[0][0], (long)nx * ny);
	fold(&ey[0][0], (long)nx * ny);
	fold(&hz[0][0], (long)nx * ny);
	printf("fdtd2d %d %d %d sum=%.17g hash=%016llx\n", nx, ny, tmax, sum_all, hash_all);
	free(ex);
	free(ey);
	free(hz);
	free(fict);
	return 0;
}
