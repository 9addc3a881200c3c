/* int 0x80 from a 64-bit process is the i386 system call ABI: number in
 * eax, arguments in ebx, ecx, edx (32 bits each), result in rax, every
 * other register kept. */
#include <stdio.h>
#include <string.h>

static const char msg[] = "hello from int 0x80\n";

static long i386(long nr, long a, long b, long c) {
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return r;
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("write %ld\n", i386(4, 1, (long)msg, strlen(msg)));
	/* The pointer's high half is dropped: the same bytes again. */
	printf("write high %ld\n", i386(4, 1, (long)msg | 1L << 32, 6));
	printf("bad buffer %ld\n", i386(4, 1, 16, 4));
	printf("getpid %s\n", i386(20, 0, 0, 0) > 0 ? "ok" : "failed");
	printf("brk %s\n", i386(45, 0, 0, 0) > 0 ? "ok" : "failed");
	printf("close bad fd %ld\n", i386(6, -1, 0, 0));
	printf("unknown %ld\n", i386(1000, 0, 0, 0));
	long rcx, r11, r8;
	__asm__ volatile("mov $0x1234, %%rcx\n\tmov $0x5678, %%r11\n\tmov $0x9abc, %%r8\n\tmov $20, %%eax\n\tint $0x80\n\t"
	                 "mov %%rcx, %0\n\tmov %%r11, %1\n\tmov %%r8, %2"
	                 : "=r"(rcx), "=r"(r11), "=r"(r8)::"rax", "rcx", "r11", "r8", "memory");
	printf("kept %lx %lx %lx\n", rcx, r11, r8);
	i386(1, 3, 0, 0); /* exit(3) */
	puts("not reached");
	return 0;
}
