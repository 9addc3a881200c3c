/* Messages to stderr and stdout (abort-free), with unbuffered stderr,
 * strerror, and a non-zero exit status. */
#include <stdio.h>
#include <string.h>
#include <errno.h>

int main(void) {
	printf("to stdout 1\n");
	fprintf(stderr, "warning: something on stderr (%d)\n", 1);
	fputs("error: second message\n", stderr);
	FILE *f = fopen("/nonexistent-gxbit/file", "r");
	int e = errno;
	fprintf(stderr, "open failed: %s (errno=%d, null=%d)\n", strerror(e), e, f == NULL);
	fputc('!', stderr);
	fputc('\n', stderr);
	printf("to stdout 2\n");
	fflush(stdout);
	fprintf(stderr, "done\n");
	return 3;
}
