/* Heat equation: 1D 3-point stencil over 10000 points for 100 steps,
 * in float and in double. */
#include <stdio.h>

#define N 10000
static double u[N], v[N];
static float fu[N], fv[N];

int main(void) {
	for (int i = 0; i < N; i++) {
		u[i] = (i % 100 == 0) ? 1000.0 : 0.0;
		fu[i] = (float)(i % 10);
	}
	for (int t = 0; t < 100; t++) {
		for (int i = 1; i < N - 1; i++)
			v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
		for (int i = 1; i < N - 1; i++)
			u[i] = v[i];
		for (int i = 1; i < N - 1; i++)
			fv[i] = (fu[i - 1] + fu[i] + fu[i + 1]) / 3.0f;
		for (int i = 1; i < N - 1; i++)
			fu[i] = fv[i];
	}
	double s = 0, fs = 0;
	for (int i = 0; i < N; i++) {
		s += u[i] * (i % 5);
		fs += fu[i];
	}
	printf("s=%.17g fs=%.17g u[150]=%.17g fu[77]=%.9g\n", s, fs, u[150], fu[77]);
	return 0;
}
