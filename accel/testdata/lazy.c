/* lazy: two parallel loops pass arrays to each other round after round,
 * and system calls read and write those arrays directly: write(2) prints
 * part of b while the GPU holds it, and read(2) from a pipe stores into a
 * while the GPU holds it. gxbit accelerate must print what the native run
 * prints. Usage: lazy N (N >= 64). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	if (n < 64)
		return 2;
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
	int fds[2];
	if (!a || !b || pipe(fds) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		a[i] = i * 0.5;
		b[i] = 0;
	}
	for (int r = 0; r < 6; r++) {
		for (int i = 0; i < n; i++)
			b[i] = a[i] * 1.5 + r;
		if (r == 1 && write(1, b + n / 2, 64) != 64) /* raw bytes of b */
			return 1;
		for (int i = 0; i < n; i++)
			a[i] = b[i] * 0.25 + 1;
		if (r == 3) {
			double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
			if (write(fds[1], v, sizeof v) != sizeof v || read(fds[0], a + n / 3, sizeof v) != sizeof v)
				return 1;
		}
	}
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += a[i] - b[i];
	printf("\nlazy n=%d sum=%.17g a[n/3]=%g\n", n, sum, a[n / 3]);
	return 0;
}
