/* Reads numbers from stdin with scanf and strtod and prints them exactly.
 * The first line holds a count n, then n numbers for scanf; the rest of the
 * input holds one strtod token per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
	int n;
	if (scanf("%d", &n) != 1) {
		fprintf(stderr, "no count\n");
		return 2;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		double v;
		float f;
		if (scanf("%lf", &v) != 1) {
			fprintf(stderr, "bad number %d\n", i);
			return 3;
		}
		f = (float)v;
		printf("scanf %d: %.17g %a %.9g\n", i, v, v, f);
		sum += v;
	}
	printf("sum=%.17g\n", sum);
	char line[256];
	int lines = 0;
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		char *end;
		double v = strtod(line, &end);
		float fv = strtof(line, NULL);
		printf("strtod '%s': %.17g %a rest='%s' f=%a\n", line, v, v, end, (double)fv);
		lines++;
	}
	printf("lines=%d\n", lines);
	return lines;
}
