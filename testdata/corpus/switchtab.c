/* Dense switch statements that gcc compiles to jump tables, with
 * fall-through and a default case. */
#include <stdio.h>

__attribute__((noinline)) static int op(int code, int a) {
	switch (code) {
	case 0: return a + 1;
	case 1: return a * 3;
	case 2: return a - 7;
	case 3: return a ^ 0x55;
	case 4: return a * 4;
	case 5: return a >> 1;
	case 6: return -a;
	case 7: return a % 1000;
	case 8: a += 11; /* fall through */
	case 9: return a * 2;
	case 10: return a | 0x100;
	case 11: return a & 0xfff;
	case 12: return ~a;
	case 13: return a / 3;
	case 14: return a + code;
	case 15: return 42;
	default: return a - code;
	}
}

__attribute__((noinline)) static const char *name(unsigned char c) {
	switch (c) {
	case 'a': return "alpha";
	case 'b': return "bravo";
	case 'c': return "charlie";
	case 'd': return "delta";
	case 'e': return "echo";
	case 'f': return "foxtrot";
	case 'g': return "golf";
	case 'h': return "hotel";
	case 'i': return "india";
	default: return "?";
	}
}

int main(void) {
	int a = 1;
	long long chk = 0;
	for (int i = 0; i < 5000; i++) {
		a = op((i * 7 + (a & 3)) % 19, a) % 100000;
		chk += a;
	}
	printf("a=%d chk=%lld\n", a, chk);
	for (const char *p = "abcxdefghiz"; *p; p++)
		printf("%s ", name((unsigned char)*p));
	printf("\n");
	return (int)(chk & 0x3f);
}
