/* gesummv: the reference for testdata/nests/gesummv.c: one thread per y[i]
 * with both sums in float registers. */
#include "ref.h"

__global__ void gesummv(int n, float alpha, float beta, const float *A, const float *B, const float *x, float *y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float t = 0.0f, s = 0.0f;
	for (int j = 0; j < n; j++) {
		t = A[i * n + j] * x[j] + t;
		s = B[i * n + j] * x[j] + s;
	}
	y[i] = alpha * t + beta * s;
}

int main(int argc, char **argv) {
	int n = size("gesummv", argc, argv, 1, 56, 1 << 16);
	float alpha = 1.5f, beta = 1.2f;
	size_t sA = sizeof(float) * n * n, sv = sizeof(float) * n;
	float *A = (float *)host_alloc(sA), *B = (float *)host_alloc(sA);
	float *x = (float *)host_alloc(sv), *y = (float *)host_alloc(sv);
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % n) / n;
		for (int j = 0; j < n; j++) {
			A[i * n + j] = (float)((i * j + 1) % n) / n;
			B[i * n + j] = (float)((i * j + 2) % n) / n;
		}
	}

	float *dA = (float *)dev_alloc(sA), *dB = (float *)dev_alloc(sA);
	float *dx = (float *)dev_alloc(sv), *dy = (float *)dev_alloc(sv);
	to_dev(dA, A, sA);
	to_dev(dB, B, sA);
	to_dev(dx, x, sv);
	timer_start();
	LAUNCH("kernel", gesummv, DIM3(cdiv(n, 256), 1, 1), DIM3(256, 1, 1), n, alpha, beta, dA, dB, dx, dy);
	report("gesummv", timer_stop());
	to_host(y, dy, sv);

	fold_f(y, n);
	printf("gesummv %d sum=%.17g hash=%016llx\n", n, sum_all, hash_all);
	return 0;
}
