/* 128-bit integer arithmetic: multiply, divide, modulo, shifts, printing. */
#include <stdio.h>
#include <stdint.h>

typedef unsigned __int128 u128;
typedef __int128 s128;

static void print_u128(const char *tag, u128 v) {
	char buf[48];
	int i = 47;
	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	printf("%s=%s\n", tag, buf + i);
}

int main(void) {
	u128 f = 1;
	for (int i = 1; i <= 34; i++)
		f *= (u128)i;
	print_u128("34!", f);
	u128 m = ~(u128)0;
	print_u128("max", m);
	print_u128("max/3", m / 3);
	print_u128("max%1e19", m % 10000000000000000000ULL);
	s128 a = -((s128)1 << 100) + 12345;
	s128 q = a / 1000000007, r = a % 1000000007;
	printf("q.hi=%016llx q.lo=%016llx r=%lld\n", (unsigned long long)((u128)q >> 64),
	       (unsigned long long)q, (long long)r);
	uint64_t x = 0xfedcba9876543210ULL, y = 0x0fedcba987654321ULL;
	u128 p = (u128)x * y;
	printf("mulhi=%016llx mullo=%016llx\n", (unsigned long long)(p >> 64),
	       (unsigned long long)p);
	s128 sp = (s128)(int64_t)x * (int64_t)y;
	printf("smulhi=%016llx\n", (unsigned long long)((u128)sp >> 64));
	u128 sh = (u128)1 << 127;
	printf("shr=%016llx sar=%016llx\n", (unsigned long long)((sh >> 70) >> 0),
	       (unsigned long long)((u128)((s128)sh >> 100) >> 64));
	return (int)(f % 127);
}
