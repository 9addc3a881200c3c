//go:build linux && amd64

package jit

import (
	"fmt"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestTrapAfterCoalescedPut is FuzzEngines' first crasher, kept as text
// since the generator has grown: a store that faults after a PUT the
// interpreter coalesced (it may have written s0 already; states are
// compared only at stops other than traps).
func TestTrapAfterCoalescedPut(t *testing.T) {
	mustRunBoth(t, flagsProgram("  PUT.u8 s7, s0\n  GET.u8 v0, s1\n  ST.u8 s7(40), v0\n  PUT.s64 s0, v0\n  LI.u8 v0, 0\n"), []byte("70,700910A0101007,"))
}

// mustRunBoth is runBoth on a program that must be valid GVInst.
func mustRunBoth(t *testing.T, src string, seed []byte) {
	t.Helper()
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for _, b := range bs {
		if err := gvinst.Verify(b); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
	}
	runBoth(t, src, seed, 0)
}

// mustRunBothFrom is mustRunBoth starting at guest address pc, with a
// budget.
func mustRunBothFrom(t *testing.T, src string, seed []byte, budget uint64, pc uint64) {
	t.Helper()
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	for _, b := range bs {
		if err := gvinst.Verify(b); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
	}
	runBothAt(t, src, seed, budget, 0, pc)
}

// flagsProgram is a block that records flags with FLAGS (or SETFLAGS) and
// reads them back with GETCC and GETFLAGS into guest registers.
func flagsProgram(body string) string {
	return "vblock 0x1000..0x1100:\n  # 0x1000: insn\n" + body +
		"  # 0x10fc: jcc\n  BRANCH s0, 0x2000, 0x3000\n" +
		"vblock 0x2000..0x2002:\n  # 0x2000: syscall\n  SYSCALL 0x2002\n" +
		"vblock 0x3000..0x3002:\n  # 0x3000: syscall\n  SYSCALL 0x3002\n"
}

// TestFlagsRecordNotItsOperation: GETCC after a FLAGS.sub whose result is
// not a-b reads a and b as the interpreter's getCC does (the fuzzer found
// GETCC.a and GETCC.le computed from r).
func TestFlagsRecordNotItsOperation(t *testing.T) {
	for _, cc := range []string{"a", "le", "l", "g", "be", "e", "ne", "b", "s", "o", "p"} {
		mustRunBoth(t, flagsProgram(
			"  MOV.u64 v0, s0\n  FLAGS.sub.u8 v0, v0, v0, v0\n  GETCC."+cc+" v1\n  PUT.u64 s2, v1\n  GETFLAGS v2\n  PUT.u64 s3, v2\n"), []byte{7})
	}
}

// TestFlagsEveryKind reads every condition and RFLAGS after each kind of
// FLAGS, at every width, on operands near the width's edges.
func TestFlagsEveryKind(t *testing.T) {
	kinds := []string{"add", "sub", "adc", "sbb", "logic", "inc", "dec", "neg", "shl", "shr", "sar", "rol", "ror", "mul", "none"}
	types := []string{"u8", "s16", "u32", "s64", "b64"}
	vals := []string{"0", "1", "-1", "127", "128", "-128", "65535", "2147483648", "9223372036854775807", "63", "64", "7"}
	conds := []string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"}
	n := 0
	for ki, k := range kinds {
		for ti, ty := range types {
			a, b := vals[(ki+ti)%len(vals)], vals[(ki*3+ti*5+1)%len(vals)]
			body := "  LI.u64 v0, " + a + "\n  LI.u64 v1, " + b + "\n  ADD.u64 v2, v0, v1\n  LI.u64 v3, 1\n" +
				"  SETFLAGS s5\n  FLAGS." + k + "." + ty + " v0, v1, v2, v3\n"
			for ci, cc := range conds {
				if (ci+n)%3 == 0 {
					body += "  GETCC." + cc + " v4\n  PUT.u64 s" + string(rune('0'+ci%8)) + ", v4\n"
				}
			}
			body += "  GETFLAGS v5\n  PUT.u64 s9, v5\n  FLAGS.inc." + ty + " v2, v1, v0, v0\n  GETFLAGS v6\n  PUT.u64 s10, v6\n"
			mustRunBoth(t, flagsProgram(body), []byte{byte(n)})
			n++
		}
	}
}

// TestDivisions runs DIV, REM, DIVW, REMW and MULHI on the operands where
// the host's div would fault or the quotient does not fit (zero divisors,
// min / -1, a high half not below the divisor, a wide dividend that is
// not a sign extension) and on ordinary ones, at every width: both engines
// trap alike or compute alike.
func TestDivisions(t *testing.T) {
	type op struct{ hi, lo, b string }
	ops := []op{
		{"0", "100", "7"}, {"-1", "-100", "7"}, {"0", "5", "0"}, {"-1", "-9223372036854775808", "-1"},
		{"0", "-9223372036854775808", "-1"}, {"-1", "-128", "-1"}, {"-1", "-2147483648", "-1"}, {"3", "5", "2"},
		{"1", "0", "1"}, {"0", "255", "255"}, {"-1", "1", "3"}, {"12", "34", "-5"}, {"0", "-1", "16"},
	}
	for _, ty := range []string{"u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"} {
		for i, o := range ops {
			for _, insn := range []string{"DIVW.%s v3, v0, v1, v2", "REMW.%s v3, v0, v1, v2", "DIV.%s v3, v1, v2", "REM.%s v3, v1, v2", "MULHI.%s v3, v1, v2"} {
				body := "  LI.u64 v0, " + o.hi + "\n  LI.u64 v1, " + o.lo + "\n  LI.u64 v2, " + o.b + "\n  " +
					fmt.Sprintf(insn, ty) + "\n  PUT.u64 s2, v3\n"
				mustRunBoth(t, flagsProgram(body), []byte{byte(i)})
			}
		}
	}
}

// TestShiftFlagsConstantCount: a shift's FLAGS whose count an LI of the
// block gives is compiled without the count test (constCountRecord): a
// count of 0 (also one whose low bits at the type are 0) leaves the
// earlier flags, any other records the shift; read back by GETCC and
// GETFLAGS, as the interpreter does, with the sources in registers or
// only in the frame.
func TestShiftFlagsConstantCount(t *testing.T) {
	for _, kind := range []string{"shl", "shr", "sar"} {
		for _, ty := range []string{"u8", "u16", "u32", "u64"} {
			for _, count := range []string{"0", "1", "7", "8", "31", "256", "65536"} {
				mustRunBoth(t, flagsProgram(
					"  FLAGS.sub.u32 s1, s2, s3, s0\n"+
						"  LI.u32 v1, "+count+"\n"+
						"  MOV.u64 v2, s0\n"+
						"  FLAGS."+kind+"."+ty+" v2, v1, s3, s2\n"+
						"  GETCC.b v3\n  PUT.u64 s4, v3\n  GETCC.o v4\n  PUT.u64 s5, v4\n"+
						"  GETFLAGS v5\n  PUT.u64 s6, v5\n"), []byte{0x81, 3})
			}
		}
	}
}

// TestNarrowOpsInPlace: 1- and 2-byte arithmetic, logic and shifts by a
// constant compute in the destination's register (binary at 32 bits,
// shift of the extended value) and must leave only the type's bits, from
// sources with garbage above them, the destination being the source too.
func TestNarrowOpsInPlace(t *testing.T) {
	for _, ty := range []string{"u8", "s8", "u16", "s16"} {
		// Every result goes into a sum (v200...), rotated between terms.
		body, acc := "  GET.u64 v200, s0\n", 200
		for i, op := range []string{"SHL", "SHR", "SAR", "ADD", "SUB", "MUL", "AND", "OR", "XOR"} {
			for j, k := range []string{"1", "7", "9", "15", "-1", "255"} {
				n := 8 + 2*(6*i+j)
				body += fmt.Sprintf("  %s.%s v%d, s%d, %s\n  %s.%s v%d, v%d, v%d\n", op, ty, n, 1+(i+j)%4, k, op, ty, n+1, n, n)
				for _, v := range []int{n, n + 1} {
					body += fmt.Sprintf("  ADD.u64 v%d, v%d, v%d\n  ROL.u64 v%d, v%d, 5\n", acc+1, acc, v, acc+2, acc+1)
					acc += 2
				}
			}
		}
		body += fmt.Sprintf("  PUT.u64 s5, v%d\n", acc)
		mustRunBoth(t, flagsProgram(body), []byte{0xff, 0x80, 0x7f, 0x13})
	}
}
