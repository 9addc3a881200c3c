/* Prints its arguments (not argv[0]) and selected environment variables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	printf("argc=%d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("argv[%d]=[%s] len=%zu\n", i, argv[i], strlen(argv[i]));
	const char *names[] = {"GXBIT_GREETING", "GXBIT_NUMBER", "GXBIT_EMPTY", "GXBIT_UNSET"};
	for (int i = 0; i < 4; i++) {
		const char *v = getenv(names[i]);
		printf("%s=%s\n", names[i], v ? v : "(unset)");
	}
	const char *num = getenv("GXBIT_NUMBER");
	int n = num ? atoi(num) : 0;
	return argc + n;
}
