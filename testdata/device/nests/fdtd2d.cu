/* fdtd2d: the reference for testdata/nests/fdtd2d.c: the time loop on the
 * host, four launches per step (the boundary row, ey, ex, hz), fields
 * resident on the device. */
#include "ref.h"

__global__ void boundary(int ny, const double *fict, int t, double *ey) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= ny)
		return;
	ey[j] = fict[t];
}

__global__ void update_ey(int nx, int ny, double *ey, const double *hz) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
	if (i >= nx || j >= ny)
		return;
	ey[i * ny + j] = ey[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
}

__global__ void update_ex(int nx, int ny, double *ex, const double *hz) {
	int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= nx || j >= ny)
		return;
	ex[i * ny + j] = ex[i * ny + j] - 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
}

__global__ void update_hz(int nx, int ny, const double *ex, const double *ey, double *hz) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= nx - 1 || j >= ny - 1)
		return;
	hz[i * ny + j] = hz[i * ny + j] - 0.7 * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j] - ey[i * ny + j]);
}

int main(int argc, char **argv) {
	int nx = size("fdtd2d", argc, argv, 1, 30, 1 << 14);
	int ny = size("fdtd2d", argc, argv, 2, 34, 1 << 14);
	int tmax = size("fdtd2d", argc, argv, 3, 8, 1 << 20);
	size_t bytes = sizeof(double) * nx * ny;
	double *ex = (double *)host_alloc(bytes), *ey = (double *)host_alloc(bytes), *hz = (double *)host_alloc(bytes);
	double *fict = (double *)host_alloc(sizeof(double) * tmax);
	for (int t = 0; t < tmax; t++)
		fict[t] = (double)t;
	for (int i = 0; i < nx; i++)
		for (int j = 0; j < ny; j++) {
			ex[i * ny + j] = ((double)i * (j + 1)) / nx;
			ey[i * ny + j] = ((double)i * (j + 2)) / ny;
			hz[i * ny + j] = ((double)i * (j + 3)) / nx;
		}

	double *dex = (double *)dev_alloc(bytes), *dey = (double *)dev_alloc(bytes), *dhz = (double *)dev_alloc(bytes);
	double *dfict = (double *)dev_alloc(sizeof(double) * tmax);
	to_dev(dex, ex, bytes);
	to_dev(dey, ey, bytes);
	to_dev(dhz, hz, bytes);
	to_dev(dfict, fict, sizeof(double) * tmax);
	dim3 block = DIM3(16, 16, 1);
	timer_start();
	for (int t = 0; t < tmax; t++) {
		LAUNCH("steps", boundary, DIM3(cdiv(ny, 256), 1, 1), DIM3(256, 1, 1), ny, dfict, t, dey);
		LAUNCH("steps", update_ey, DIM3(cdiv(ny, 16), cdiv(nx - 1, 16), 1), block, nx, ny, dey, dhz);
		LAUNCH("steps", update_ex, DIM3(cdiv(ny - 1, 16), cdiv(nx, 16), 1), block, nx, ny, dex, dhz);
		LAUNCH("steps", update_hz, DIM3(cdiv(ny - 1, 16), cdiv(nx - 1, 16), 1), block, nx, ny, dex, dey, dhz);
	}
	report("fdtd2d", timer_stop());
	to_host(ex, dex, bytes);
	to_host(ey, dey, bytes);
	to_host(hz, dhz, bytes);

	fold(ex, (long)nx * ny);
	fold(ey, (long)nx * ny);
	fold(hz, (long)nx * ny);
	printf("fdtd2d %d %d %d sum=%.17g hash=%016llx\n", nx, ny, tmax, sum_all, hash_all);
	return 0;
}
