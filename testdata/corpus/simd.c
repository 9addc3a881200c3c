/* Loops that gcc -O3 vectorizes with SSE2: element-wise integer and float
 * arithmetic, integer reductions, min/max, conversions. */
#include <stdio.h>
#include <stdint.h>

#define N 4099
static int32_t a[N], b[N], c[N];
static float fa[N], fb[N], fc[N];
static uint8_t u8[N];
static int16_t s16[N];

int main(void) {
	for (int i = 0; i < N; i++) {
		a[i] = (i * 37) % 1001 - 500;
		b[i] = (i * 91) % 777 - 300;
		fa[i] = (float)i * 0.25f;
		fb[i] = (float)(N - i) * 0.5f;
	}
	for (int r = 0; r < 10; r++) {
		for (int i = 0; i < N; i++)
			c[i] = a[i] * b[i] + (c[i] >> 1);
		for (int i = 0; i < N; i++)
			fc[i] = fa[i] * fb[i] - fc[i] * 0.5f;
		for (int i = 0; i < N; i++)
			u8[i] = (uint8_t)(u8[i] + (uint8_t)a[i]);
		for (int i = 0; i < N; i++)
			s16[i] = (int16_t)(s16[i] ^ (int16_t)(b[i] * 8));
	}
	int64_t sum = 0;
	int32_t mx = INT32_MIN, mn = INT32_MAX;
	uint32_t x = 0;
	for (int i = 0; i < N; i++) {
		sum += c[i];
		mx = c[i] > mx ? c[i] : mx;
		mn = c[i] < mn ? c[i] : mn;
		x ^= (uint32_t)c[i];
	}
	double fs = 0;
	for (int i = 0; i < N; i++)
		fs += fc[i];
	unsigned us = 0;
	for (int i = 0; i < N; i++)
		us += u8[i] + (unsigned)(uint16_t)s16[i];
	int cnt = 0;
	for (int i = 0; i < N; i++)
		cnt += fa[i] > fb[i];
	printf("sum=%lld max=%d min=%d xor=%08x\n", (long long)sum, mx, mn, x);
	printf("fsum=%.17g us=%u cnt=%d\n", fs, us, cnt);
	return 0;
}
