/* covariance, PolyBench shape: means, centring, triangular product. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 28, n = argc > 2 ? atoi(argv[2]) : 32;
	if (m < 1 || n < 2 || m > 4000 || n > 4000) {
		fprintf(stderr, "covariance: bad size\n");
		return 2;
	}
	double fn = n;
	double *data = malloc(sizeof(double) * n * m), *cov = malloc(sizeof(double) * m * m), *mean = malloc(sizeof(double) * m);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			data[i * m + j] = ((double)i * j) / m + i;
	for (int j = 0; j < m; j++) {
		mean[j] = 0.0;
		for (int i = 0; i < n; i++)
			mean[j] += data[i * m + j];
		mean[j] /= fn;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			data[i * m + j] -= mean[j];
	for (int i = 0; i < m; i++)
		for (int j = i; j < m; j++) {
			cov[i * m + j] = 0.0;
			for (int k = 0; k < n; k++)
				cov[i * m + j] += data[k * m + i] * data[k * m + j];
			cov[i * m + j] /= (fn - 1.0);
			cov[j * m + i] = cov[i * m + j];
		}
	double s = 0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++)
			s += cov[i * m + j] * (1 + (i + j) % 5);
	printf("covariance %d %d checksum=%.17g\n", m, n, s);
	return 0;
}
