/* Bit manipulation: popcount, clz, ctz, parity, bswap, rotates, bit tricks. */
#include <stdio.h>
#include <stdint.h>

static inline uint32_t rotl32(uint32_t x, unsigned r) { return (x << (r & 31)) | (x >> (-r & 31)); }
static inline uint64_t rotr64(uint64_t x, unsigned r) { return (x >> (r & 63)) | (x << (-r & 63)); }

int main(void) {
	uint64_t x = 0x8000000000000001ULL, acc = 0;
	for (int i = 0; i < 200; i++) {
		x = x * 0x9E3779B97F4A7C15ULL + (uint64_t)i;
		uint32_t w = (uint32_t)(x >> 17);
		unsigned pc = (unsigned)__builtin_popcountll(x) + (unsigned)__builtin_popcount(w);
		unsigned lz = x ? (unsigned)__builtin_clzll(x) : 64;
		unsigned tz = w ? (unsigned)__builtin_ctz(w) : 32;
		acc += pc * 1000003u + lz * 1009u + tz + (unsigned)__builtin_parityll(x);
		acc ^= __builtin_bswap64(x) + __builtin_bswap32(w) + __builtin_bswap16((uint16_t)w);
		acc += rotl32(w, (unsigned)i) + rotr64(x, (unsigned)i * 3);
		acc += (x & -x) + (w & (w - 1)) + (unsigned)__builtin_ffsll((long long)x);
		acc += (uint64_t)__builtin_clrsb((int)w);
	}
	printf("acc=%016llx\n", (unsigned long long)acc);
	printf("pop=%d clz=%d ctz=%d\n", __builtin_popcountll(0xF0F0F0F0F0F0F0F0ULL),
	       __builtin_clzll(1), __builtin_ctzll(1ULL << 63));
	uint32_t v = 0x12345678;
	uint32_t rev = 0;
	for (int i = 0; i < 32; i++)
		rev |= ((v >> i) & 1u) << (31 - i);
	printf("rev=%08x bswap=%08x rotl=%08x\n", rev, __builtin_bswap32(v), rotl32(v, 8));
	return (int)(acc & 0x7f);
}
