/* forces.c: a time loop around a sweep with an inner loop (each point's
   force from every other point, a reduction) and a sweep without one (the
   points move by their force). Arguments: points steps. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 300;
	int steps = argc > 2 ? atoi(argv[2]) : 2;
	double *x = malloc(sizeof(double) * n), *f = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++)
		x[i] = (double)(i * 37 % 101) / 10.0;
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++) {
			double sum = 0;
			for (int j = 0; j < n; j++) {
				double d = x[j] - x[i];
				sum += d / (d * d + 0.5);
			}
			f[i] = sum;
		}
		for (int i = 0; i < n; i++)
			x[i] += 0.001 * f[i];
	}
	double total = 0;
	for (int i = 0; i < n; i++)
		total += x[i] * (i % 7);
	printf("%.9e\n", total);
	return 0;
}
