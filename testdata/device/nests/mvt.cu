/* mvt: the reference for testdata/nests/mvt.c: one thread per x1[i] (A by
 * rows) and one thread per x2[i] (A by columns). */
#include "ref.h"

__global__ void rows(int n, const double *A, const double *y1, double *x1) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double x = x1[i];
	for (int j = 0; j < n; j++)
		x = x + A[i * n + j] * y1[j];
	x1[i] = x;
}

__global__ void cols(int n, const double *A, const double *y2, double *x2) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double x = x2[i];
	for (int j = 0; j < n; j++)
		x = x + A[j * n + i] * y2[j];
	x2[i] = x;
}

int main(int argc, char **argv) {
	int n = size("mvt", argc, argv, 1, 48, 1 << 16);
	size_t sA = sizeof(double) * n * n, sv = sizeof(double) * n;
	double *A = (double *)host_alloc(sA), *x1 = (double *)host_alloc(sv), *x2 = (double *)host_alloc(sv);
	double *y1 = (double *)host_alloc(sv), *y2 = (double *)host_alloc(sv);
	for (int i = 0; i < n; i++) {
		x1[i] = (double)(i % n) / n;
		x2[i] = (double)((i + 1) % n) / n;
		y1[i] = (double)((i + 3) % n) / n;
		y2[i] = (double)((i + 4) % n) / n;
		for (int j = 0; j < n; j++)
			A[i * n + j] = (double)(i * j % n) / n;
	}

	double *dA = (double *)dev_alloc(sA), *dx1 = (double *)dev_alloc(sv), *dx2 = (double *)dev_alloc(sv);
	double *dy1 = (double *)dev_alloc(sv), *dy2 = (double *)dev_alloc(sv);
	to_dev(dA, A, sA);
	to_dev(dx1, x1, sv);
	to_dev(dx2, x2, sv);
	to_dev(dy1, y1, sv);
	to_dev(dy2, y2, sv);
	timer_start();
	LAUNCH("rows", rows, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, dA, dy1, dx1);
	LAUNCH("cols", cols, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, dA, dy2, dx2);
	report("mvt", timer_stop());
	to_host(x1, dx1, sv);
	to_host(x2, dx2, sv);

	fold(x1, n);
	fold(x2, n);
	printf("mvt %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
