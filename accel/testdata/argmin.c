/* k-means' assignment step: for each point, the nearest centre (a float
 * argmin: ucomiss/comiss and a conditional move or branch). gcc -O2 keeps
 * the test of k > 0, which the loop does not change, inside the point loop
 * and ends each side with its own copy of the loop's compare and branch.
 * Arguments: points, centres, rounds. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int n = atoi(argv[1]), k = atoi(argv[2]), rounds = atoi(argv[3]), d = 8;
	float *pt = malloc(sizeof(float) * n * d), *cen = malloc(sizeof(float) * k * d);
	int *lab = malloc(sizeof(int) * n);
	unsigned s = 12345;
	for (int i = 0; i < n * d; i++) {
		s = s * 1103515245 + 12345;
		pt[i] = (s >> 16) % 1000 / 10.0f;
	}
	for (int c = 0; c < k; c++)
		for (int j = 0; j < d; j++)
			cen[c * d + j] = pt[(c * 7 % n) * d + j];
	long h = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++) {
			int best = 0;
			float bd = 1e30f;
			for (int c = 0; c < k; c++) {
				float dd = 0;
				for (int j = 0; j < d; j++) {
					float t = pt[i * d + j] - cen[c * d + j];
					dd += t * t;
				}
				if (dd < bd) {
					bd = dd;
					best = c;
				}
			}
			lab[i] = best;
		}
		for (int c = 0; c < k; c++)
			for (int j = 0; j < d; j++)
				cen[c * d + j] += 0.25f * (float)((r + c + j) % 3 - 1);
		for (int i = 0; i < n; i++)
			h = h * 31 + lab[i];
	}
	printf("%ld\n", h);
	return 0;
}
