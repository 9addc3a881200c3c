/* covariance: the reference for testdata/nests/covariance.c: one thread per
 * column mean, one per centred element, one per (i, j >= i) of the
 * covariance triangle writing both halves. */
#include "ref.h"

__global__ void colmean(int n, int m, double fn, const double *data, double *mean) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= m)
		return;
	double s = 0.0;
	for (int i = 0; i < n; i++)
		s += data[i * m + j];
	mean[j] = s / fn;
}

__global__ void center(int n, int m, double *data, const double *mean) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= m)
		return;
	data[i * m + j] -= mean[j];
}

__global__ void cov(int n, int m, double fn, const double *data, double *c) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= m || j >= m || j < i)
		return;
	double s = 0.0;
	for (int k = 0; k < n; k++)
		s += data[k * m + i] * data[k * m + j];
	s /= (fn - 1.0);
	c[i * m + j] = s;
	c[j * m + i] = s;
}

int main(int argc, char **argv) {
	int n = size("covariance", argc, argv, 1, 40, 8192);
	int m = size("covariance", argc, argv, 2, 32, 8192);
	if (n < 2) {
		fprintf(stderr, "covariance: need at least 2 samples\n");
		return 2;
	}
	size_t sd = sizeof(double) * n * m, sc = sizeof(double) * m * m, sm = sizeof(double) * m;
	double *data = (double *)host_alloc(sd), *c = (double *)host_alloc(sc), *mean = (double *)host_alloc(sm);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			data[i * m + j] = (double)(i * j) / m + i;

	double fn = n;
	double *dd = (double *)dev_alloc(sd), *dc = (double *)dev_alloc(sc), *dm = (double *)dev_alloc(sm);
	to_dev(dd, data, sd);
	timer_start();
	LAUNCH("mean", colmean, DIM3(cdiv(m, 256), 1, 1), DIM3(256, 1, 1), n, m, fn, dd, dm);
	LAUNCH("center", center, DIM3(cdiv(m, 16), cdiv(n, 16), 1), DIM3(16, 16, 1), n, m, dd, dm);
	LAUNCH("cov", cov, DIM3(cdiv(m, 16), cdiv(m, 16), 1), DIM3(16, 16, 1), n, m, fn, dd, dc);
	report("covariance", timer_stop());
	to_host(c, dc, sc);
	to_host(mean, dm, sm);

	fold(c, (long)m * m);
	fold(mean, m);
	printf("covariance %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	return 0;
}
