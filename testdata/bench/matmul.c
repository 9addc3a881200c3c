/* matmul: the example gxbit's demo accelerates. C = A * B for n x n
 * matrices of doubles; prints a checksum so runs can be compared byte for
 * byte. Build: gcc -O2 -o matmul matmul.c */
#include <stdio.h>
#include <stdlib.h>

static void multiply(int n, const double *a, const double *b, double *c)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double sum = 0;
			for (int k = 0; k < n; k++)
				sum += a[i * n + k] * b[k * n + j];
			c[i * n + j] = sum;
		}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	if (n < 1 || n > 10000) {
		fprintf(stderr, "matmul: size %d out of range 1..10000\n", n);
		return 2;
	}
	double *a = malloc(sizeof(double) * n * n);
	double *b = malloc(sizeof(double) * n * n);
	double *c = malloc(sizeof(double) * n * n);
	if (!a || !b || !c) {
		fprintf(stderr, "matmul: out of memory\n");
		return 1;
	}
	unsigned s = 12345;
	for (int i = 0; i < n * n; i++) {
		s = s * 1103515245u + 12345u;
		a[i] = (double)(s >> 16 & 0x7fff) / 32768.0 - 0.5;
		s = s * 1103515245u + 12345u;
		b[i] = (double)(s >> 16 & 0x7fff) / 32768.0 - 0.5;
	}
	multiply(n, a, b, c);
	double sum = 0, trace = 0;
	for (int i = 0; i < n * n; i++)
		sum += c[i];
	for (int i = 0; i < n; i++)
		trace += c[i * n + i];
	printf("matmul n=%d sum=%.17g trace=%.17g\n", n, sum, trace);
	free(a);
	free(b);
	free(c);
	return 0;
}
