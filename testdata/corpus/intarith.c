/* Integer arithmetic: add, sub, mul, div, mod, shifts over a deterministic
 * LCG stream, in several widths. Exit status: low 7 bits of the checksum. */
#include <stdio.h>
#include <stdint.h>

static uint64_t lcg(uint64_t *s) {
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

int main(void) {
	uint64_t s = 12345, sum64 = 0;
	uint32_t sum32 = 0;
	int64_t acc = 0;
	for (int i = 0; i < 1000; i++) {
		int64_t a = (int64_t)(lcg(&s) % 2000001) - 1000000;
		int64_t b = (int64_t)(lcg(&s) % 1999) - 999;
		if (b == 0)
			b = 7;
		acc += a / b + a % b;
		acc ^= (a * b) >> 3;
		int32_t x = (int32_t)(a & 0xffff) - 0x8000;
		int32_t y = (int32_t)b;
		sum32 += (uint32_t)(x * y) + (uint32_t)(x / y) + (uint32_t)(x % y);
		sum64 += (uint64_t)a * (uint64_t)b + ((uint64_t)a << (i % 63));
		int16_t h = (int16_t)(a ^ b);
		int8_t c = (int8_t)(a + b);
		acc += h * c;
	}
	printf("acc=%lld\n", (long long)acc);
	printf("sum32=%u\n", sum32);
	printf("sum64=%llu\n", (unsigned long long)sum64);
	printf("mix=%llx\n", (unsigned long long)(sum64 ^ (uint64_t)acc ^ sum32));
	return (int)((sum64 ^ sum32) & 0x7f);
}
