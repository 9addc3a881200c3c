/* x87 long double arithmetic printed with %Lf, %La, %Le, %.21Lg. */
#include <stdio.h>

int main(void) {
	long double x = 1.0L, s = 0.0L;
	for (int i = 1; i <= 30; i++) {
		x = x * i;
		s += 1.0L / x;
	}
	printf("fact30=%Lf\n", x);
	printf("e-1=%.21Lg\n", s);
	printf("e-1=%La\n", s);
	printf("e-1=%Le\n", s);
	long double third = 1.0L / 3.0L;
	printf("third=%.25Lf %La\n", third, third);
	long double big = 1e4000L;
	printf("big=%Le small=%Le\n", big, 1.0L / big);
	long double y = (long double)0.1 - 0.1L;
	printf("diff=%Le\n", y);
	printf("cmp=%d conv=%.17g\n", 0.1L > 0.1, (double)(1.0L / 7));
	long long i64 = (long long)(third * 3e18L);
	printf("toint=%lld\n", i64);
	return 0;
}
