/* Histogram through an index array: hist[idx[i]]++ is not affine in i,
 * so the dependence test cannot prove it parallel. The loop that computes
 * the indices is parallel. Usage: histogram [N] [BINS] (default 200000 256). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	int bins = argc > 2 ? atoi(argv[2]) : 256;
	if (n < 1 || bins < 1 || bins > 65536) {
		fprintf(stderr, "histogram: bad arguments\n");
		return 2;
	}
	int *idx = malloc((size_t)n * sizeof *idx);
	long *hist = calloc((size_t)bins, sizeof *hist);
	if (!idx || !hist)
		return 1;
	for (int i = 0; i < n; i++) /* LOOP: idx.i */
		idx[i] = (int)(((unsigned)i * 2654435761u) >> 8) % bins;
	for (int i = 0; i < n; i++) /* LOOP: hist.i */
		hist[idx[i]]++;
	long maxc = 0, total = 0;
	unsigned long h = 0;
	for (int b = 0; b < bins; b++) { /* LOOP: scan.b */
		total += hist[b];
		if (hist[b] > maxc)
			maxc = hist[b];
		h = h * 1000003u + (unsigned long)hist[b];
	}
	printf("histogram n=%d bins=%d total=%ld max=%ld hash=%lu\n", n, bins, total, maxc, h);
	free(idx);
	free(hist);
	return 0;
}
