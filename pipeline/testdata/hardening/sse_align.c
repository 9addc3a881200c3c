/* Aligned SSE forms on a misaligned address must fault (#GP, SIGSEGV)
 * and unaligned forms must not: each case is one argument. */
#include <stdio.h>
#include <stdlib.h>

static char buf[1024] __attribute__((aligned(16)));

int main(int argc, char **argv) {
	char *p = buf + 16 + (argc > 2 ? atoi(argv[2]) : 0);
	int which = atoi(argv[1]);
	switch (which) {
	case 0: __asm__ volatile("movaps (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	case 1: __asm__ volatile("movaps %%xmm0, (%0)" ::"r"(p) : "memory"); break;
	case 2: __asm__ volatile("movapd (%0), %%xmm1" ::"r"(p) : "xmm1"); break;
	case 3: __asm__ volatile("movdqa (%0), %%xmm2" ::"r"(p) : "xmm2"); break;
	case 4: __asm__ volatile("movdqa %%xmm2, (%0)" ::"r"(p) : "memory"); break;
	case 5: __asm__ volatile("movntdq %%xmm3, (%0)" ::"r"(p) : "memory"); break;
	case 6: __asm__ volatile("movntps %%xmm3, (%0)" ::"r"(p) : "memory"); break;
	case 7: __asm__ volatile("addps (%0), %%xmm4" ::"r"(p) : "xmm4"); break;
	case 8: __asm__ volatile("pshufd $1, (%0), %%xmm5" ::"r"(p) : "xmm5"); break;
	case 9: __asm__ volatile("paddd (%0), %%xmm6" ::"r"(p) : "xmm6"); break;
	case 10: __asm__ volatile("fxsave (%0)" ::"r"(p) : "memory"); break;
	/* The forms that allow any alignment. */
	case 11: __asm__ volatile("movups (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	case 12: __asm__ volatile("movdqu %%xmm0, (%0)" ::"r"(p) : "memory"); break;
	case 13: __asm__ volatile("lddqu (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	case 14: __asm__ volatile("pcmpistri $0, (%0), %%xmm0" ::"r"(p) : "rcx", "cc"); break;
	case 15: __asm__ volatile("addss (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	case 16: __asm__ volatile("movsd (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	case 17: __asm__ volatile("movhps (%0), %%xmm0" ::"r"(p) : "xmm0"); break;
	}
	printf("ok %d\n", which);
	return 0;
}
