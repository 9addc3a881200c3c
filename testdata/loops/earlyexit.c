/* A search loop with an early exit (break on a condition): its trip count
 * is not known on entry, so it is not a candidate for offload. Usage:
 * earlyexit [N] [TARGET] (default 500000 777777). */
#include <stdio.h>
#include <stdlib.h>

static long data[1000000];

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 500000;
	long target = argc > 2 ? atol(argv[2]) : 777777;
	if (n < 1 || n > 1000000) {
		fprintf(stderr, "earlyexit: bad N\n");
		return 2;
	}
	for (int i = 0; i < n; i++) /* LOOP: init.i */
		data[i] = (long)i * 3 + (i % 7);
	int found = -1;
	for (int i = 0; i < n; i++) { /* LOOP: search.i */
		if (data[i] >= target) {
			found = i;
			break;
		}
	}
	printf("earlyexit n=%d target=%ld found=%d value=%ld\n", n, target, found,
	       found >= 0 ? data[found] : -1L);
	return found >= 0 ? 0 : 1;
}
