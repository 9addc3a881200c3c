/* A loop whose induction variable steps by one or by two, as the data
 * says: i += a[i] > t ? 2 : 1. From round `from` on, every seventh element
 * of the second half is large, so rows skip; before, every step is one and
 * a profile of those rounds fits i affinely. Arguments: n, rounds, from. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void pass(long *b, const long *a, long n, long t) {
	for (long i = 0; i < n;) {
		b[i] = a[i] * 3 + 1;
		if (a[i] > t)
			i += 2;
		else
			i += 1;
	}
}

int main(int argc, char **argv) {
	long n = atol(argv[1]);
	int rounds = atoi(argv[2]), from = atoi(argv[3]);
	long *a = malloc(sizeof *a * n), *b = malloc(sizeof *b * n);
	for (long i = 0; i < n; i++)
		a[i] = i % 100, b[i] = 0;
	long s = 0;
	for (int k = 0; k < rounds; k++) {
		if (k == from)
			for (long i = n / 2; i < n; i += 7)
				a[i] = 1000 + i;
		pass(b, a, n, 500);
		for (long i = 0; i < n; i++)
			s = s * 3 + b[i], b[i] = 0;
	}
	printf("%ld\n", s);
	return 0;
}
