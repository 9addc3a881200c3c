/* weakcall: a parallel loop whose exit path may call a weak function no
 * object defines: the static link resolves it to address 0, and gcc
 * calls 0 directly where the test of its address passes (glibc's own
 * locking code has such calls). Nothing ever calls it; a liveness scan
 * from the loop's exit walks to 0 and cannot lift it. Usage:
 * weakcall [N] (default 100000). */
#include <stdio.h>
#include <stdlib.h>

extern void never_defined(double *a, long n) __attribute__((weak));

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n < 1 || n > 10000000)
		return 2;
	double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
	for (long i = 0; i < n; i++)
		b[i] = (double)(i % 97) / 3;
	for (long i = 0; i < n; i++)
		a[i] = b[i] * b[i] + 1;
	if (a[n / 2] > 1e300 && never_defined)
		never_defined(a, n);
	double s = 0;
	for (long i = 0; i < n; i++)
		s += a[i] * (i % 7);
	printf("%.17g\n", s);
	return 0;
}
