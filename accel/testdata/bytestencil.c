/* bytestencil: a time-stepped 5-point stencil over an 8-bit image, with
 * rounding, a saturating clamp and a brightness step, as image filters
 * write it. gcc -O3 vectorises the row loops with SSE2 byte and word ops
 * (punpcklbw, paddw, psllw, psrlw, packuswb, pminub, paddusb). Prints an
 * FNV-1a hash of the image. Usage: bytestencil ROWS COLS STEPS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int rows = argc > 1 ? atoi(argv[1]) : 64;
	int cols = argc > 2 ? atoi(argv[2]) : 80;
	int steps = argc > 3 ? atoi(argv[3]) : 2;
	if (rows < 3 || cols < 3 || steps < 0) {
		fprintf(stderr, "bytestencil: bad size\n");
		return 2;
	}
	uint8_t *img = malloc((size_t)rows * cols), *out = malloc((size_t)rows * cols);
	for (int i = 0; i < rows * cols; i++)
		img[i] = (uint8_t)((i * 2246822519u) >> 25);
	for (int s = 0; s < steps; s++) {
		for (int i = 1; i < rows - 1; i++)
			for (int j = 1; j < cols - 1; j++) {
				const uint8_t *p = img + (size_t)i * cols + j;
				unsigned v = (p[-cols] + p[cols] + p[-1] + p[1] + 4u * p[0] + 4u) >> 3;
				out[(size_t)i * cols + j] = v > 240 ? 240 : (uint8_t)v;
			}
		for (int i = 1; i < rows - 1; i++)
			for (int j = 1; j < cols - 1; j++) {
				unsigned v = out[(size_t)i * cols + j] + 9u;
				img[(size_t)i * cols + j] = v > 255 ? 255 : (uint8_t)v;
			}
	}
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < rows * cols; i++) {
		h ^= img[i];
		h *= 1099511628211ull;
	}
	printf("%016llx\n", (unsigned long long)h);
	return 0;
}
