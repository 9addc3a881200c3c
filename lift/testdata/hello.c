// A small libc-using program TestStaticPrograms runs natively and in the
// gvinst interpreter (static glibc and musl builds).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(int argc, char **argv) {
	char buf[200];
	int a[50];
	for (int i = 0; i < 50; i++) a[i] = (i * 7919) % 101 - 50;
	qsort(a, 50, sizeof a[0], cmp);
	long s = 0;
	for (int i = 0; i < 50; i++) s += a[i] * (i + 1);
	snprintf(buf, sizeof buf, "%s-%d-%x-%lu-%c-%5.3s|%-6d|%08x", "abc", -42, 0xbeef, 1234567890123ul, 'Z', "truncated", 17, 255u);
	printf("hello %s %zu %ld %d %d argc=%d\n", buf, strlen(buf), s, a[0], a[49], argc);
	char *p = malloc(1000);
	memset(p, 'x', 999);
	p[999] = 0;
	char *q = strdup(p + 990);
	printf("%zu %s %ld %s %d\n", strlen(p), strchr(p, 'y') ? "found" : "none", strtol("-12345", 0, 10), q, strcmp(q, "xxxxxxxxx"));
	free(q);
	free(p);
	double x = 3.14159265358979, y = -2.5e-7;
	printf("%.3f %g %e %.10f %f %d\n", x, y, x * 1e100, 1.0 / 3, (double)(float)x, (int)(x * 1000));
	return 3;
}
