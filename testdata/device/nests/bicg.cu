/* bicg: the reference for testdata/nests/bicg.c, the j loop's two
 * statements split: one thread per q[i] sums A[i][:]*p, one thread per s[j]
 * sums r*A[:][j] in the order of i. */
#include "ref.h"

__global__ void ap(int n, int m, const double *A, const double *p, double *q) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double t = 0.0;
	for (int j = 0; j < m; j++)
		t = t + A[i * m + j] * p[j];
	q[i] = t;
}

__global__ void atr(int n, int m, const double *A, const double *r, double *s) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= m)
		return;
	double t = 0.0;
	for (int i = 0; i < n; i++)
		t = t + r[i] * A[i * m + j];
	s[j] = t;
}

int main(int argc, char **argv) {
	int n = size("bicg", argc, argv, 1, 42, 1 << 16);
	int m = size("bicg", argc, argv, 2, 38, 1 << 16);
	size_t sA = sizeof(double) * n * m;
	double *A = (double *)host_alloc(sA), *s = (double *)host_alloc(sizeof(double) * m);
	double *q = (double *)host_alloc(sizeof(double) * n), *p = (double *)host_alloc(sizeof(double) * m);
	double *r = (double *)host_alloc(sizeof(double) * n);
	for (int j = 0; j < m; j++)
		p[j] = (double)(j % m) / m;
	for (int i = 0; i < n; i++) {
		r[i] = (double)(i % n) / n;
		for (int j = 0; j < m; j++)
			A[i * m + j] = (double)(i * (j + 1) % n) / n;
	}

	double *dA = (double *)dev_alloc(sA), *ds = (double *)dev_alloc(sizeof(double) * m);
	double *dq = (double *)dev_alloc(sizeof(double) * n), *dp = (double *)dev_alloc(sizeof(double) * m);
	double *dr = (double *)dev_alloc(sizeof(double) * n);
	to_dev(dA, A, sA);
	to_dev(dp, p, sizeof(double) * m);
	to_dev(dr, r, sizeof(double) * n);
	timer_start();
	LAUNCH("kernel", ap, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, m, dA, dp, dq);
	LAUNCH("kernel", atr, DIM3(cdiv(m, 256), 1, 1), DIM3(256, 1, 1), n, m, dA, dr, ds);
	report("bicg", timer_stop());
	to_host(s, ds, sizeof(double) * m);
	to_host(q, dq, sizeof(double) * n);

	fold(s, m);
	fold(q, n);
	printf("bicg %d %d sum=%.17g hash=%016llx\n", n, m, sum_all, hash_all);
	return 0;
}
