/* x87ops: runs x87 instructions through inline assembly on a table of
   operands and prints every result bit for bit with the status word, so
   that a run under gxbit can be compared with a native one. Lines that
   start with '~' come from the transcendental instructions, where a real
   x87 is not always correctly rounded: the comparison allows 1 ulp there. */
#include <stdio.h>
#include <string.h>
#include <stdint.h>

static long double vals[] = {
	0.0L, -0.0L, 1.0L, -1.5L, 0.1L, 3.0L, 2.5L, -7.25L, 1e300L, 1e4000L,
	1e-4940L, 3.3621031431120935063e-4932L, 1e19L, -9.3e18L, 65535.5L, 0.7L,
	1.0L / 0.0L, -1.0L / 0.0L, __builtin_nanl(""), 123456789.123456789L,
	__builtin_nansl(""),
};
#define N (int)(sizeof vals / sizeof vals[0])

static void pr(const char *tag, const char *op, int i, int j, long double r, unsigned sw)
{
	unsigned char b[10];
	memcpy(b, &r, 10);
	printf("%s%s %d %d %02x%02x:", tag, op, i, j, b[9], b[8]);
	for (int k = 7; k >= 0; k--)
		printf("%02x", b[k]);
	printf(" sw=%04x\n", sw);
}

#define BIN(name, insn)                                                        \
	static long double name(long double a, long double b, unsigned *sw)    \
	{                                                                      \
		long double r;                                                 \
		unsigned short s;                                              \
		__asm__ volatile("fnclex\n\t" insn "\n\tfnstsw %1"            \
				 : "=t"(r), "=m"(s)                             \
				 : "0"(a), "u"(b));                             \
		*sw = s;                                                       \
		return r;                                                      \
	}
BIN(op_fadd, "fadd %%st(1), %%st")
BIN(op_fsub, "fsub %%st(1), %%st")
BIN(op_fsubr, "fsubr %%st(1), %%st")
BIN(op_fmul, "fmul %%st(1), %%st")
BIN(op_fdiv, "fdiv %%st(1), %%st")
BIN(op_fdivr, "fdivr %%st(1), %%st")
BIN(op_fprem, "fprem")
BIN(op_fprem1, "fprem1")
BIN(op_fscale, "fscale")

#define UN(name, insn)                                                         \
	static long double name(long double a, unsigned *sw)                   \
	{                                                                      \
		long double r;                                                 \
		unsigned short s;                                              \
		__asm__ volatile("fnclex\n\t" insn "\n\tfnstsw %1"            \
				 : "=t"(r), "=m"(s)                             \
				 : "0"(a));                                     \
		*sw = s;                                                       \
		return r;                                                      \
	}
UN(op_fsqrt, "fsqrt")
UN(op_frndint, "frndint")
UN(op_fchs, "fchs")
UN(op_fabs, "fabs")
UN(op_fsin, "fsin")
UN(op_fcos, "fcos")
UN(op_f2xm1, "f2xm1")
UN(op_fxam, "fxam")
UN(op_ftst, "ftst")

/* Two-operand instructions that pop: result replaces ST(1). */
#define POP2(name, insn)                                                       \
	static long double name(long double x, long double y, unsigned *sw)    \
	{                                                                      \
		long double r;                                                 \
		unsigned short s;                                              \
		__asm__ volatile("fnclex\n\t" insn "\n\tfnstsw %1"            \
				 : "=t"(r), "=m"(s)                             \
				 : "0"(x), "u"(y)                                \
				 : "st(1)");                                    \
		*sw = s;                                                       \
		return r;                                                      \
	}
POP2(op_fyl2x, "fyl2x")
POP2(op_fyl2xp1, "fyl2xp1")
POP2(op_fpatan, "fpatan")

static unsigned cmp(long double a, long double b, int quiet, unsigned *fl)
{
	unsigned short s, ax;
	if (quiet)
		__asm__ volatile("fnclex\n\tfldt %3\n\tfldt %2\n\tfucomip %%st(1), %%st\n\tfstp %%st(0)\n\tlahf\n\tseto %%al\n\tfnstsw %0"
				 : "=m"(s), "=a"(ax) : "m"(a), "m"(b) : "cc");
	else
		__asm__ volatile("fnclex\n\tfldt %3\n\tfldt %2\n\tfcomip %%st(1), %%st\n\tfstp %%st(0)\n\tlahf\n\tseto %%al\n\tfnstsw %0"
				 : "=m"(s), "=a"(ax) : "m"(a), "m"(b) : "cc");
	*fl = ax;
	return s;
}

static unsigned fcom(long double a, long double b, int quiet)
{
	unsigned short s;
	if (quiet)
		__asm__ volatile("fnclex\n\tfldt %2\n\tfldt %1\n\tfucompp\n\tfnstsw %0" : "=m"(s) : "m"(a), "m"(b));
	else
		__asm__ volatile("fnclex\n\tfldt %2\n\tfldt %1\n\tfcompp\n\tfnstsw %0" : "=m"(s) : "m"(a), "m"(b));
	return s;
}

/* P evaluates the operation before it reads the status word it stored. */
#define P(tag, name, i, j, expr)                                               \
	do {                                                                   \
		long double r_ = (expr);                                       \
		pr(tag, name, i, j, r_, sw);                                   \
	} while (0)

static const unsigned short cws[] = {0x37f, 0x27f, 0x07f, 0x77f, 0xb7f, 0xf7f};

int main(void)
{
	unsigned sw = 0, fl = 0;
	for (unsigned c = 0; c < sizeof cws / sizeof cws[0]; c++) {
		unsigned short cw = cws[c], saved;
		__asm__ volatile("fnstcw %0" : "=m"(saved));
		__asm__ volatile("fldcw %0" : : "m"(cw));
		printf("cw %04x\n", cw);
		for (int i = 0; i < N; i++) {
			long double a = vals[i];
			P("", "fsqrt", i, 0, op_fsqrt(a, &sw));
			P("", "frndint", i, 0, op_frndint(a, &sw));
			P("", "fchs", i, 0, op_fchs(a, &sw));
			P("", "fabs", i, 0, op_fabs(a, &sw));
			P("", "fxam", i, 0, (op_fxam(a, &sw), 0));
			P("", "ftst", i, 0, (op_ftst(a, &sw), 0));
			P("~", "fsin", i, 0, op_fsin(a, &sw));
			P("~", "fcos", i, 0, op_fcos(a, &sw));
			P("~", "f2xm1", i, 0, op_f2xm1(a / 4, &sw));
			double d;
			float f;
			short s16;
			int s32;
			long long s64;
			unsigned short s;
			__asm__ volatile("fnclex\n\tfstl %0\n\tfnstsw %1" : "=m"(d), "=m"(s) : "t"(a));
			{ unsigned long long u; memcpy(&u, &d, 8); printf("fstl %d %016llx sw=%04x\n", i, u, s); }
			__asm__ volatile("fnclex\n\tfsts %0\n\tfnstsw %1" : "=m"(f), "=m"(s) : "t"(a));
			{ unsigned u; memcpy(&u, &f, 4); printf("fsts %d %08x sw=%04x\n", i, u, s); }
			__asm__ volatile("fnclex\n\tfists %0\n\tfnstsw %1" : "=m"(s16), "=m"(s) : "t"(a));
			printf("fists %d %04x sw=%04x\n", i, (unsigned short)s16, s);
			__asm__ volatile("fnclex\n\tfistl %0\n\tfnstsw %1" : "=m"(s32), "=m"(s) : "t"(a));
			printf("fistl %d %08x sw=%04x\n", i, (unsigned)s32, s);
			__asm__ volatile("fnclex\n\tfld %%st(0)\n\tfistpll %0\n\tfnstsw %1" : "=m"(s64), "=m"(s) : "t"(a));
			printf("fistpll %d %016llx sw=%04x\n", i, (unsigned long long)s64, s);
			__asm__ volatile("fnclex\n\tfld %%st(0)\n\tfisttpll %0\n\tfnstsw %1" : "=m"(s64), "=m"(s) : "t"(a));
			printf("fisttpll %d %016llx sw=%04x\n", i, (unsigned long long)s64, s);
			__asm__ volatile("fnclex\n\tfld %%st(0)\n\tfisttpl %0\n\tfnstsw %1" : "=m"(s32), "=m"(s) : "t"(a));
			printf("fisttpl %d %08x sw=%04x\n", i, (unsigned)s32, s);
			for (int j = 0; j < N; j++) {
				long double b = vals[j];
				P("", "fadd", i, j, op_fadd(a, b, &sw));
				P("", "fsub", i, j, op_fsub(a, b, &sw));
				P("", "fsubr", i, j, op_fsubr(a, b, &sw));
				P("", "fmul", i, j, op_fmul(a, b, &sw));
				P("", "fdiv", i, j, op_fdiv(a, b, &sw));
				P("", "fdivr", i, j, op_fdivr(a, b, &sw));
				P("", "fprem", i, j, op_fprem(a, b, &sw));
				P("", "fprem1", i, j, op_fprem1(a, b, &sw));
				P("", "fscale", i, j, op_fscale(a, b, &sw));
				P("~", "fyl2x", i, j, op_fyl2x(a, b, &sw));
				P("~", "fyl2xp1", i, j, op_fyl2xp1(a / 8, b, &sw));
				P("~", "fpatan", i, j, op_fpatan(a, b, &sw));
				sw = cmp(a, b, 0, &fl);
				printf("fcomip %d %d sw=%04x fl=%04x\n", i, j, sw, fl);
				sw = cmp(a, b, 1, &fl);
				printf("fucomip %d %d sw=%04x fl=%04x\n", i, j, sw, fl);
				printf("fcompp %d %d sw=%04x\n", i, j, fcom(a, b, 0));
				printf("fucompp %d %d sw=%04x\n", i, j, fcom(a, b, 1));
			}
		}
		__asm__ volatile("fldcw %0" : : "m"(saved));
	}
	/* Constants, per rounding mode. */
	for (unsigned c = 0; c < sizeof cws / sizeof cws[0]; c++) {
		unsigned short cw = cws[c];
		long double k[7];
		__asm__ volatile("fldcw %7\n\tfld1\n\tfldl2t\n\tfldl2e\n\tfldpi\n\tfldlg2\n\tfldln2\n\tfldz\n\t"
				 "fstpt %6\n\tfstpt %5\n\tfstpt %4\n\tfstpt %3\n\tfstpt %2\n\tfstpt %1\n\tfstpt %0"
				 : "=m"(k[0]), "=m"(k[1]), "=m"(k[2]), "=m"(k[3]), "=m"(k[4]), "=m"(k[5]), "=m"(k[6])
				 : "m"(cw));
		for (int i = 0; i < 7; i++)
			pr("", "const", c, i, k[i], 0);
	}
	unsigned short cw = 0x37f;
	__asm__ volatile("fldcw %0" : : "m"(cw));
	/* Stack manipulation: fxch, fincstp/fdecstp, ffree, fxtract, fsincos,
	   fptan, fcmov, fnstsw with TOP, fnstenv. */
	for (int i = 0; i < N; i++) {
		long double a = vals[i], x, y;
		unsigned short s;
		__asm__ volatile("fnclex\n\tfxtract\n\tfnstsw %2" : "=t"(x), "=u"(y), "=m"(s) : "0"(a));
		pr("", "fxtract.sig", i, 0, x, s);
		pr("", "fxtract.exp", i, 0, y, s);
		__asm__ volatile("fnclex\n\tfsincos\n\tfnstsw %2" : "=t"(x), "=u"(y), "=m"(s) : "0"(a));
		pr("~", "fsincos.cos", i, 0, x, s);
		pr("~", "fsincos.sin", i, 0, y, s);
		__asm__ volatile("fnclex\n\tfptan\n\tfnstsw %2" : "=t"(x), "=u"(y), "=m"(s) : "0"(a));
		pr("~", "fptan.push", i, 0, x, s);
		pr("~", "fptan.tan", i, 0, y, s);
	}
	{
		long double a = 1.5L, b = -2.0L, r1, r2;
		unsigned short s1, s2, s3;
		unsigned char env[28];
		__asm__ volatile("fldt %5\n\tfldt %6\n\tfxch %%st(1)\n\tfnstsw %2\n\tfdecstp\n\tfnstsw %3\n\tfincstp\n\t"
				 "fld1\n\tffree %%st(0)\n\tfincstp\n\tfstpt %0\n\tfstpt %1\n\tfnstsw %4"
				 : "=m"(r1), "=m"(r2), "=m"(s1), "=m"(s2), "=m"(s3) : "m"(a), "m"(b));
		pr("", "fxch", 0, 0, r1, s1);
		pr("", "fxch", 1, 0, r2, s2);
		printf("sw %04x\n", s3);
		for (int c = 0; c < 4; c++) {
			long double p = 10.0L, q = 20.0L, r;
			unsigned char fl = c == 0 ? 0x02 : c == 1 ? 0x03 : c == 2 ? 0x42 : 0x06;
			__asm__ volatile("fldt %2\n\tfldt %3\n\tmovb %1, %%ah\n\tsahf\n\tfcmovb %%st(1), %%st\n\tfcmove %%st(1), %%st\n\t"
					 "fxch\n\tfcmovnbe %%st(1), %%st\n\tfcmovu %%st(1), %%st\n\tfstp %%st(1)\n\tfstpt %0"
					 : "=m"(r) : "q"(fl), "m"(p), "m"(q) : "cc", "rax");
			pr("", "fcmov", c, 0, r, 0);
		}
		__asm__ volatile("fld1\n\tfldz\n\tfnstenv %0\n\tfldenv %0\n\tfstp %%st(0)\n\tfstp %%st(0)" : "+m"(env));
		printf("fnstenv");
		for (int i = 0; i < 12; i++)
			printf(" %02x", env[i]);
		printf("\n");
	}
	return 0;
}
