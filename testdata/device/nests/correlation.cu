/* correlation: the reference for testdata/nests/correlation.c: one thread
 * per column's mean and standard deviation, one per normalised element, one
 * per (i, j > i) of the correlation triangle writing both halves. */
#include <math.h>
#include "ref.h"

__global__ void colstats(int n, int m, double fn, double eps, const double *data, double *mean, double *stddev) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= m)
		return;
	double s = 0.0;
	for (int i = 0; i < n; i++)
		s += data[i * m + j];
	s /= fn;
	mean[j] = s;
	double v = 0.0;
	for (int i = 0; i < n; i++)
		v += (data[i * m + j] - s) * (data[i * m + j] - s);
	v /= fn;
	v = sqrt(v);
	stddev[j] = v <= eps ? 1.0 : v;
}

__global__ void norm(int n, int m, double sqn, double *data, const double *mean, const double *stddev) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= m)
		return;
	double d = data[i * m + j] - mean[j];
	data[i * m + j] = d / (sqn * stddev[j]);
}

__global__ void corr(int n, int m, const double *data, double *c) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= m || j >= m || j < i)
		return;
	if (j == i) {
		c[i * m + i] = 1.0;
		return;
	}
	double s = 0.0;
	for (int k = 0; k < n; k++)
		s += data[k * m + i] * data[k * m + j];
	c[i * m + j] = s;
	c[j * m + i] = s;
}

int main(int argc, char **argv) {
	int n = size("correlation", argc, argv, 1, 40, 8192);
	int m = size("correlation", argc, argv, 2, 32, 8192);
	size_t sd = sizeof(double) * n * m, sc = sizeof(double) * m * m, sm = sizeof(double) * m;
	double *data = (double *)host_alloc(sd), *c = (double *)host_alloc(sc), *stddev = (double *)host_alloc(sm);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			data[i * m + j] = (double)(i * j % 17) / m + (j % 3 == 0 ? 0.0 : i);

	double fn = n, eps = 0.1, sqn = sqrt(fn);
	double *dd = (double *)dev_alloc(sd), *dc = (double *)dev_alloc(sc);
	double *dm = (double *)dev_alloc(sm), *ds = (double *)dev_alloc(sm);
	to_dev(dd, data, sd);
	timer_start();
	LAUNCH("mean+stddev", colstats, DIM3(cdiv(m, 256), 1, 1), DIM3(256, 1, 1), n, m, fn, eps, dd, dm, ds);
	LAUNCH("norm", norm, DIM3(cdiv(m, 16), cdiv(n, 16), 1), DIM3(16, 16, 1), n, m, sqn, dd, dm, ds);
	LAUNCH("corr", corr, DIM3(cdiv(m, 16), cdiv(m, 16), 1), DIM3(16, 16, 1), n, m, dd, dc);
	report("correlation", timer_stop());
	to_host(c, dc, sc);
	to_host(stddev, ds, sm);

	fold(c, (long)m * m);
	fold(stddev, m);
	printf("correlation %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	return 0;
}
