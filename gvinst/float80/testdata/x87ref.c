/* x87ref runs single x87 instructions on the host FPU for the differential
 * tests of package float80. Each input line is
 *     OP CW A B
 * with CW the control word in hex and A, B operands written SSSS:MMMMMMMMMMMMMMMM
 * (sign+exponent word and significand in hex; integer and float operands are
 * given in the significand field). Each output line is
 *     R1 R2 SW
 * R1 and R2 in the same form (integer, float and EFLAGS results in the
 * significand field) and SW the status word after the instruction. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	uint64_t m;
	uint16_t se;
} __attribute__((packed)) f80;

f80 gA, gB, gR1, gR2;
uint16_t gCW, gSW;
uint64_t gBits;
uint8_t gZF, gPF, gCF;

#define PRE "fninit\n\tfldcw gCW(%%rip)\n\t"
#define POST "\n\tfninit"
#define X87(body) __asm__ volatile(PRE body POST ::: "memory", "cc")
#define LA "fldt gA(%%rip)\n\t"
#define LBA "fldt gB(%%rip)\n\tfldt gA(%%rip)\n\t"
#define SW "\n\tfnstsw gSW(%%rip)\n\t"
#define R1 "fstpt gR1(%%rip)\n\t"
#define R2 "fstpt gR2(%%rip)\n\t"

static int run(const char *op) {
#define OP(name, body)              \
	if (strcmp(op, name) == 0) { \
		X87(body);           \
		return 1;            \
	}
	OP("add", LBA "fadd %%st(1), %%st" SW R1)
	OP("sub", LBA "fsub %%st(1), %%st" SW R1)
	OP("mul", LBA "fmul %%st(1), %%st" SW R1)
	OP("div", LBA "fdiv %%st(1), %%st" SW R1)
	OP("sqrt", LA "fsqrt" SW R1)
	OP("prem", LBA "fprem" SW R1)
	OP("prem1", LBA "fprem1" SW R1)
	OP("rndint", LA "frndint" SW R1)
	OP("scale", LBA "fscale" SW R1)
	OP("xtract", LA "fxtract" SW R1 R2)
	OP("fcom", LBA "fcom %%st(1)" SW)
	OP("fucom", LBA "fucom %%st(1)" SW)
	OP("fcomi", LBA "fcomi %%st(1), %%st" SW "setz gZF(%%rip)\n\tsetp gPF(%%rip)\n\tsetc gCF(%%rip)")
	OP("fxam", LA "fxam" SW)
	OP("ldf", "flds gBits(%%rip)" SW R1)
	OP("ldd", "fldl gBits(%%rip)" SW R1)
	OP("stf", LA "fstps gBits(%%rip)" SW)
	OP("std", LA "fstpl gBits(%%rip)" SW)
	OP("fild16", "filds gBits(%%rip)" SW R1)
	OP("fild32", "fildl gBits(%%rip)" SW R1)
	OP("fild64", "fildll gBits(%%rip)" SW R1)
	OP("fist16", LA "fistps gBits(%%rip)" SW)
	OP("fist32", LA "fistpl gBits(%%rip)" SW)
	OP("fist64", LA "fistpll gBits(%%rip)" SW)
	OP("fisttp16", LA "fisttps gBits(%%rip)" SW)
	OP("fisttp32", LA "fisttpl gBits(%%rip)" SW)
	OP("fisttp64", LA "fisttpll gBits(%%rip)" SW)
	OP("f2xm1", LA "f2xm1" SW R1)
	OP("fyl2x", LBA "fyl2x" SW R1)
	OP("fyl2xp1", LBA "fyl2xp1" SW R1)
	OP("fpatan", LBA "fpatan" SW R1)
	OP("fsin", LA "fsin" SW R1)
	OP("fcos", LA "fcos" SW R1)
	OP("fsincos", LA "fsincos" SW R1 R2)
	OP("fptan", LA "fptan" SW R1 R2)
	OP("fldpi", "fldpi" SW R1)
	OP("fldl2e", "fldl2e" SW R1)
	OP("fldl2t", "fldl2t" SW R1)
	OP("fldlg2", "fldlg2" SW R1)
	OP("fldln2", "fldln2" SW R1)
	return 0;
#undef OP
}

int main(void) {
	char op[32];
	unsigned cw;
	unsigned ase, bse;
	unsigned long long am, bm;
	while (scanf("%31s %x %x:%llx %x:%llx", op, &cw, &ase, &am, &bse, &bm) == 6) {
		gCW = (uint16_t)cw;
		gA.se = (uint16_t)ase;
		gA.m = am;
		gB.se = (uint16_t)bse;
		gB.m = bm;
		gBits = (strncmp(op, "st", 2) == 0 || strncmp(op, "fist", 4) == 0) ? 0 : am;
		memset(&gR1, 0, sizeof gR1);
		memset(&gR2, 0, sizeof gR2);
		gSW = 0;
		gZF = gPF = gCF = 0;
		if (!run(op)) {
			fprintf(stderr, "x87ref: unknown op %s\n", op);
			return 2;
		}
		if (strncmp(op, "st", 2) == 0 || strncmp(op, "fist", 4) == 0) {
			gR1.m = gBits;
		}
		if (strcmp(op, "fcomi") == 0) {
			gR1.m = (uint64_t)gZF << 6 | (uint64_t)gPF << 2 | gCF;
		}
		printf("%04x:%016llx %04x:%016llx %04x\n", gR1.se, (unsigned long long)gR1.m, gR2.se,
		       (unsigned long long)gR2.m, gSW);
	}
	return 0;
}
