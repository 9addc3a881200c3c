/* Dot products: double, float accumulated in double, and exact int64. */
#include <stdio.h>
#include <stdint.h>

#define N 50000
static double a[N], b[N];
static float fa[N], fb[N];
static int32_t ia[N], ib[N];

int main(void) {
	for (int i = 0; i < N; i++) {
		a[i] = 1.0 / (i + 1);
		b[i] = (double)(i % 10) - 4.5;
		fa[i] = (float)a[i];
		fb[i] = (float)b[i];
		ia[i] = i % 1000 - 500;
		ib[i] = (i * 7) % 333;
	}
	double d = 0, fd = 0;
	int64_t id = 0;
	for (int i = 0; i < N; i++)
		d += a[i] * b[i];
	for (int i = 0; i < N; i++)
		fd += (double)(fa[i] * fb[i]);
	for (int i = 0; i < N; i++)
		id += (int64_t)ia[i] * ib[i];
	printf("dot=%.17g fdot=%.17g idot=%lld\n", d, fd, (long long)id);
	return 0;
}
