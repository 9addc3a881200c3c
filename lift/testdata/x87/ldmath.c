/* ldmath: long double arithmetic, libm and conversions as a C library does
   them with the x87, printed with printf in several formats. */
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long double in[] = {
	0.0L, -0.0L, 1.0L, -1.5L, 0.1L, 3.0L, 2.5L, 1e300L, 1e-300L, 1e4000L,
	3.6e-4951L, 0.7L, 123456789.123456789L, -2.75e-5L, 6.02214076e23L,
};
#define N (int)(sizeof in / sizeof in[0])

static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};

int main(void)
{
	for (int m = 0; m < 4; m++) {
		fesetround(modes[m]);
		printf("mode %d\n", m);
		for (int i = 0; i < N; i++) {
			long double a = in[i], b = in[(i + 3) % N];
			printf("%d %La %.21Lg %Le %.3Lf\n", i, a, a, a / 7, a * 3);
			printf("  + %La - %La * %La / %La\n", a + b, a - b, a * b, a / b);
			printf("  sqrt %La rint %La floor %La ceil %La trunc %La\n", sqrtl(fabsl(a)), rintl(a), floorl(a), ceill(a), truncl(a));
			printf("  fmod %La rem %La ldexp %La frexp %La logb %La\n", fmodl(a, 0.7L), remainderl(a, 0.7L), ldexpl(a, -20), frexpl(a, &(int){0}), logbl(a));
			printf("  d %a f %a ll %lld lrint %ld\n", (double)a, (float)a, (long long)(a / 1e6L), lrintl(a / 1e10L));
		}
		for (int i = 1; i < 40; i++) {
			long double x = (long double)i / 7;
			printf("~%d exp %.20Lg log %.20Lg sin %.20Lg cos %.20Lg tan %.20Lg\n", i, expl(x), logl(x), sinl(x), cosl(x), tanl(x));
			printf("~ atan2 %.20Lg pow %.20Lg log2 %.20Lg log10 %.20Lg exp2 %.20Lg\n", atan2l(x, 1.5L), powl(x, 2.25L), log2l(x), log10l(x), exp2l(x));
			printf("~ asin %.20Lg acos %.20Lg atan %.20Lg expm1 %.20Lg log1p %.20Lg\n", asinl(x / 6), acosl(x / 6), atanl(x), expm1l(x), log1pl(x));
			printf("~ sinh %.20Lg cosh %.20Lg tanh %.20Lg\n", sinhl(x), coshl(x), tanhl(x));
			printf("  cbrt %.20Lg hypot %.20Lg\n", cbrtl(x), hypotl(x, 3));
		}
	}
	fesetround(FE_TONEAREST);
	static const char *strs[] = {"0.1", "1e-4950", "3.14159265358979323846264338327950288",
				     "1.18973149535723176502e+4932", "4.9406564584124654e-324", "0x1.fffffffffffffffep+16383", "-inf", "nan", "123456789012345678901234567890"};
	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		long double v = strtold(strs[i], NULL);
		printf("strtold %s = %La %.25Lg %g\n", strs[i], v, v, strtod(strs[i], NULL));
	}
	return 0;
}
