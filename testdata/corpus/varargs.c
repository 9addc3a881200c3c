/* Variadic functions: integer and double arguments beyond the register
 * area, va_copy, and vsnprintf. */
#include <stdio.h>
#include <stdarg.h>

static long isum(int n, ...) {
	va_list ap;
	va_start(ap, n);
	long s = 0;
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

static double mixed(const char *fmt, ...) {
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	double s = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p == 'i')
			s += va_arg(ap, int);
		else if (*p == 'l')
			s += (double)va_arg(ap, long long);
		else if (*p == 'd')
			s += va_arg(ap, double);
	}
	double first = 0;
	if (*fmt == 'd')
		first = va_arg(ap2, double);
	va_end(ap2);
	va_end(ap);
	return s + first * 1000;
}

static int say(char *buf, size_t n, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

int main(void) {
	printf("isum=%ld\n", isum(12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12));
	printf("mixed=%.17g\n", mixed("didldididdddddddddi", 1.5, 2, 2.25, 3LL << 40, 0.125, 4, 1e10, 5,
				      1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 7));
	char buf[64];
	int r = say(buf, sizeof buf, "%s:%d:%.3f:%c:%lld", "v", -3, 2.0 / 3, 'z', -(1LL << 50));
	printf("say=%d [%s]\n", r, buf);
	return (int)(isum(3, 10, 20, 30) / 10);
}
