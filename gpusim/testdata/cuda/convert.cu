// convert: every conversion between the integer and float types: the C
// casts (cvt.rzi toward integers, cvt.rn toward floats), the rounding-mode
// intrinsics (_rn, _rz, _rd, _ru), f32<->f64, saturation (__saturatef and
// the clamping of out-of-range and NaN inputs), and narrowing integer casts.
// Inputs cover ties, signed zeros, denormals, infinities, NaN and values
// beyond each destination's range.
#include "fixture.h"

#include <climits>
#include <limits>

#define OU 32
#define OD 20

extern "C" __global__ void convert(const float* fin, const double* din, const int* iin, const long long* lin,
                                   unsigned* ou, unsigned long long* od, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float f = fin[i];
  double d = din[i];
  int s = iin[i];
  long long l = lin[i];
  unsigned* u = ou + i * OU;
  u[0] = (unsigned)(int)f;
  u[1] = (unsigned)__float2int_rn(f);
  u[2] = (unsigned)__float2int_rz(f);
  u[3] = (unsigned)__float2int_rd(f);
  u[4] = (unsigned)__float2int_ru(f);
  u[5] = (unsigned)f;
  u[6] = __float2uint_rn(f);
  u[7] = __float2uint_rd(f);
  u[8] = __float2uint_ru(f);
  u[9] = (unsigned)(int)d;
  u[10] = (unsigned)__double2int_rn(d);
  u[11] = (unsigned)__double2int_rd(d);
  u[12] = (unsigned)__double2int_ru(d);
  u[13] = __double2uint_rz(d);
  u[14] = __float_as_uint((float)s);
  u[15] = __float_as_uint(__int2float_rz(s));
  u[16] = __float_as_uint(__int2float_rd(s));
  u[17] = __float_as_uint(__int2float_ru(s));
  u[18] = __float_as_uint((float)(unsigned)s);
  u[19] = __float_as_uint(__uint2float_rd((unsigned)s));
  u[20] = __float_as_uint((float)l);
  u[21] = __float_as_uint(__ll2float_ru(l));
  u[22] = __float_as_uint((float)d);
  u[23] = __float_as_uint(__double2float_rz(d));
  u[24] = __float_as_uint(__double2float_rd(d));
  u[25] = __float_as_uint(__double2float_ru(d));
  u[26] = __float_as_uint(__saturatef(f));
  u[27] = (unsigned)(signed char)s;
  u[28] = (unsigned)(unsigned short)s;
  u[29] = (unsigned)(short)(int)f;
  u[30] = (unsigned)(unsigned char)(unsigned)f;
  u[31] = __float_as_uint(__ull2float_rn((unsigned long long)l));
  unsigned long long* o = od + i * OD;
  o[0] = (unsigned long long)(long long)f;
  o[1] = (unsigned long long)f;
  o[2] = (unsigned long long)__float2ll_rn(f);
  o[3] = (unsigned long long)__float2ll_rd(f);
  o[4] = __float2ull_ru(f);
  o[5] = (unsigned long long)(long long)d;
  o[6] = (unsigned long long)d;
  o[7] = (unsigned long long)__double2ll_rn(d);
  o[8] = (unsigned long long)__double2ll_ru(d);
  o[9] = __double2ull_rd(d);
  o[10] = __double_as_longlong((double)f);
  o[11] = __double_as_longlong((double)s);
  o[12] = __double_as_longlong((double)(unsigned)s);
  o[13] = __double_as_longlong((double)l);
  o[14] = __double_as_longlong(__ll2double_rz(l));
  o[15] = __double_as_longlong(__ll2double_rd(l));
  o[16] = __double_as_longlong(__ull2double_ru((unsigned long long)l));
  o[17] = (unsigned long long)(long long)s;
  o[18] = (unsigned long long)(unsigned)s;
  o[19] = (unsigned long long)(int)l;
}

int main() {
  const int n = 192;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float sf[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.49999997f, 1e-40f, -1e-40f,
                      16777217.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
                      4294967040.0f, 4294967296.0f, 1e10f, -1e10f, 9.2233715e18f, 9.223372e18f, 1.8446743e19f,
                      1e30f, -1e30f, inf, -inf, nan, 0.99999994f, 255.9f, 256.5f, 65535.7f, -32768.9f, 33000.0f,
                      1.1754942e-38f, 3.4028235e38f};
  const double dinf = std::numeric_limits<double>::infinity();
  const double sd[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e-320, -1e-320, 1e-310,
                       2147483647.5, 2147483648.0, -2147483648.5, -2147483649.0, 4294967295.5, 4294967296.0,
                       9.2233720368547758e18, -9.2233720368547758e18, 1.8446744073709552e19, 1e300, -1e300,
                       dinf, -dinf, std::numeric_limits<double>::quiet_NaN(), 3.4028235677973366e38,
                       3.4028236e38, 1.0000000596046448, 1.0000000894069672, -1.0000000596046448,
                       1.4e-45, 7e-46, 0.1, 1.0 / 3.0};
  const int si[] = {0, 1, -1, INT_MAX, INT_MIN, 16777217, -16777217, 16777219, 33554435, 2147483520, 255, 256,
                    -129, 128, 65535, 65536, -32769};
  const long long sl[] = {0, 1, -1, LLONG_MAX, LLONG_MIN, (1LL << 53) + 1, -((1LL << 53) + 1), (1LL << 24) + 1,
                          (1LL << 62) + 12345, 4294967296LL, 4294967295LL, -4294967297LL, 9007199254740993LL * 3};
  Lcg r(1301);
  std::vector<float> fin(n);
  std::vector<double> din(n);
  std::vector<int> iin(n);
  std::vector<long long> lin(n);
  const int nf = sizeof sf / sizeof sf[0], nd = sizeof sd / sizeof sd[0];
  const int ni = sizeof si / sizeof si[0], nl = sizeof sl / sizeof sl[0];
  for (int i = 0; i < n; ++i) {
    fin[i] = i < nf ? sf[i] : r.range(-3e9f, 3e9f) / float(1u << (r.next() % 31));
    din[i] = i < nd ? sd[i] : r.drange(-1e10, 1e10) / double(1ull << (r.next() % 40));
    iin[i] = i < ni ? si[i] : (int)r.next();
    lin[i] = i < nl ? sl[i] : (long long)r.next64() >> (r.next() % 40);
  }
  Fixture f("convert", "convert");
  f.in("fin", fin);
  f.in("din", din);
  f.in("iin", iin);
  f.in("lin", lin);
  f.out("ou", n * OU * sizeof(unsigned));
  f.out("od", n * OD * sizeof(unsigned long long));
  f.s32("n", n);
  f.launch((const void*)convert, dim3(n / 64), dim3(64), 0);
}
