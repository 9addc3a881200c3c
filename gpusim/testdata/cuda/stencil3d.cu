// stencil3d: a 7-point f64 stencil on an NX x NY x NZ grid over a 3D grid of
// 3D blocks; boundary cells are copied unchanged.
#include "fixture.h"

extern "C" __global__ void stencil3d(const double* in, double* out, int nx, int ny, int nz, double c0, double c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long i = (long(z) * ny + y) * nx + x;
  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
    out[i] = in[i];
    return;
  }
  long sy = nx, sz = long(nx) * ny;
  out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - sy] + in[i + sy] + in[i - sz] + in[i + sz]);
}

int main() {
  const int nx = 20, ny = 18, nz = 16;
  Lcg r(808);
  std::vector<double> in(nx * ny * nz);
  for (auto& v : in) v = r.drange(-50.0, 50.0);
  Fixture f("stencil3d", "stencil3d");
  f.in("in", in);
  f.out("out", in.size() * sizeof(double));
  f.s32("nx", nx);
  f.s32("ny", ny);
  f.s32("nz", nz);
  f.f64("c0", 0.4);
  f.f64("c1", 0.1);
  f.launch((const void*)stencil3d, dim3((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4), dim3(8, 8, 4), 0);
}
