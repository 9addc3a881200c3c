/* Integer division and modulo by constants (compiled to multiply-shift
 * sequences), signed and unsigned, 32 and 64 bit. */
#include <stdio.h>
#include <stdint.h>

int main(void) {
	uint64_t s = 0; /* signed results summed with wrap-around */
	uint64_t u = 0;
	uint32_t s32 = 0;
	uint32_t u32 = 0;
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int64_t a = (int64_t)x;
		int32_t b = (int32_t)(x >> 32);
		s += (uint64_t)(a / 3) + (uint64_t)(a % 3) + (uint64_t)(a / 7) - (uint64_t)(a % 10) +
		     (uint64_t)(a / 1000000007) + (uint64_t)(a / -5) + (uint64_t)(a % 64) + (uint64_t)(a / 16);
		u += x / 3 + x % 7 + x / 10 + x % 1000000007 + x / 641 + x % 1024;
		s32 += (uint32_t)(b / 3) + (uint32_t)(b % 7) + (uint32_t)(b / 100) + (uint32_t)(b % -9) +
		       (uint32_t)(b / 8);
		u32 += (uint32_t)b / 3u + (uint32_t)b % 10u + (uint32_t)b / 125u + (uint32_t)b % 13u;
	}
	printf("s=%lld u=%llu s32=%d u32=%u\n", (long long)s, (unsigned long long)u, (int32_t)s32, u32);
	return (int)(u32 % 100);
}
