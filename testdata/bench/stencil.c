/* stencil: Jacobi 2D, 5 points, on an n x n grid of doubles for t steps;
 * prints a checksum. Build: gcc -O2 -static -o stencil stencil.c */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1300;
	int t = argc > 2 ? atoi(argv[2]) : 500;
	if (n < 3 || n > 20000 || t < 1) {
		fprintf(stderr, "stencil: bad size\n");
		return 2;
	}
	double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
	if (!a || !b)
		return 1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			a[i * n + j] = b[i * n + j] = (double)((i * 7 + j * 13) % 101) / 101.0;
	for (int s = 0; s < t; s++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				b[i * n + j] = 0.2 * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1] + a[(i - 1) * n + j] + a[(i + 1) * n + j]);
		double *x = a;
		a = b;
		b = x;
	}
	double sum = 0;
	for (int i = 0; i < n * n; i++)
		sum += a[i];
	printf("stencil n=%d t=%d sum=%.12f\n", n, t, sum);
	return 0;
}
