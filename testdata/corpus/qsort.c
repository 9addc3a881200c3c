/* qsort with comparators over ints, doubles, strings and structs; every
 * comparator is a total order so the result does not depend on the libc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	int key;
	int id;
};

static int cmp_int(const void *a, const void *b) {
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}
static int cmp_dbl_desc(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}
static int cmp_str(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}
static int cmp_rec(const void *a, const void *b) {
	const struct rec *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

int main(void) {
	enum { N = 2000 };
	static int a[N];
	static double d[N];
	static struct rec r[N];
	unsigned s = 1;
	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		a[i] = (int)(s >> 8) - (1 << 22);
		d[i] = (double)(int)(s % 1000) / 7.0;
		r[i].key = (int)(s % 17);
		r[i].id = i;
	}
	qsort(a, N, sizeof a[0], cmp_int);
	qsort(d, N, sizeof d[0], cmp_dbl_desc);
	qsort(r, N, sizeof r[0], cmp_rec);
	int ok = 1;
	for (int i = 1; i < N; i++)
		ok &= a[i - 1] <= a[i] && d[i - 1] >= d[i] && cmp_rec(&r[i - 1], &r[i]) < 0;
	unsigned long long chk = 0;
	for (int i = 0; i < N; i++)
		chk = chk * 7 + (unsigned long long)a[i] + (unsigned long long)(d[i] * 8) +
		      (unsigned long long)(r[i].id * (i & 15));
	printf("sorted=%d first=%d last=%d dmax=%.17g rec0=%d/%d chk=%llu\n", ok, a[0], a[N - 1],
	       d[0], r[0].key, r[0].id, chk);
	char *words[] = {"pear", "apple", "fig", "banana", "cherry", "date", "apricot", "kiwi"};
	qsort(words, 8, sizeof words[0], cmp_str);
	for (int i = 0; i < 8; i++)
		printf("%s%c", words[i], i == 7 ? '\n' : ' ');
	int *hit = bsearch(&a[N / 2], a, N, sizeof a[0], cmp_int);
	printf("bsearch=%d\n", hit ? (int)(*hit == a[N / 2]) : -1);
	return ok ? 0 : 1;
}
