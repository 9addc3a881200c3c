/* Sorting benchmark: insertion sort, merge sort, heap sort and a quicksort
 * over the same pseudo-random data; every result is checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000
static int src[N], w[N], tmp[N];

static void isort(int *a, int n) {
	for (int i = 1; i < n; i++) {
		int v = a[i], j = i - 1;
		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}
static void msort(int *a, int n) {
	if (n < 16) {
		isort(a, n);
		return;
	}
	int h = n / 2;
	msort(a, h);
	msort(a + h, n - h);
	int i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, (size_t)n * sizeof *a);
}
static void sift(int *a, int i, int n) {
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < n && a[l] > a[m])
			m = l;
		if (l + 1 < n && a[l + 1] > a[m])
			m = l + 1;
		if (m == i)
			return;
		int t = a[i];
		a[i] = a[m];
		a[m] = t;
		i = m;
	}
}
static void hsort(int *a, int n) {
	for (int i = n / 2 - 1; i >= 0; i--)
		sift(a, i, n);
	for (int e = n - 1; e > 0; e--) {
		int t = a[0];
		a[0] = a[e];
		a[e] = t;
		sift(a, 0, e);
	}
}
static void qs(int *a, int lo, int hi) {
	while (lo < hi) {
		int p = a[lo + (hi - lo) / 2], i = lo, j = hi;
		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				int t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		if (j - lo < hi - i) {
			qs(a, lo, j);
			lo = i;
		} else {
			qs(a, i, hi);
			hi = j;
		}
	}
}
static unsigned long check(const int *a, int n, int *sorted) {
	unsigned long h = 0;
	*sorted = 1;
	for (int i = 0; i < n; i++) {
		h = h * 31 + (unsigned)a[i];
		if (i && a[i - 1] > a[i])
			*sorted = 0;
	}
	return h;
}

int main(void) {
	unsigned s = 2463534242u;
	for (int i = 0; i < N; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		src[i] = (int)(s % 100000) - 50000;
	}
	int ok = 1, sorted;
	unsigned long h;
	memcpy(w, src, sizeof w);
	isort(w, 3000);
	h = check(w, 3000, &sorted);
	ok &= sorted;
	printf("isort(3000) %lu %d\n", h, sorted);
	memcpy(w, src, sizeof w);
	msort(w, N);
	h = check(w, N, &sorted);
	ok &= sorted;
	printf("msort %lu %d\n", h, sorted);
	memcpy(w, src, sizeof w);
	hsort(w, N);
	unsigned long h2 = check(w, N, &sorted);
	ok &= sorted && h2 == h;
	printf("hsort %lu %d\n", h2, sorted);
	memcpy(w, src, sizeof w);
	qs(w, 0, N - 1);
	h2 = check(w, N, &sorted);
	ok &= sorted && h2 == h;
	printf("qsort %lu %d median=%d\n", h2, sorted, w[N / 2]);
	return ok ? 0 : 1;
}
