/* conv2d: the reference for testdata/nests/conv2d.c: one thread per output
 * pixel, the nine weights as parameters. */
#include "ref.h"

__global__ void conv(int ni, int nj, const float *w, const float *in, float *out) {
	int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
	if (i >= ni - 1 || j >= nj - 1)
		return;
#define IN(a, b) in[(a) * nj + (b)]
	out[i * nj + j] = w[0] * IN(i - 1, j - 1) + w[1] * IN(i, j - 1) + w[2] * IN(i + 1, j - 1)
		+ w[3] * IN(i - 1, j) + w[4] * IN(i, j) + w[5] * IN(i + 1, j)
		+ w[6] * IN(i - 1, j + 1) + w[7] * IN(i, j + 1) + w[8] * IN(i + 1, j + 1);
#undef IN
}

int main(int argc, char **argv) {
	int ni = size("conv2d", argc, argv, 1, 48, 1 << 15);
	int nj = size("conv2d", argc, argv, 2, 52, 1 << 15);
	if (ni < 3 || nj < 3) {
		fprintf(stderr, "conv2d: the image must be at least 3 x 3\n");
		return 2;
	}
	size_t bytes = sizeof(float) * ni * nj;
	float *in = (float *)host_alloc(bytes), *out = (float *)host_alloc(bytes);
	for (int i = 0; i < ni; i++)
		for (int j = 0; j < nj; j++) {
			in[i * nj + j] = (float)((i * 3 + j * 5) % 17) / 17;
			out[i * nj + j] = 0.0f;
		}
	float w[9] = {0.2f, -0.3f, 0.4f, 0.5f, 0.6f, 0.7f, -0.8f, -0.9f, 0.1f};

	float *din = (float *)dev_alloc(bytes), *dout = (float *)dev_alloc(bytes), *dw = (float *)dev_alloc(sizeof w);
	to_dev(din, in, bytes);
	to_dev(dout, out, bytes);
	to_dev(dw, w, sizeof w);
	timer_start();
	LAUNCH("kernel", conv, DIM3(cdiv(nj - 2, 32), cdiv(ni - 2, 8), 1), DIM3(32, 8, 1), ni, nj, dw, din, dout);
	report("conv2d", timer_stop());
	to_host(out, dout, bytes);

	fold_f(out, (long)ni * nj);
	printf("conv2d %d %d sum=%.17g hash=%016llx\n", ni, nj, sum_all, hash_all);
	return 0;
}
