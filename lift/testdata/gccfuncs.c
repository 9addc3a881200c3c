// Functions compiled with gcc by TestGCCDifferential: each runs natively
// (main prints its results) and, lifted, in the gvinst interpreter.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t u64;
typedef int64_t i64;
#define F __attribute__((noinline, noclone))

F u64 f_gcd(u64 a, u64 b, u64 c) { while (b) { u64 t = a % b; a = b; b = t; } return a + c; }
F u64 f_collatz(u64 a, u64 b, u64 c) { u64 n = 0; a = a % 1000 + 1; while (a != 1) { a = (a & 1) ? 3 * a + 1 : a / 2; n++; } return n + b - c; }
F u64 f_mix(u64 a, u64 b, u64 c) {
	i64 x = (i64)a, y = (i64)(b | 1);
	if (y == -1) y = 3;
	return (u64)(x / y) ^ (u64)(x % y) ^ (a >> (c & 63)) ^ (a << (b & 63)) ^ (u64)((i64)a >> (c & 63));
}
F u64 f_div32(u64 a, u64 b, u64 c) {
	int32_t x = (int32_t)a, y = (int32_t)(b | 1);
	if (y == -1) y = 3;
	uint32_t p = (uint32_t)a, q = (uint32_t)(c | 1);
	return (u64)(uint32_t)(x / y) + ((u64)(uint32_t)(x % y) << 32) + p / q + p % q;
}
F u64 f_mulhi(u64 a, u64 b, u64 c) {
	unsigned __int128 p = (unsigned __int128)a * b;
	__int128 q = (__int128)(i64)a * (i64)c;
	return (u64)(p >> 64) ^ (u64)p ^ (u64)(q >> 64);
}
F u64 f_bits(u64 a, u64 b, u64 c) {
	return __builtin_popcountll(a) + (a ? __builtin_ctzll(a) : 99) * 3 + (b ? __builtin_clzll(b) : 77) * 5 +
	       __builtin_bswap64(c) + ((a << 13) | (a >> 51)) + __builtin_parityll(b);
}
F u64 f_switch(u64 a, u64 b, u64 c) {
	switch (a % 9) {
	case 0: return b + c;
	case 1: return b - c;
	case 2: return b * c;
	case 3: return b ^ c;
	case 4: return b | c;
	case 5: return b & c;
	case 6: return b << 3;
	case 7: return ~b;
	default: return c / (b | 1);
	}
}
F u64 f_minmax(u64 a, u64 b, u64 c) {
	i64 x = a, y = b, z = c;
	i64 m = x < y ? x : y;
	m = m < z ? m : z;
	i64 M = x > y ? x : y;
	return (u64)(m * 3 + M) + (a < b) + ((i64)a < (i64)c) * 2 + (x == z) * 4 + (a > c ? 8 : 0);
}
F u64 f_narrow(u64 a, u64 b, u64 c) {
	uint8_t x = a, y = b;
	uint16_t s = (uint16_t)(a * b);
	int8_t sx = (int8_t)c;
	int16_t sw = (int16_t)(b >> 7);
	return (u64)(uint8_t)(x * y) + (u64)(s >> 3) + (u64)(i64)sx + (u64)(uint32_t)((uint32_t)a * (uint32_t)c) + (u64)(i64)sw * 7;
}
F u64 f_add128(u64 a, u64 b, u64 c) {
	unsigned __int128 x = ((unsigned __int128)a << 64) | b, y = ((unsigned __int128)c << 64) | a;
	unsigned __int128 s = x + y, d = x - y;
	return (u64)(s >> 64) ^ (u64)s ^ (u64)(d >> 64) ^ (u64)d ^ (u64)(x < y);
}
F double g_poly(double x, double y) { return ((x * 3.5 - y) * x + 1.25) / (y * y + 1.0) + __builtin_sqrt(x * x + y * y); }
F double g_conv(double x, double y) {
	long i = (long)x;
	int j = (int)y;
	float f = (float)x * (float)y;
	return (double)i + j * 0.5 + f + (x < y ? 1.0 : -1.0) + (x >= y) + (x < y ? x : y) + (double)(unsigned)(j & 0xffff);
}
F double g_floor(double x, double y) { return __builtin_floor(x) * 2 + __builtin_ceil(y) + __builtin_trunc(x * y) + (float)x / (float)(y + 10); }
F u64 h_sum(const int *p, long n) {
	int s = 0;
	for (long i = 0; i < n; i++) s += p[i] * 3 + (p[i] >> 2);
	return (u64)(unsigned)s;
}
F u64 h_strlen(const char *s, long n) { long k = 0; while (s[k]) k++; return k + n; }
F u64 h_sort(int *p, long n) {
	for (long i = 0; i < n; i++)
		for (long j = 0; j + 1 < n - i; j++)
			if (p[j] > p[j + 1]) { int t = p[j]; p[j] = p[j + 1]; p[j + 1] = t; }
	u64 h = 0;
	for (long i = 0; i < n; i++) h = h * 31 + (unsigned)p[i];
	return h;
}
F u64 h_fsum(const double *p, long n) {
	double s = 0;
	for (long i = 0; i < n; i++) s += p[i] * p[i];
	u64 r;
	memcpy(&r, &s, 8);
	return r;
}
F u64 h_bytes(const uint8_t *p, long n) {
	unsigned m = 0, cnt = 0;
	for (long i = 0; i < n; i++) if (p[i] > m) m = p[i];
	for (long i = 0; i < n; i++) cnt += p[i] == 'a';
	return m * 1000 + cnt;
}
F u64 h_fscale(float *p, long n) {
	for (long i = 0; i < n; i++) p[i] = p[i] * 1.5f + (float)i;
	u64 h = 0;
	for (long i = 0; i < n; i++) { uint32_t b; memcpy(&b, &p[i], 4); h = h * 131 + b; }
	return h;
}
F u64 h_short(const short *p, long n) {
	long s = 0;
	unsigned short mx = 0;
	for (long i = 0; i < n; i++) { s += p[i] * p[i]; if ((unsigned short)p[i] > mx) mx = p[i]; }
	return (u64)s + mx;
}

typedef u64 (*ifn)(u64, u64, u64);
typedef double (*dfn)(double, double);
typedef u64 (*afn)(void *, long);

static const u64 ivals[][3] = {
	{0, 1, 2}, {12, 18, 5}, {0xffffffffffffffffull, 3, 7}, {0x8000000000000000ull, 0xffffffffffffffffull, 1},
	{123456789, 987654321, 63}, {0x7fffffff, 0x80000000, 0xffffffff}, {17, 0, 0x1234}, {0xdeadbeefcafebabeull, 0x0123456789abcdefull, 0x55},
};
static const double dvals[][2] = {{0, 1}, {1.5, -2.25}, {-7.75, 3.0}, {1e10, 1e-3}, {-0.0, 0.5}, {123.456, 78.9}, {2.5, 2.5}, {-1e300, 1e300}};

void fill(void *buf, int kind, long n) {
	if (kind == 0) { int *p = buf; for (long i = 0; i < n; i++) p[i] = (int)((uint32_t)i * 2654435761u) - 12345; }
	if (kind == 1) { char *p = buf; for (long i = 0; i < n; i++) p[i] = "abcdefgha"[i % 9]; p[n - 1] = 0; }
	if (kind == 2) { double *p = buf; for (long i = 0; i < n; i++) p[i] = (double)(i % 17) * 0.37 - 2.0; }
	if (kind == 3) { float *p = buf; for (long i = 0; i < n; i++) p[i] = (float)(i % 13) * 0.25f - 1.0f; }
	if (kind == 4) { short *p = buf; for (long i = 0; i < n; i++) p[i] = (short)((uint32_t)i * 40503u); }
}

int main(void) {
	static const ifn ifns[] = {f_gcd, f_collatz, f_mix, f_div32, f_mulhi, f_bits, f_switch, f_minmax, f_narrow, f_add128};
	static const dfn dfns[] = {g_poly, g_conv, g_floor};
	static const afn afns[] = {(afn)h_sum, (afn)h_strlen, (afn)h_sort, (afn)h_fsum, (afn)h_bytes, (afn)h_fscale, (afn)h_short};
	static const int akind[] = {0, 1, 0, 2, 1, 3, 4};
	for (unsigned f = 0; f < sizeof ifns / sizeof ifns[0]; f++)
		for (unsigned i = 0; i < sizeof ivals / sizeof ivals[0]; i++)
			printf("i %u %u %016llx\n", f, i, (unsigned long long)ifns[f](ivals[i][0], ivals[i][1], ivals[i][2]));
	for (unsigned f = 0; f < sizeof dfns / sizeof dfns[0]; f++)
		for (unsigned i = 0; i < sizeof dvals / sizeof dvals[0]; i++) {
			double r = dfns[f](dvals[i][0], dvals[i][1]);
			u64 b;
			memcpy(&b, &r, 8);
			printf("d %u %u %016llx\n", f, i, (unsigned long long)b);
		}
	static char buf[8192];
	static const long lens[] = {1, 7, 64, 301};
	for (unsigned f = 0; f < sizeof afns / sizeof afns[0]; f++)
		for (unsigned i = 0; i < sizeof lens / sizeof lens[0]; i++) {
			fill(buf, akind[f], lens[i]);
			printf("a %u %u %016llx\n", f, i, (unsigned long long)afns[f](buf, lens[i]));
		}
	return 0;
}
