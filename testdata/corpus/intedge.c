/* 64-bit and 32-bit integer edge cases without undefined behaviour:
 * limits, wrap-around through unsigned arithmetic, conversions, shifts. */
#include <stdio.h>
#include <stdint.h>
#include <limits.h>
#include <inttypes.h>

static volatile int64_t vmin64 = INT64_MIN, vmax64 = INT64_MAX;
static volatile int32_t vmin32 = INT32_MIN, vmax32 = INT32_MAX;

int main(void) {
	int64_t mn = vmin64, mx = vmax64;
	int32_t mn32 = vmin32, mx32 = vmax32;
	printf("%" PRId64 " %" PRId64 "\n", mn, mx);
	printf("%" PRId32 " %" PRId32 "\n", mn32, mx32);
	/* overflow via unsigned */
	printf("max+1=%" PRId64 "\n", (int64_t)((uint64_t)mx + 1));
	printf("min-1=%" PRId64 "\n", (int64_t)((uint64_t)mn - 1));
	printf("-min=%" PRIu64 "\n", -(uint64_t)mn);
	printf("max32+1=%" PRId32 "\n", (int32_t)((uint32_t)mx32 + 1u));
	printf("min*-1 (u)=%" PRIu32 "\n", (uint32_t)mn32 * 0xffffffffu);
	printf("min/1=%" PRId64 " min%%-1 safe=%" PRId64 "\n", mn / 1, mn % 2);
	printf("min/2=%" PRId64 " min/-2=%" PRId64 "\n", mn / 2, mn / -2);
	printf("min32/-2=%" PRId32 " max32/-1=%" PRId32 "\n", mn32 / -2, mx32 / -1);
	/* conversions */
	printf("trunc=%" PRId32 " %" PRIu8 " %" PRId8 "\n", (int32_t)(uint32_t)0x1234567890ULL,
	       (uint8_t)300, (int8_t)(uint8_t)200);
	printf("sext=%" PRId64 " zext=%" PRIu64 "\n", (int64_t)mn32, (uint64_t)(uint32_t)mn32);
	printf("u2d=%.17g d2u=%" PRIu64 "\n", (double)UINT64_MAX, (uint64_t)1.8446744073709550e19);
	printf("d2i=%" PRId64 " %" PRId32 "\n", (int64_t)-9.2233720368547748e18, (int32_t)-2147483648.9);
	/* shifts */
	uint64_t one = 1;
	for (int s = 0; s < 64; s += 9)
		printf("shl%d=%" PRIx64 " sar=%" PRId64 " shr=%" PRIx64 "\n", s, one << s, mn >> s,
		       (uint64_t)mn >> s);
	/* multiplication high parts */
	uint64_t a = 0xfedcba9876543210ULL, b = 0x0123456789abcdefULL;
	printf("mul=%" PRIx64 "\n", a * b);
	printf("mul32=%" PRIx32 "\n", (uint32_t)a * (uint32_t)b);
	printf("cmp=%d %d %d\n", mn < mx, (uint64_t)mn > (uint64_t)mx, mn32 < 0);
	return (int)(((uint64_t)mn >> 60) + 1);
}
