/* Struct copy: assignment of large and small structs, pass and return by
 * value, arrays of structs, nested structs, unions. */
#include <stdio.h>
#include <string.h>

struct small {
	int a;
	short b;
	char c;
};
struct big {
	double d[20];
	long l[9];
	struct small s[3];
	char name[37];
};
union pun {
	double d;
	unsigned long long u;
	float f[2];
};

__attribute__((noinline)) static struct big transform(struct big b, int k) {
	for (int i = 0; i < 20; i++)
		b.d[i] = b.d[i] * k + i;
	for (int i = 0; i < 9; i++)
		b.l[i] += k * i;
	b.s[k % 3].a += 100;
	b.name[k % 36] = (char)('A' + k % 26);
	return b;
}
__attribute__((noinline)) static struct small mk(int x) {
	struct small s = {x, (short)(x * 2), (char)(x & 0x7f)};
	return s;
}

int main(void) {
	struct big b;
	memset(&b, 0, sizeof b);
	for (int i = 0; i < 20; i++)
		b.d[i] = i * 0.5;
	strcpy(b.name, "structure-copy-test");
	struct big c = b, arr[4];
	for (int k = 0; k < 4; k++) {
		arr[k] = transform(c, k + 2);
		c = arr[k];
	}
	double sd = 0;
	long sl = 0;
	for (int i = 0; i < 20; i++)
		sd += c.d[i];
	for (int i = 0; i < 9; i++)
		sl += c.l[i];
	printf("sd=%.17g sl=%ld name=%s s=%d/%d/%d\n", sd, sl, c.name, c.s[0].a, c.s[1].a, c.s[2].a);
	printf("orig unchanged=%d sizes=%zu/%zu\n", b.d[3] == 1.5 && b.s[0].a == 0, sizeof(struct big),
	       sizeof(struct small));
	struct small s = mk(300);
	printf("small=%d %d %d\n", s.a, s.b, s.c);
	union pun p;
	p.d = -2.75;
	printf("pun=%016llx\n", p.u);
	p.f[0] = 1.0f;
	p.f[1] = -1.0f;
	printf("pun2=%016llx\n", p.u);
	return memcmp(&arr[3], &c, sizeof c) == 0 ? 0 : 1;
}
