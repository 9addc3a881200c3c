/* Division and modulo with negative operands in all sign combinations and
 * widths; C truncates toward zero. */
#include <stdio.h>
#include <stdlib.h>

static volatile int vals[] = {7, -7, 13, -13, 1, -1, 100, -100, 2147483647};
static volatile int divs[] = {2, -2, 3, -3, 7, -7, 1, -1, 100};

int main(void) {
	unsigned long long chk = 0;
	for (unsigned i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		for (unsigned j = 0; j < sizeof divs / sizeof divs[0]; j++) {
			int a = vals[i], b = divs[j];
			long long la = (long long)a * 1000003LL, lb = b;
			printf("%d/%d=%d %d%%%d=%d  %lld/%lld=%lld %lld\n", a, b, a / b, a, b, a % b, la, lb,
			       la / lb, la % lb);
			chk = chk * 31 + (unsigned)(a / b + a % b) + (unsigned long long)(la / lb + la % lb);
		}
	}
	div_t d = div(-17, 5);
	ldiv_t ld = ldiv(17L, -5L);
	lldiv_t lld = lldiv(-17LL, -5LL);
	printf("div=%d,%d ldiv=%ld,%ld lldiv=%lld,%lld\n", d.quot, d.rem, ld.quot, ld.rem, lld.quot,
	       lld.rem);
	unsigned u = (unsigned)-7;
	printf("unsigned -7/2=%u %%2=%u\n", u / 2, u % 2);
	printf("chk=%llu\n", chk);
	return 0;
}
