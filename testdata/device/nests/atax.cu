/* atax: the reference for testdata/nests/atax.c, distributed: one thread
 * per tmp[i] sums A[i][:]*x, then one thread per y[j] sums A[:][j]*tmp in
 * the order of i. */
#include "ref.h"

__global__ void ax(int m, int n, const double *A, const double *x, double *tmp) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m)
		return;
	double t = 0.0;
	for (int j = 0; j < n; j++)
		t += A[i * n + j] * x[j];
	tmp[i] = t;
}

__global__ void atx(int m, int n, const double *A, const double *tmp, double *y) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= n)
		return;
	double s = 0.0;
	for (int i = 0; i < m; i++)
		s += A[i * n + j] * tmp[i];
	y[j] = s;
}

int main(int argc, char **argv) {
	int m = size("atax", argc, argv, 1, 38, 1 << 16);
	int n = size("atax", argc, argv, 2, 42, 1 << 16);
	size_t sA = sizeof(double) * m * n;
	double *A = (double *)host_alloc(sA), *x = (double *)host_alloc(sizeof(double) * n);
	double *y = (double *)host_alloc(sizeof(double) * n), *tmp = (double *)host_alloc(sizeof(double) * m);
	for (int j = 0; j < n; j++)
		x[j] = 1.0 + (double)j / n;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			A[i * n + j] = (double)((i + j) % n) / (5 * m);

	double *dA = (double *)dev_alloc(sA), *dx = (double *)dev_alloc(sizeof(double) * n);
	double *dy = (double *)dev_alloc(sizeof(double) * n), *dt = (double *)dev_alloc(sizeof(double) * m);
	to_dev(dA, A, sA);
	to_dev(dx, x, sizeof(double) * n);
	timer_start();
	LAUNCH("kernel", ax, DIM3(cdiv(m, 256), 1, 1), DIM3(256, 1, 1), m, n, dA, dx, dt);
	LAUNCH("kernel", atx, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), m, n, dA, dt, dy);
	report("atax", timer_stop());
	to_host(y, dy, sizeof(double) * n);
	to_host(tmp, dt, sizeof(double) * m);

	fold(y, n);
	fold(tmp, m);
	printf("atax %d %d sum=%.17g hash=%016llx\n", m, n, sum_all, hash_all);
	return 0;
}
