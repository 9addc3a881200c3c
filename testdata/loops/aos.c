/* A loop over an array of structs (particles): each iteration updates the
 * fields of one element, so the loop is parallel; a second loop reduces a
 * field. Usage: aos [N] [T] (default 100000 10). */
#include <stdio.h>
#include <stdlib.h>

struct particle {
	double x, y, z;
	double vx, vy, vz;
	float mass;
	int id;
};

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100000;
	int steps = argc > 2 ? atoi(argv[2]) : 10;
	if (n < 1 || steps < 0) {
		fprintf(stderr, "aos: bad arguments\n");
		return 2;
	}
	struct particle *p = malloc((size_t)n * sizeof *p);
	if (!p)
		return 1;
	for (int i = 0; i < n; i++) { /* LOOP: init.i */
		p[i].x = (double)(i % 100);
		p[i].y = (double)(i % 37) * 0.5;
		p[i].z = 0.0;
		p[i].vx = 1.0;
		p[i].vy = (double)(i % 3) - 1.0;
		p[i].vz = 0.25;
		p[i].mass = 1.0f + (float)(i % 4);
		p[i].id = i;
	}
	const double dt = 0.01;
	for (int t = 0; t < steps; t++) /* LOOP: move.t */
		for (int i = 0; i < n; i++) { /* LOOP: move.i */
			double m = (double)p[i].mass;
			p[i].vx -= dt * p[i].x / m;
			p[i].vy -= dt * p[i].y / m;
			p[i].vz -= dt * 9.81;
			p[i].x += dt * p[i].vx;
			p[i].y += dt * p[i].vy;
			p[i].z += dt * p[i].vz;
		}
	double e = 0;
	for (int i = 0; i < n; i++) /* LOOP: energy.i */
		e += 0.5 * (double)p[i].mass * (p[i].vx * p[i].vx + p[i].vy * p[i].vy + p[i].vz * p[i].vz);
	printf("aos n=%d t=%d energy=%.17g x0=%.17g\n", n, steps, e, p[0].x);
	free(p);
	return 0;
}
