package lift

import (
	"os"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

// TestGoldenX87 lifts each case of testdata/lift_x87.golden (one x87
// instruction followed by ud2) and compares the printed block with the
// expected GVInst text exactly; -u rewrites the file.
func TestGoldenX87(t *testing.T) {
	const path = "testdata/lift_x87.golden"
	cases := readGolden(t, path)
	var out strings.Builder
	for _, c := range cases {
		blk := liftHex(t, c.hex)
		got := gvinst.Print(blk)
		if strings.Contains(got, "TRAP.unsupported") {
			t.Errorf("%s (%s): not lifted:\n%s", c.name, c.hex, got)
		}
		if *update {
			out.WriteString("== " + c.name + "\nhex: " + c.hex + "\n" + got + "\n")
			continue
		}
		if got != c.want {
			t.Errorf("%s (%s):\ngot:\n%s\nwant:\n%s", c.name, c.hex, got, c.want)
		}
		parsed, err := gvinst.Parse(got)
		if err != nil || len(parsed) != 1 || gvinst.Print(parsed[0]) != got {
			t.Errorf("%s: printed block does not round-trip: %v", c.name, err)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestX87TableComplete fails if an x87 instruction the C libraries use has
// no lift function.
func TestX87TableComplete(t *testing.T) {
	l := NewLifter(gvinst.NewMemory(0))
	for _, op := range []x86asm.Op{
		x86asm.FLD, x86asm.FST, x86asm.FSTP, x86asm.FILD, x86asm.FIST, x86asm.FISTP, x86asm.FISTTP,
		x86asm.FLDZ, x86asm.FLD1, x86asm.FLDPI, x86asm.FLDL2E, x86asm.FLDL2T, x86asm.FLDLG2, x86asm.FLDLN2,
		x86asm.FXCH, x86asm.FADD, x86asm.FADDP, x86asm.FIADD, x86asm.FSUB, x86asm.FSUBP, x86asm.FSUBR,
		x86asm.FSUBRP, x86asm.FISUB, x86asm.FISUBR, x86asm.FMUL, x86asm.FMULP, x86asm.FIMUL, x86asm.FDIV,
		x86asm.FDIVP, x86asm.FDIVR, x86asm.FDIVRP, x86asm.FIDIV, x86asm.FIDIVR, x86asm.FCHS, x86asm.FABS,
		x86asm.FSQRT, x86asm.FRNDINT, x86asm.FSCALE, x86asm.FXTRACT, x86asm.FPREM, x86asm.FPREM1,
		x86asm.F2XM1, x86asm.FYL2X, x86asm.FYL2XP1, x86asm.FPATAN, x86asm.FSIN, x86asm.FCOS, x86asm.FSINCOS,
		x86asm.FPTAN, x86asm.FCOM, x86asm.FCOMP, x86asm.FCOMPP, x86asm.FUCOM, x86asm.FUCOMP, x86asm.FUCOMPP,
		x86asm.FICOM, x86asm.FICOMP, x86asm.FCOMI, x86asm.FCOMIP, x86asm.FUCOMI, x86asm.FUCOMIP, x86asm.FTST,
		x86asm.FXAM, x86asm.FCMOVB, x86asm.FCMOVE, x86asm.FCMOVBE, x86asm.FCMOVU, x86asm.FCMOVNB,
		x86asm.FCMOVNE, x86asm.FCMOVNBE, x86asm.FCMOVNU, x86asm.FNSTSW, x86asm.FNSTCW, x86asm.FLDCW,
		x86asm.FNSTENV, x86asm.FLDENV, x86asm.FNINIT, x86asm.FNCLEX, x86asm.FFREE, x86asm.FFREEP,
		x86asm.FINCSTP, x86asm.FDECSTP, x86asm.FWAIT, x86asm.FNOP,
	} {
		if !l.Lifted(op) {
			t.Errorf("%v: no lift function", op)
		}
	}
}

// TestX87AllEncodings lifts every x87 opcode (D8…DF with every ModRM byte)
// and requires a verified block, and that only the forms gxbit leaves out
// on purpose (BCD, FNSAVE/FRSTOR) are unsupported.
func TestX87AllEncodings(t *testing.T) {
	leftOut := map[x86asm.Op]bool{x86asm.FBLD: true, x86asm.FBSTP: true, x86asm.FNSAVE: true, x86asm.FRSTOR: true}
	for esc := 0xd8; esc <= 0xdf; esc++ {
		for modrm := 0; modrm < 256; modrm++ {
			code := []byte{byte(esc), byte(modrm), 0x10, 0x20, 0x30, 0x40, 0x0f, 0x0b}
			l := NewLifter(codeMem(t, code))
			blk, err := l.LiftInst(testCode)
			if err != nil {
				t.Errorf("% x: %v", code[:2], err)
				continue
			}
			if last := blk.Insts[len(blk.Insts)-1]; last.Op == gvinst.OpTrap && gvinst.TrapKind(last.Mod) == gvinst.TrapUnsupported {
				d, err := l.Decoder().Decode(testCode)
				if err != nil || !leftOut[d.Inst.Op] {
					t.Errorf("% x (%s): unsupported", code[:2], blk.Guest[0].Text)
				}
			}
		}
	}
}
