/* Exit status through exit(3) from a nested call, with atexit handlers
 * running in reverse order and buffered output being flushed. */
#include <stdio.h>
#include <stdlib.h>

static void first(void) { printf("atexit first (runs last)\n"); }
static void second(void) { printf("atexit second (runs first)\n"); }

__attribute__((noinline)) static void leave(int depth) {
	if (depth == 0) {
		printf("leaving from depth 0");
		exit(7);
	}
	leave(depth - 1);
	printf("not reached\n");
}

int main(void) {
	atexit(first);
	atexit(second);
	printf("start\n");
	leave(5);
	return 0;
}
