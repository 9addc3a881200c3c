/* colupdate.c: gramschmidt's shape (QR by modified Gram-Schmidt). Each
   step k takes column k's norm and scales it into Q on the CPU-sized
   loops, then updates the columns right of it: a nest parallel over the
   columns j, whose footprints no other nest uses on the device.
   Usage: colupdate M N (M rows, N columns). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 200, n = argc > 2 ? atoi(argv[2]) : 60;
	double (*a)[n] = malloc(sizeof(double) * m * n);
	double (*q)[n] = malloc(sizeof(double) * m * n);
	double (*r)[n] = malloc(sizeof(double) * n * n);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			a[i][j] = (double)((i * 7 + j * 13) % 29) / 29 + (i == j);
			q[i][j] = 0;
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			r[i][j] = 0;
	for (int k = 0; k < n; k++) {
		double s = 0;
		for (int i = 0; i < m; i++)
			s += a[i][k] * a[i][k];
		r[k][k] = sqrt(s);
		for (int i = 0; i < m; i++)
			q[i][k] = a[i][k] / r[k][k];
		for (int j = k + 1; j < n; j++) {
			r[k][j] = 0;
			for (int i = 0; i < m; i++)
				r[k][j] += q[i][k] * a[i][j];
			for (int i = 0; i < m; i++)
				a[i][j] = a[i][j] - q[i][k] * r[k][j];
		}
	}
	double sum = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			sum += r[i][j] * (i % 3 + 1);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			sum += q[i][j];
	printf("%.9e\n", sum);
	return 0;
}
