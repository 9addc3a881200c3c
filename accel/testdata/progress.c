/* progress: a sequential outer loop k over a parallel inner loop whose
 * instance moves by constant amounts from step to step, as LU's trailing
 * update does: its row pointer by a row and an element, its trip count
 * falling by one. The progression can be broken at one step, for phase 2
 * to fall back to probing there. Usage: progress N STEPS JUMP SHORT
 *   JUMP   from step JUMP on (-1: never) the rows start one element
 *          further: a live-in that stops moving by the same amount;
 *   SHORT  step SHORT's (-1: none) trip count is 3 less than the
 *          progression's, though every live-in follows it (the bound is
 *          read from memory at every iteration: the stores may alias it).
 * Prints a checksum of the array. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	if (argc != 5)
		return 2;
	int n = atoi(argv[1]), steps = atoi(argv[2]), jump = atoi(argv[3]), shrt = atoi(argv[4]);
	if (n < 8 || steps < 1 || steps > n - 8)
		return 2;
	/* One block, so that the compiler cannot tell the stores from the
	 * bound. */
	int *a = malloc(sizeof(int) * ((n + 1) * (n + 1) + steps));
	if (!a)
		return 1;
	int *len = a + (n + 1) * (n + 1);
	for (int i = 0; i < (n + 1) * (n + 1); i++)
		a[i] = i * 7 % 13;
	for (int k = 0; k < steps; k++)
		len[k] = n - k - (k == shrt ? 3 : 0);
	for (int k = 0; k < steps; k++) {
		int *row = a + (k + 1) * (n + 1) + (jump >= 0 && k >= jump);
		for (int i = 0; i < len[k]; i++) /* the row before: k is sequential */
			row[i] = row[i] * 3 + row[i - (n + 1)] + k;
	}
	unsigned long h = 1469598103934665603UL;
	for (int i = 0; i < (n + 1) * (n + 1); i++)
		h = (h ^ (unsigned)a[i]) * 1099511628211UL;
	printf("progress %d %d %d %d: %016lx\n", n, steps, jump, shrt, h);
	return 0;
}
