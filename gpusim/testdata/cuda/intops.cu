// intops: 32- and 64-bit integer arithmetic with wrap-around, signed and
// unsigned division and remainder with negative operands, shifts, bit
// counts, bit reversal, byte permutes, funnel shifts and high multiplies.
#include "fixture.h"

#include <climits>

#define O32 28
#define O64 16

extern "C" __global__ void intops(const int* a32, const int* b32, const long long* a64, const long long* b64,
                                  int* r32, long long* r64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int a = a32[i], b = b32[i];
  unsigned ua = (unsigned)a, ub = (unsigned)b;
  int* o = r32 + i * O32;
  o[0] = (int)(ua + ub);
  o[1] = (int)(ua - ub);
  o[2] = (int)(ua * ub);
  o[3] = __mulhi(a, b);
  o[4] = (int)__umulhi(ua, ub);
  o[5] = a / b;
  o[6] = a % b;
  o[7] = (int)(ua / ub);
  o[8] = (int)(ua % ub);
  o[9] = a & b;
  o[10] = a | b;
  o[11] = a ^ ~b;
  o[12] = (int)(ua << (ub & 31));
  o[13] = a >> (ub & 31);
  o[14] = (int)(ua >> (ub & 31));
  o[15] = __popc(ua);
  o[16] = __clz(a);
  o[17] = __ffs(a);
  o[18] = (int)__brev(ua);
  o[19] = (int)__byte_perm(ua, ub, ub & 0x7777);
  o[20] = (int)__funnelshift_l(ua, ub, ub >> 27);
  o[21] = (int)__funnelshift_r(ua, ub, ub >> 26);
  o[22] = min(a, b);
  o[23] = (int)max(ua, ub);
  o[24] = abs(a);
  o[25] = (int)((ua >> (ub & 15)) & ((1u << ((ub >> 4) & 15)) - 1u));
  o[26] = __mul24(a, b);
  o[27] = (int)__sad(a, b, ua >> 4);

  long long c = a64[i], d = b64[i];
  unsigned long long uc = (unsigned long long)c, ud = (unsigned long long)d;
  long long* p = r64 + i * O64;
  p[0] = (long long)(uc * ud);
  p[1] = c / d;
  p[2] = c % d;
  p[3] = (long long)(uc / ud);
  p[4] = (long long)(uc % ud);
  p[5] = __mul64hi(c, d);
  p[6] = (long long)__umul64hi(uc, ud);
  p[7] = (long long)(uc << (ud & 63));
  p[8] = c >> (ud & 63);
  p[9] = (long long)(uc >> (ud & 63));
  p[10] = __popcll(uc);
  p[11] = __clzll(c);
  p[12] = __ffsll(c);
  p[13] = (long long)__brevll(uc);
  p[14] = (long long)a * (long long)b;
  p[15] = (long long)((unsigned long long)ua * ub + (uc - ud));
}

int main() {
  const int n = 256;
  Lcg r(1201);
  std::vector<int> a(n), b(n);
  std::vector<long long> c(n), d(n);
  const int sa[] = {0, 1, -1, INT_MIN, INT_MAX, 7, -7, 100, -100, 65536, -65537, 12345678};
  const int sb[] = {1, -1, 2, -2, 3, -3, 7, -7, INT_MIN, INT_MAX, 1000, -1000};
  const long long sc[] = {0, 1, -1, LLONG_MIN, LLONG_MAX, 7, -7, 1000000007LL, -1000000007LL, 1LL << 40};
  const long long sd[] = {1, -1, 2, -2, 3, -3, 7, -7, LLONG_MIN, LLONG_MAX};
  for (int i = 0; i < n; ++i) {
    a[i] = i < 144 ? sa[i % 12] : (int)r.next();
    b[i] = i < 144 ? sb[(i / 12) % 12] : (int)r.next();
    if (i >= 144 && (i & 1)) b[i] = r.irange(-300, 300);
    c[i] = i < 100 ? sc[i % 10] : (long long)r.next64();
    d[i] = i < 100 ? sd[(i / 10) % 10] : (long long)r.next64();
    if (i >= 100 && (i & 1)) d[i] = r.irange(-100000, 100000);
    // Division by zero and MIN/-1 have no defined result in PTX: avoid them.
    if (b[i] == 0) b[i] = 5;
    if (a[i] == INT_MIN && b[i] == -1) b[i] = -3;
    if (d[i] == 0) d[i] = 11;
    if (c[i] == LLONG_MIN && d[i] == -1) d[i] = -3;
  }
  Fixture f("intops", "intops");
  f.in("a32", a);
  f.in("b32", b);
  f.in("a64", c);
  f.in("b64", d);
  f.out("r32", n * O32 * sizeof(int));
  f.out("r64", n * O64 * sizeof(long long));
  f.s32("n", n);
  f.launch((const void*)intops, dim3(n / 64), dim3(64), 0);
}
