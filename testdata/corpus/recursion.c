/* Recursion: Fibonacci, Ackermann, mutual recursion and a recursive
 * permutation count. */
#include <stdio.h>

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int ack(int m, int n) {
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static int queens(int row, int n, unsigned cols, unsigned d1, unsigned d2) {
	if (row == n)
		return 1;
	int count = 0;
	for (int c = 0; c < n; c++) {
		if ((cols >> c & 1) || (d1 >> (row + c) & 1) || (d2 >> (row - c + n) & 1))
			continue;
		count += queens(row + 1, n, cols | 1u << c, d1 | 1u << (row + c), d2 | 1u << (row - c + n));
	}
	return count;
}

int main(void) {
	printf("fib(25)=%ld\n", fib(25));
	printf("ack(2,3)=%d ack(3,5)=%d\n", ack(2, 3), ack(3, 5));
	printf("even(1001)=%d odd(777)=%d\n", is_even(1001), is_odd(777));
	int q = queens(0, 8, 0, 0, 0);
	printf("queens(8)=%d\n", q);
	return q == 92 ? 0 : 1;
}
