/* rowcopy M N SHIFT ALIAS: copies N bytes of each of M rows (N+16 bytes
 * apart) with memcpy, from a to b, or with ALIAS 1 from a to a itself
 * SHIFT bytes on: each call's source and destination then overlap (glibc's
 * memcpy copies them as memmove does), while the rows stay apart. Prints
 * an FNV-1a hash of both buffers. (accel TestRowCopyNest) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	int m = argc > 1 ? atoi(argv[1]) : 100;
	int n = argc > 2 ? atoi(argv[2]) : 300;
	int shift = argc > 3 ? atoi(argv[3]) : 0;
	int alias = argc > 4 ? atoi(argv[4]) : 0;
	if (m < 1 || n < 1 || m > 1 << 14 || n > 1 << 14 || shift < 0 || shift > 16) {
		fprintf(stderr, "rowcopy: bad arguments\n");
		return 2;
	}
	size_t s = (size_t)n + 16;
	unsigned char *a = malloc(s * m), *b = calloc(s * m, 1);
	if (!a || !b)
		return 1;
	for (size_t k = 0; k < s * m; k++) /* LOOP: fill.k */
		a[k] = (unsigned char)((k * 2654435761u) >> 24);
	unsigned char *dst = alias ? a : b;
	for (int i = 0; i < m; i++) /* LOOP: rows.i */
		memcpy(dst + (size_t)i * s + shift, a + (size_t)i * s, n);
	unsigned long long h = 1469598103934665603ULL;
	for (size_t k = 0; k < s * m; k++) /* LOOP: hash.k */
		h = (h ^ a[k] ^ (unsigned long long)b[k] << 8) * 1099511628211ULL;
	printf("rowcopy %d %d %d %d %016llx\n", m, n, shift, alias, h);
	free(a);
	free(b);
	return 0;
}
