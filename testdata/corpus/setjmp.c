/* setjmp/longjmp: plain, nested, from deep recursion, and longjmp(env, 0). */
#include <stdio.h>
#include <setjmp.h>

static jmp_buf outer, inner;
static int depth_reached;

static void dive(int depth) {
	if (depth == 50) {
		depth_reached = depth;
		longjmp(outer, depth);
	}
	dive(depth + 1);
}

static void zero(void) { longjmp(inner, 0); }

int main(void) {
	volatile int count = 0;
	int r = setjmp(outer);
	if (r == 0) {
		count++;
		dive(0);
		printf("not reached\n");
	}
	printf("returned %d depth=%d count=%d\n", r, depth_reached, count);
	volatile int loops = 0;
	if (setjmp(inner) < 3) {
		loops++;
		if (loops < 3)
			longjmp(inner, loops);
	}
	printf("loops=%d\n", loops);
	int z = setjmp(inner);
	if (z == 0)
		zero();
	printf("longjmp(0) gives %d\n", z);
	sigjmp_buf sj;
	volatile int s = 0;
	if (sigsetjmp(sj, 1) == 0) {
		s = 5;
		siglongjmp(sj, 9);
	}
	printf("sigsetjmp s=%d\n", s);
	return r == 50 ? 0 : 1;
}
