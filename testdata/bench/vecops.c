/* vecops: axpy, scaled sum and dot product over vectors of n doubles,
 * repeated r times; prints a checksum. Build: gcc -O2 -static */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
	int r = argc > 2 ? atoi(argv[2]) : 100;
	if (n < 1 || r < 1)
		return 2;
	double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
	if (!x || !y || !z)
		return 1;
	for (int i = 0; i < n; i++) {
		x[i] = (double)(i % 1000) / 1000.0;
		y[i] = (double)((i * 7) % 1000) / 1000.0;
	}
	double dot = 0;
	for (int k = 0; k < r; k++) {
		double a = 1.0 / (k + 1);
		for (int i = 0; i < n; i++)
			y[i] = a * x[i] + y[i];
		for (int i = 0; i < n; i++)
			z[i] = x[i] * y[i] - 0.5 * z[i];
		for (int i = 0; i < n; i++)
			dot += z[i] * x[i];
	}
	printf("vecops n=%d r=%d dot=%.9e\n", n, r, dot);
	return 0;
}
