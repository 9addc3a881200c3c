/* malloc/realloc/calloc/free of blocks of several MiB, which glibc and musl
 * serve with mmap and grow with mremap. Only one word per 4 KiB page is
 * written and checked, so the program stays fast under an interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define STRIDE 1024 /* uint32_t words per 4 KiB page */

static uint64_t check(const uint32_t *p, size_t n) {
	uint64_t h = 0;
	for (size_t i = 0; i < n; i += STRIDE)
		h = h * 1000003u + p[i];
	return h;
}

int main(void) {
	size_t n = (8u << 20) / 4;
	uint32_t *p = malloc(n * 4);
	if (!p)
		return 10;
	for (size_t i = 0; i < n; i += STRIDE)
		p[i] = (uint32_t)(i * 2654435761u);
	printf("8MiB: %016llx\n", (unsigned long long)check(p, n));
	p = realloc(p, n * 4 * 4);
	if (!p)
		return 11;
	for (size_t i = n; i < 4 * n; i += STRIDE)
		p[i] = (uint32_t)i;
	printf("32MiB: %016llx\n", (unsigned long long)check(p, 4 * n));
	p = realloc(p, n);
	if (!p)
		return 12;
	printf("shrunk: %016llx\n", (unsigned long long)check(p, n / 4));
	uint32_t *z = calloc(n, 4);
	if (!z)
		return 13;
	size_t nz = 0;
	for (size_t i = 0; i < n; i += STRIDE / 4)
		nz += z[i] != 0;
	printf("calloc nonzero=%zu\n", nz);
	char *blocks[64];
	for (int i = 0; i < 64; i++) {
		size_t sz = (size_t)(i + 1) * 4096 * 3; /* 12 KiB .. 768 KiB */
		blocks[i] = malloc(sz);
		if (!blocks[i])
			return 14;
		memset(blocks[i], i, 4096);
		blocks[i][sz - 1] = (char)(i * 3);
	}
	unsigned long long t = 0;
	for (int i = 63; i >= 0; i--) {
		size_t sz = (size_t)(i + 1) * 4096 * 3;
		t = t * 131 + (unsigned char)blocks[i][i * 61] + (unsigned char)blocks[i][sz - 1];
		free(blocks[i]);
	}
	printf("blocks=%llu\n", t);
	free(z);
	free(p);
	return 0;
}
