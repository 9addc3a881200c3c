/* twosweeps.c: a time loop around two sweeps of a rows x cols grid. The
   first sweep stores into b on both sides of a test and counts, per row,
   the cells above a threshold; the second folds b back into a. Both
   sweeps are parallel in both indices. Arguments: rows cols steps. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	int rows = argc > 1 ? atoi(argv[1]) : 40;
	int cols = argc > 2 ? atoi(argv[2]) : 100;
	int steps = argc > 3 ? atoi(argv[3]) : 3;
	double (*a)[cols] = malloc(sizeof(double) * rows * cols);
	double (*b)[cols] = malloc(sizeof(double) * rows * cols);
	int *above = malloc(sizeof(int) * rows);
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++)
			a[i][j] = (double)((i * 7 + j * 13) % 29) / 3.0;
	for (int t = 0; t < steps; t++) {
		for (int i = 0; i < rows; i++) {
			int k = 0;
			for (int j = 0; j < cols; j++) {
				double x = a[i][j];
				if (x > 4.5) {
					b[i][j] = x * 0.75 + t;
					k++;
				} else {
					b[i][j] = x * x / 9.0;
				}
			}
			above[i] = k;
		}
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < cols; j++)
				a[i][j] = b[i][j] < a[i][j] ? b[i][j] : a[i][j] * 0.5 + 0.25;
	}
	double sum = 0;
	long count = 0;
	for (int i = 0; i < rows; i++) {
		count += above[i];
		for (int j = 0; j < cols; j++)
			sum += a[i][j];
	}
	printf("%.6f %ld\n", sum, count);
	return 0;
}
