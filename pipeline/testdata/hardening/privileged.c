/* Privileged instructions and int n with a kernel-only gate raise #GP in
 * user mode: the process dies of SIGSEGV (139), not SIGILL. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	static char gdt[10];
	switch (atoi(argv[1])) {
	case 0: __asm__ volatile("cli"); break;
	case 1: __asm__ volatile("sti"); break;
	case 2: __asm__ volatile("wrmsr" ::"c"(0x10), "a"(0), "d"(0)); break;
	case 3: __asm__ volatile("rdmsr" ::"c"(0x10) : "rax", "rdx"); break;
	case 4: __asm__ volatile("hlt"); break;
	case 5: __asm__ volatile("inb $0x80, %%al" ::: "rax"); break;
	case 6: __asm__ volatile("outb %%al, $0x80" ::"a"(0)); break;
	case 7: __asm__ volatile("lgdt %0" ::"m"(gdt)); break;
	case 8: __asm__ volatile("int $0x21"); break;
	case 9: __asm__ volatile("wbinvd"); break;
	case 10: __asm__ volatile("invlpg (%0)" ::"r"(gdt)); break;
	}
	puts("not reached");
	return 0;
}
