/* math.h: sqrt, sin, cos, exp, log, pow, fmod, floor, ceil, round, and
 * friends, over a fixed set of arguments. */
#include <stdio.h>
#include <math.h>

int main(void) {
	double xs[] = {0.0, 0.5, 1.0, 2.0, 3.14159, -1.25, 10.0, 100.5, 1e-5, -7.5};
	double acc = 0;
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		double x = xs[i];
		double ax = fabs(x);
		printf("x=%g sqrt=%.17g sin=%.17g cos=%.17g exp=%.17g\n", x, sqrt(ax), sin(x), cos(x),
		       exp(x));
		printf("  log=%.17g pow=%.17g fmod=%.17g floor=%g ceil=%g round=%g trunc=%g\n",
		       ax > 0 ? log(ax) : -1.0, pow(ax + 1, 1.5), fmod(x, 0.75), floor(x), ceil(x),
		       round(x), trunc(x));
		acc += sqrt(ax) + floor(x * 3) + round(x / 2);
	}
	printf("atan2=%.17g hypot=%.17g tanh=%.17g log10=%.17g cbrt=%.17g\n", atan2(1, -1),
	       hypot(3, 4), tanh(0.5), log10(12345), cbrt(-27));
	printf("sqrtf=%.9g rint=%g nearbyint=%g lround=%ld\n", sqrtf(2.0f), rint(2.5), nearbyint(3.5),
	       lround(-2.5));
	printf("fmin=%g fmax=%g copysign=%g isnan=%d isinf=%d\n", fmin(1, 2), fmax(1, 2),
	       copysign(3, -0.0), isnan(sqrt(-1.0)), isinf(exp(1000)));
	printf("acc=%.17g\n", acc);
	return 0;
}
