/* float and double arithmetic printed in %.17g, %a, %e, %f. */
#include <stdio.h>
#include <float.h>

static volatile double vzero = 0.0;

int main(void) {
	double d = 0.1, acc = 0;
	float f = 0.1f, facc = 0;
	for (int i = 1; i <= 100; i++) {
		acc += d * i / 3.0;
		facc += f * (float)i / 3.0f;
	}
	printf("%.17g %a %e %f\n", acc, acc, acc, acc);
	printf("%.9g %a %e %f\n", facc, (double)facc, facc, facc);
	double vals[] = {1.0 / 3.0, -2.5, 1e300 * 10, DBL_MIN, DBL_MIN / 4, DBL_MAX, DBL_EPSILON,
			 -0.0, 123456789.125, 0.5, 1.5, 2.5, -1e-7};
	for (unsigned i = 0; i < sizeof vals / sizeof vals[0]; i++)
		printf("%.17g|%a|%e|%f|%g|%.3f\n", vals[i], vals[i], vals[i], vals[i], vals[i], vals[i]);
	double inf = 1.0 / vzero;
	printf("inf=%f -inf=%e nanneq=%d\n", inf, -inf, (inf - inf) != (inf - inf));
	float fm = FLT_MAX, ft = FLT_MIN / 8;
	printf("flt: %.9g %a %.9g %a\n", fm, (double)fm, ft, (double)ft);
	printf("conv: %.17g %.9g %d %lld\n", (double)(float)(1.0 / 3), (float)1e-50, (int)-3.99,
	       (long long)1e18);
	printf("sub: %.17g div: %.17g mul: %.17g\n", 1.0 - 0.9, 2.0 / 3.0, 1.1 * 1.1);
	return 0;
}
