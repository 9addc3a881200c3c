/* sweeps1d.c: a time loop around two 1D sweeps with no inner loop: a
   three-point smoothing of u into v, then v scaled back into u.
   Arguments: points steps. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int steps = argc > 2 ? atoi(argv[2]) : 3;
	double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n);
	for (int i = 0; i < n; i++)
		u[i] = v[i] = (double)(i * 29 % 83) / 8.0;
	for (int s = 0; s < steps; s++) {
		for (int i = 1; i < n - 1; i++)
			v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
		for (int i = 1; i < n - 1; i++)
			u[i] = 0.999 * v[i];
	}
	double total = 0;
	for (int i = 0; i < n; i++)
		total += u[i] * (i % 5);
	printf("%.9e\n", total);
	return 0;
}
