// The reference for gxbit's generated matmul kernel: the same loop nest as
// examples/matmul.c (C = A*B, doubles, row-major), written in CUDA C the
// plain way (one thread per element of C, 16x16 blocks) and compiled with
// nvcc -O3. Prints the kernel time in milliseconds (best of 5, and the
// first launch's, which is what gxbit's single launch compares with) and a
// checksum computed like the example's, for n given on the command line.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void matmul(int n, const double *a, const double *b, double *c)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= n)
		return;
	double sum = 0;
	for (int k = 0; k < n; k++)
		sum = __dadd_rn(sum, __dmul_rn(a[i * n + k], b[k * n + j]));
	c[i * n + j] = sum;
}

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	size_t bytes = sizeof(double) * n * n;
	double *a = (double *)malloc(bytes), *b = (double *)malloc(bytes), *c = (double *)malloc(bytes);
	unsigned s = 12345;
	for (int i = 0; i < n * n; i++) {
		s = s * 1103515245u + 12345u;
		a[i] = (double)(s >> 16 & 0x7fff) / 32768.0 - 0.5;
		s = s * 1103515245u + 12345u;
		b[i] = (double)(s >> 16 & 0x7fff) / 32768.0 - 0.5;
	}
	double *da, *db, *dc;
	CHECK(cudaMalloc(&da, bytes));
	CHECK(cudaMalloc(&db, bytes));
	CHECK(cudaMalloc(&dc, bytes));
	CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
	dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
	cudaEvent_t t0, t1;
	cudaEventCreate(&t0);
	cudaEventCreate(&t1);
	float best = 1e30f, first = 0;
	for (int r = 0; r < 5; r++) {
		cudaEventRecord(t0);
		matmul<<<grid, block>>>(n, da, db, dc);
		cudaEventRecord(t1);
		CHECK(cudaEventSynchronize(t1));
		float ms;
		cudaEventElapsedTime(&ms, t0, t1);
		if (r == 0)
			first = ms;
		if (ms < best)
			best = ms;
	}
	CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
	double sum = 0, trace = 0;
	for (int i = 0; i < n * n; i++)
		sum += c[i];
	for (int i = 0; i < n; i++)
		trace += c[i * n + i];
	printf("matmul n=%d sum=%.17g trace=%.17g\n", n, sum, trace);
	printf("nvcc -O3 kernel: %.3f ms (best of 5; the first launch %.3f ms)\n", best, first);
	return 0;
}
