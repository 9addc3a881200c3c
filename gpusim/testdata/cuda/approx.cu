// approx: one .approx.f32 instruction per output buffer (sin, cos, ex2,
// lg2, rsqrt, rcp, div), written as inline PTX so that each result is
// exactly one approximate instruction. The outputs carry tolerances: two
// implementations that each stay within the bound the PTX ISA documents for
// the instruction differ by at most twice that bound.
#include "fixture.h"

#define APPROX1(NAME, INSN)                                   \
  __device__ float NAME(float x) {                           \
    float r;                                                  \
    asm(INSN " %0, %1;" : "=f"(r) : "f"(x));                  \
    return r;                                                 \
  }
APPROX1(ap_sin, "sin.approx.f32")
APPROX1(ap_cos, "cos.approx.f32")
APPROX1(ap_ex2, "ex2.approx.f32")
APPROX1(ap_lg2, "lg2.approx.f32")
APPROX1(ap_rsqrt, "rsqrt.approx.f32")
APPROX1(ap_rcp, "rcp.approx.f32")

__device__ float ap_div(float x, float y) {
  float r;
  asm("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
}

extern "C" __global__ void approx(const float* ang, const float* e, const float* pos, float* osin, float* ocos,
                                  float* oex2, float* olg2, float* orsqrt, float* orcp, float* odiv, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  osin[i] = ap_sin(ang[i]);
  ocos[i] = ap_cos(ang[i]);
  oex2[i] = ap_ex2(e[i]);
  olg2[i] = ap_lg2(pos[i]);
  orsqrt[i] = ap_rsqrt(pos[i]);
  orcp[i] = ap_rcp(pos[i]);
  odiv[i] = ap_div(e[i], pos[i]);
}

int main() {
  const int n = 256;
  Lcg r(1701);
  std::vector<float> ang(n), e(n), pos(n);
  for (int i = 0; i < n; ++i) {
    ang[i] = r.range(-3.14159265f, 3.14159265f);
    e[i] = r.range(-20.0f, 20.0f);
    pos[i] = r.range(0.01f, 1000.0f);
  }
  Fixture f("approx", "approx");
  f.in("ang", ang);
  f.in("e", e);
  f.in("pos", pos);
  // Bounds used (per instruction, doubled for a comparison of two
  // implementations): sin/cos absolute 2^-20.5 on [-pi, pi]; ex2 relative
  // 2^-22 (taken as 2 ulp); lg2 absolute 2^-22; rsqrt and rcp relative
  // 2^-22 (taken as 2 ulp); div.approx 2 ulp for divisors in [2^-126, 2^126].
  f.out("osin", n * 4);
  f.tolerance("f32", 2.0 * 6.7434e-7, 0.0, "sin.approx.f32 max abs error 2^-20.5 on [-pi,pi], doubled");
  f.out("ocos", n * 4);
  f.tolerance("f32", 2.0 * 6.7434e-7, 0.0, "cos.approx.f32 max abs error 2^-20.5 on [-pi,pi], doubled");
  f.out("oex2", n * 4);
  f.tolerance("f32", 0.0, 2.0 * 2.3842e-7, "ex2.approx.f32 2 ulp (relative 2^-22), doubled");
  f.out("olg2", n * 4);
  f.tolerance("f32", 2.0 * 2.3842e-7, 2.0 * 1.1921e-7, "lg2.approx.f32 abs 2^-22 plus 1 ulp, doubled");
  f.out("orsqrt", n * 4);
  f.tolerance("f32", 0.0, 2.0 * 2.3842e-7, "rsqrt.approx.f32 relative 2^-22, doubled");
  f.out("orcp", n * 4);
  f.tolerance("f32", 0.0, 2.0 * 2.3842e-7, "rcp.approx.f32 relative 2^-22, doubled");
  f.out("odiv", n * 4);
  f.tolerance("f32", 0.0, 2.0 * 2.3842e-7, "div.approx.f32 2 ulp, doubled");
  f.s32("n", n);
  f.launch((const void*)approx, dim3(n / 64), dim3(64), 0);
}
