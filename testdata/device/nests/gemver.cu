/* gemver: the reference for testdata/nests/gemver.c: the rank-2 update one
 * thread per A[i][j], then one thread per x[i] (A by columns), the z add,
 * and one thread per w[i]. */
#include "ref.h"

__global__ void rank2(int n, double *A, const double *u1, const double *v1, const double *u2, const double *v2) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= n)
		return;
	A[i * n + j] = A[i * n + j] + u1[i] * v1[j] + u2[i] * v2[j];
}

__global__ void atx(int n, double beta, const double *A, const double *y, const double *z, double *x) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double s = x[i];
	for (int j = 0; j < n; j++)
		s = s + beta * A[j * n + i] * y[j];
	x[i] = s + z[i];
}

__global__ void ax(int n, double alpha, const double *A, const double *x, double *w) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double s = w[i];
	for (int j = 0; j < n; j++)
		s = s + alpha * A[i * n + j] * x[j];
	w[i] = s;
}

int main(int argc, char **argv) {
	int n = size("gemver", argc, argv, 1, 48, 1 << 16);
	double alpha = 1.5, beta = 1.2;
	size_t sA = sizeof(double) * n * n, sv = sizeof(double) * n;
	double *A = (double *)host_alloc(sA);
	double *u1 = (double *)host_alloc(sv), *v1 = (double *)host_alloc(sv), *u2 = (double *)host_alloc(sv);
	double *v2 = (double *)host_alloc(sv), *w = (double *)host_alloc(sv), *x = (double *)host_alloc(sv);
	double *y = (double *)host_alloc(sv), *z = (double *)host_alloc(sv);
	double fn = n;
	for (int i = 0; i < n; i++) {
		u1[i] = i;
		u2[i] = ((i + 1) / fn) / 2.0;
		v1[i] = ((i + 1) / fn) / 4.0;
		v2[i] = ((i + 1) / fn) / 6.0;
		y[i] = ((i + 1) / fn) / 8.0;
		z[i] = ((i + 1) / fn) / 9.0;
		x[i] = 0.0;
		w[i] = 0.0;
		for (int j = 0; j < n; j++)
			A[i * n + j] = (double)(i * j % n) / n;
	}

	double *dA = (double *)dev_alloc(sA);
	double *du1 = (double *)dev_alloc(sv), *dv1 = (double *)dev_alloc(sv), *du2 = (double *)dev_alloc(sv);
	double *dv2 = (double *)dev_alloc(sv), *dw = (double *)dev_alloc(sv), *dx = (double *)dev_alloc(sv);
	double *dy = (double *)dev_alloc(sv), *dz = (double *)dev_alloc(sv);
	to_dev(dA, A, sA);
	to_dev(du1, u1, sv);
	to_dev(dv1, v1, sv);
	to_dev(du2, u2, sv);
	to_dev(dv2, v2, sv);
	to_dev(dw, w, sv);
	to_dev(dx, x, sv);
	to_dev(dy, y, sv);
	to_dev(dz, z, sv);
	timer_start();
	LAUNCH("rank2", rank2, DIM3(cdiv(n, 16), cdiv(n, 16), 1), DIM3(16, 16, 1), n, dA, du1, dv1, du2, dv2);
	LAUNCH("atx+addz", atx, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, beta, dA, dy, dz, dx);
	LAUNCH("ax", ax, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, alpha, dA, dx, dw);
	report("gemver", timer_stop());
	to_host(w, dw, sv);
	to_host(x, dx, sv);

	fold(w, n);
	fold(x, n);
	printf("gemver %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
