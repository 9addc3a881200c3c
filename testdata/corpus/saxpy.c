/* Vector saxpy y = a*x + y in float and daxpy in double. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
	int n = 100000;
	float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
	double *dx = malloc((size_t)n * sizeof *dx), *dy = malloc((size_t)n * sizeof *dy);
	if (!x || !y || !dx || !dy)
		return 1;
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 1000) * 0.001f;
		y[i] = (float)(i % 7);
		dx[i] = (double)i / n;
		dy[i] = (double)(n - i);
	}
	for (int r = 0; r < 10; r++) {
		float a = 0.5f + (float)r;
		for (int i = 0; i < n; i++)
			y[i] = a * x[i] + y[i];
		double da = 1.0 / (r + 3);
		for (int i = 0; i < n; i++)
			dy[i] = da * dx[i] + dy[i];
	}
	double s = 0, ds = 0;
	for (int i = 0; i < n; i++) {
		s += y[i];
		ds += dy[i];
	}
	printf("saxpy=%.17g y[12345]=%.9g daxpy=%.17g dy[99]=%.17g\n", s, y[12345], ds, dy[99]);
	free(x);
	free(y);
	free(dx);
	free(dy);
	return 0;
}
