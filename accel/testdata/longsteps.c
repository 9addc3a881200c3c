/* longsteps: an n-body step loop, as real codes write it: each time step
 * runs an i-j force nest (j sums into registers, i stores a force per
 * body) and then a 1D update of the positions. Run with one or two steps
 * at a size where a step is most of the run, the single run's profiling
 * round begins inside the only instance of the force nest it will ever
 * see: it must offload the rest of that instance. Usage: longsteps [N
 * STEPS]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 300;
	int steps = argc > 2 ? atoi(argv[2]) : 1;
	if (n < 1 || n > 1 << 20 || steps < 1) {
		fprintf(stderr, "longsteps: bad size\n");
		return 2;
	}
	double *x = malloc(8 * n), *y = malloc(8 * n), *vx = malloc(8 * n), *vy = malloc(8 * n);
	double *ax = malloc(8 * n), *ay = malloc(8 * n);
	if (!x || !y || !vx || !vy || !ax || !ay)
		return 1;
	for (int i = 0; i < n; i++) {
		x[i] = (i * 37 % 101) / 10.0;
		y[i] = (i * 53 % 97) / 10.0;
		vx[i] = vy[i] = 0;
	}
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++) {
			double fx = 0, fy = 0;
			for (int j = 0; j < n; j++) {
				double dx = x[j] - x[i], dy = y[j] - y[i];
				double r2 = dx * dx + dy * dy + 0.01;
				double inv = 1.0 / (r2 * sqrt(r2));
				fx += dx * inv;
				fy += dy * inv;
			}
			ax[i] = fx;
			ay[i] = fy;
		}
		for (int i = 0; i < n; i++) {
			vx[i] += 0.001 * ax[i];
			vy[i] += 0.001 * ay[i];
			x[i] += 0.001 * vx[i];
			y[i] += 0.001 * vy[i];
		}
	}
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += x[i] + 2 * y[i];
	printf("%.17g\n", sum);
	return 0;
}
