/* doitgen: the reference for testdata/nests/doitgen.c: a 3D grid, one
 * thread per out[r][q][p], the sum over s in a register. */
#include "ref.h"

__global__ void contract(int nr, int nq, int np, const double *A, const double *C4, double *out) {
	int p = blockIdx.x * blockDim.x + threadIdx.x;
	int q = blockIdx.y * blockDim.y + threadIdx.y;
	int r = blockIdx.z * blockDim.z + threadIdx.z;
	if (r >= nr || q >= nq || p >= np)
		return;
	double sum = 0.0;
	for (int s = 0; s < np; s++)
		sum += A[((long)r * nq + q) * np + s] * C4[s * np + p];
	out[((long)r * nq + q) * np + p] = sum;
}

int main(int argc, char **argv) {
	int nr = size("doitgen", argc, argv, 1, 10, 4096);
	int nq = size("doitgen", argc, argv, 2, 12, 4096);
	int np = size("doitgen", argc, argv, 3, 14, 4096);
	size_t sA = sizeof(double) * nr * nq * np, sC = sizeof(double) * np * np;
	double *A = (double *)host_alloc(sA), *out = (double *)host_alloc(sA), *C4 = (double *)host_alloc(sC);
	for (int r = 0; r < nr; r++)
		for (int q = 0; q < nq; q++)
			for (int p = 0; p < np; p++)
				A[((long)r * nq + q) * np + p] = (double)((r * q + p) % np) / np;
	for (int s = 0; s < np; s++)
		for (int p = 0; p < np; p++)
			C4[s * np + p] = (double)(s * p % np) / np;

	double *dA = (double *)dev_alloc(sA), *dout = (double *)dev_alloc(sA), *dC = (double *)dev_alloc(sC);
	to_dev(dA, A, sA);
	to_dev(dC, C4, sC);
	timer_start();
	LAUNCH("kernel", contract, DIM3(cdiv(np, 32), cdiv(nq, 4), cdiv(nr, 2)), DIM3(32, 4, 2), nr, nq, np, dA, dC, dout);
	report("doitgen", timer_stop());
	to_host(out, dout, sA);

	fold(out, (long)nr * nq * np);
	printf("doitgen %d %d %d sum=%.17g hash=%016llx\n", nr, nq, np, sum_all, hash_all);
	return 0;
}
