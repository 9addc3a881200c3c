/* Exit status by returning from main, after output that stdio must flush. */
#include <stdio.h>

int main(int argc, char **argv) {
	(void)argv;
	for (int i = 0; i < 3; i++)
		printf("line %d\n", i);
	fputs("partial line without newline", stdout);
	return 40 + argc;
}
