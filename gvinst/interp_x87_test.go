package gvinst

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst/float80"
)

// x87Machine is a machine with the x87 in its FNINIT state (control word
// cw) and the values vals pushed in order (the last is ST(0)).
func x87Machine(t *testing.T, e engineConfig, cw uint64, vals []float80.F80, body string) *machine {
	t.Helper()
	var sb strings.Builder
	for i, v := range vals {
		fmt.Fprintf(&sb, "  LI.u64 v%d, %d\n  LI.u64 v%d, %d\n  FPUSH\n  FPUTST.f80 0, v%d\n", 100+2*i, v.Mant, 101+2*i, v.SignExp, 100+2*i)
	}
	m := newMachine(t, e, sb.String()+body)
	m.cpu.State[FPCW] = cw
	m.cpu.State[FPTag] = 0xff
	return m
}

// st returns ST(i) of a stopped machine.
func (m *machine) st(i int) float80.F80 {
	r := FReg(int(m.cpu.State[FPTop]+uint64(i)) & 7)
	return float80.F80{Mant: m.cpu.State[r], SignExp: uint16(m.cpu.State[r+1])}
}

func f80(x float64) float80.F80 {
	e := float80.Env{}
	return e.FromFloat64(pf64(x))
}

// TestX87Arith runs the .f80 arithmetic through the interpreter under
// several control words and compares results, the sticky flags and C1 with
// gvinst/float80 called directly.
func TestX87Arith(t *testing.T) {
	third, two, big, tiny := f80(1), f80(3), f80(1e300), f80(1e-300)
	cases := []struct {
		op   string
		a, b float80.F80
		want func(e *float80.Env, a, b float80.F80) float80.F80
	}{
		{"ADD", third, two, (*float80.Env).Add},
		{"SUB", third, two, (*float80.Env).Sub},
		{"MUL", big, big, (*float80.Env).Mul},
		{"MUL", tiny, tiny, (*float80.Env).Mul},
		{"DIV", third, two, (*float80.Env).Div},
		{"DIV", two, float80.Zero(false), (*float80.Env).Div},
		{"DIV", float80.Zero(false), float80.Zero(true), (*float80.Env).Div},
		{"SQRT", two, two, func(e *float80.Env, a, _ float80.F80) float80.F80 { return e.Sqrt(a) }},
		{"FSCALE", two, f80(-3.5), (*float80.Env).Scale},
		{"FYL2X", two, third, (*float80.Env).Yl2x},
		{"FPATAN", third, two, (*float80.Env).Patan},
		{"F2XM1", f80(0.25), two, func(e *float80.Env, a, _ float80.F80) float80.F80 { return e.F2xm1(a) }},
	}
	for _, cw := range []uint64{0x37f, 0x27f, 0x07f, 0x77f, 0xb7f, 0xf7f} {
		for _, c := range cases {
			for _, eng := range allEngines() {
				name := fmt.Sprintf("%s/%v,%v/cw=%#x/%s", c.op, c.a, c.b, cw, eng.name)
				body := "  FGETST.f80 v0, 0\n  FGETST.f80 v2, 1\n"
				switch c.op {
				case "SQRT", "F2XM1":
					body += fmt.Sprintf("  %s.f80 v4, v0\n", c.op)
				default:
					body += fmt.Sprintf("  %s.f80 v4, v0, v2\n", c.op)
				}
				body += "  FPUTST.f80 0, v4\n"
				m := x87Machine(t, eng, cw, []float80.F80{c.b, c.a}, body)
				m.cpu.State[FPSW] = fswC1 // C1 must be rewritten
				m.mustSyscall(t)
				e := float80.NewEnv(uint16(cw))
				want := c.want(&e, c.a, c.b)
				if got := m.st(0); got != want {
					t.Errorf("%s: ST(0) = %v, want %v", name, got, want)
				}
				wantSW := uint64(e.Flags)&fswExceptions | uint64(e.Flags&float80.FlagRoundedUp)
				if got := m.cpu.State[FPSW]; got != wantSW {
					t.Errorf("%s: fpsw = %#x, want %#x", name, got, wantSW)
				}
			}
		}
	}
}

// TestX87Stack checks FPUSH, FPOP, the tags, TOP, stack underflow and
// overflow.
func TestX87Stack(t *testing.T) {
	for _, eng := range allEngines() {
		m := x87Machine(t, eng, 0x37f, []float80.F80{f80(1), f80(2)}, "  FPOP\n")
		m.mustSyscall(t)
		if top, tag := m.cpu.State[FPTop], m.cpu.State[FPTag]; top != 7 || tag != 0x7f {
			t.Errorf("%s: after 2 pushes and a pop: top %d tag %#x, want 7 0x7f", eng.name, top, tag)
		}
		if got := m.st(0); got != f80(1) {
			t.Errorf("%s: ST(0) = %v, want 1", eng.name, got)
		}

		// Reading an empty register: IE and SF, the real indefinite.
		m = x87Machine(t, eng, 0x37f, []float80.F80{f80(1)}, "  FGETST.f80 v0, 1\n  FPUTST.f80 0, v0\n")
		m.cpu.State[FPSW] = fswC1
		m.mustSyscall(t)
		if got := m.st(0); got != float80.Indefinite() {
			t.Errorf("%s: underflow result %v, want indefinite", eng.name, got)
		}
		if got := m.cpu.State[FPSW]; got != 0x41 {
			t.Errorf("%s: underflow fpsw %#x, want 0x41", eng.name, got)
		}

		// A ninth push overflows: IE, SF and C1.
		vals := make([]float80.F80, 9)
		for i := range vals {
			vals[i] = f80(float64(i))
		}
		m = x87Machine(t, eng, 0x37f, vals, "")
		m.mustSyscall(t)
		if got := m.cpu.State[FPSW]; got != 0x241 {
			t.Errorf("%s: overflow fpsw %#x, want 0x241", eng.name, got)
		}

		// FXAM sees empty registers without a fault.
		m = x87Machine(t, eng, 0x37f, []float80.F80{f80(-2)}, "  FXAM v0, 0\n  FXAM v1, 1\n  PUT.u64 s0, v0\n  PUT.u64 s1, v1\n")
		m.mustSyscall(t)
		if a, b := m.cpu.State[S0], m.cpu.State[S1]; a != fswC2|fswC1 || b&^fswC1 != fswC3|fswC0 || m.cpu.State[FPSW] != 0 {
			t.Errorf("%s: FXAM -2 = %#x, empty = %#x, fpsw %#x", eng.name, a, b, m.cpu.State[FPSW])
		}
	}
}

// TestX87Convert checks the loads, the rounding stores and the integer
// stores, with their flags.
func TestX87Convert(t *testing.T) {
	cases := []struct {
		cvt  string
		cw   uint64
		in   float80.F80
		want uint64
		sw   uint64
	}{
		{"CVT.x87.f64.f80", 0x37f, float80.F80{Mant: 0xaaaaaaaaaaaaaaab, SignExp: 0x3ffd}, pf64(1.0 / 3), 0x20},
		{"CVT.x87.f64.f80", 0xb7f, float80.F80{Mant: 0xaaaaaaaaaaaaaaab, SignExp: 0x3ffd}, pf64(1.0/3) + 1, 0x220},
		{"CVT.x87.f32.f80", 0x37f, f80(0.1), uint64(pf32(0.1)), 0x220},
		{"CVT.x87.s32.f80", 0x37f, f80(2.5), 2, 0x20},
		{"CVT.x87.s32.f80", 0x77f, f80(2.5), 2, 0x20},
		{"CVT.x87.s32.f80", 0xb7f, f80(2.5), 3, 0x220},
		{"CVT.rz.s32.f80", 0x37f, f80(-2.7), uint64(uint32(0xfffffffe)), 0x20},
		{"CVT.x87.s16.f80", 0x37f, f80(40000), 0x8000, 0x01},
		{"CVT.x87.s64.f80", 0x37f, f80(-1e19), 1 << 63, 0x01},
		{"CVT.rz.s64.f80", 0x37f, f80(1e18), 1e18, 0},
	}
	for _, c := range cases {
		for _, eng := range allEngines() {
			m := x87Machine(t, eng, c.cw, []float80.F80{c.in}, fmt.Sprintf("  FGETST.f80 v0, 0\n  %s v2, v0\n  PUT.u64 s0, v2\n", c.cvt))
			m.mustSyscall(t)
			if got := m.cpu.State[S0]; got != c.want {
				t.Errorf("%s %v cw=%#x (%s): %#x, want %#x", c.cvt, c.in, c.cw, eng.name, got, c.want)
			}
			if got := m.cpu.State[FPSW]; got != c.sw {
				t.Errorf("%s %v cw=%#x (%s): fpsw %#x, want %#x", c.cvt, c.in, c.cw, eng.name, got, c.sw)
			}
		}
	}
	// Loads: exact, a signaling NaN raises IE and is quieted, a denormal
	// double raises DE.
	loads := []struct {
		src  string
		bits uint64
		want float80.F80
		sw   uint64
	}{
		{"f64", pf64(0.1), f80(0.1), 0},
		{"f64", 0x7ff0000000000001, float80.F80{Mant: 0xc000000000000800, SignExp: 0x7fff}, 0x01},
		{"f64", 1, float80.F80{Mant: 1 << 63, SignExp: 0x3bcd}, 0x02},
		{"f32", uint64(pf32(-1.5)), f80(-1.5), 0},
		{"s16", 0xffff, f80(-1), 0},
		{"s64", 1 << 63, f80(-9223372036854775808), 0},
		{"u64", 1 << 63, f80(9223372036854775808), 0},
		{"u32", 0xffffffff, f80(4294967295), 0},
	}
	for _, c := range loads {
		for _, eng := range allEngines() {
			m := x87Machine(t, eng, 0x37f, nil, fmt.Sprintf("  LI.u64 v0, %d\n  CVT.rn.f80.%s v2, v0\n  FPUSH\n  FPUTST.f80 0, v2\n", c.bits, c.src))
			m.cpu.State[FPSW] = fswC1
			m.mustSyscall(t)
			if got := m.st(0); got != c.want {
				t.Errorf("load %s %#x (%s): %v, want %v", c.src, c.bits, eng.name, got, c.want)
			}
			if got := m.cpu.State[FPSW]; got != c.sw {
				t.Errorf("load %s %#x (%s): fpsw %#x, want %#x", c.src, c.bits, eng.name, got, c.sw)
			}
		}
	}
}

// TestX87Compare checks FCMP's ordering bits and its quiet and signaling
// forms, CMP.f80, FPREM's condition codes and FCONST's rounding.
func TestX87Compare(t *testing.T) {
	qnan := float80.F80{Mant: 0xc000000000000000, SignExp: 0x7fff}
	cases := []struct {
		a, b  float80.F80
		quiet bool
		bits  uint64
		sw    uint64
	}{
		{f80(1), f80(2), false, fswC0, 0},
		{f80(2), f80(1), false, 0, 0},
		{f80(0), float80.Zero(true), false, fswC3, 0},
		{f80(1), qnan, true, fswC3 | fswC2 | fswC0, 0},
		{f80(1), qnan, false, fswC3 | fswC2 | fswC0, 1},
	}
	for _, c := range cases {
		for _, eng := range allEngines() {
			q := 0
			if c.quiet {
				q = 1
			}
			m := x87Machine(t, eng, 0x37f, []float80.F80{c.b, c.a}, fmt.Sprintf(
				"  FGETST.f80 v0, 0\n  FGETST.f80 v2, 1\n  FCMP.f80 v4, v0, v2, %d\n  PUT.u64 s0, v4\n  CMP.lt.f80 v5, v0, v2\n  PUT.u64 s1, v5\n", q))
			m.mustSyscall(t)
			if got := m.cpu.State[S0]; got != c.bits {
				t.Errorf("FCMP %v %v q=%v (%s): %#x, want %#x", c.a, c.b, c.quiet, eng.name, got, c.bits)
			}
			if got, want := m.cpu.State[S1], b2u(c.bits == fswC0); got != want {
				t.Errorf("CMP.lt %v %v (%s): %d, want %d", c.a, c.b, eng.name, got, want)
			}
			// CMP.lt signals on any NaN.
			wantSW := c.sw
			if c.bits == fswC3|fswC2|fswC0 {
				wantSW = 1
			}
			if got := m.cpu.State[FPSW]; got != wantSW {
				t.Errorf("FCMP %v %v q=%v (%s): fpsw %#x, want %#x", c.a, c.b, c.quiet, eng.name, got, wantSW)
			}
		}
	}
	for _, eng := range allEngines() {
		// 7 rem 2: quotient 3 → C1 = 1, C3 = 1, C0 = 0; remainder 1.
		m := x87Machine(t, eng, 0x37f, []float80.F80{f80(2), f80(7)}, "  FGETST.f80 v0, 0\n  FGETST.f80 v2, 1\n  FPREM.f80 v4, v0, v2\n  FPUTST.f80 0, v4\n")
		m.mustSyscall(t)
		if got, sw := m.st(0), m.cpu.State[FPSW]; got != f80(1) || sw != fswC1|fswC3 {
			t.Errorf("FPREM 7, 2 (%s): %v fpsw %#x", eng.name, got, sw)
		}
		// FLDPI rounds per RC: to nearest …C235, down …C234.
		for cw, mant := range map[uint64]uint64{0x37f: 0xc90fdaa22168c235, 0x77f: 0xc90fdaa22168c234} {
			m := x87Machine(t, eng, cw, nil, "  FCONST.f80 v0, 3\n  FPUSH\n  FPUTST.f80 0, v0\n")
			m.mustSyscall(t)
			if got := m.st(0); got != (float80.F80{Mant: mant, SignExp: 0x4000}) {
				t.Errorf("FCONST pi cw=%#x (%s): %v", cw, eng.name, got)
			}
		}
	}
}

// TestX87Unmasked checks that an exception the control word unmasks stops
// the guest instead of computing the masked response.
func TestX87Unmasked(t *testing.T) {
	for _, eng := range allEngines() {
		m := x87Machine(t, eng, 0x37b, []float80.F80{f80(0), f80(1)}, "  FGETST.f80 v0, 0\n  FGETST.f80 v2, 1\n  DIV.f80 v4, v0, v2\n  FPUTST.f80 0, v4\n")
		stop := m.run(t)
		if stop.Kind != StopTrap || stop.Trap != TrapUnsupported || !errors.Is(stop.Err, errX87Unmasked) {
			t.Errorf("%s: 1/0 with ZE unmasked: stop %v (%v)", eng.name, stop, stop.Err)
		}
	}
}

// TestX87EveryOp executes every x87 op and every .f80 arithmetic form once
// and fails if one reaches the "unsupported" default.
func TestX87EveryOp(t *testing.T) {
	lines := []string{
		"FCONST.f80 v10, 6", "FCLASS.f80 v12, v0", "FXAM v12, 0", "FCMP.f80 v12, v0, v2, 0",
		"FPREM.f80 v10, v0, v2", "FPREM1.f80 v10, v0, v2", "FSCALE.f80 v10, v0, v2", "F2XM1.f80 v10, v0",
		"FYL2X.f80 v10, v0, v2", "FYL2XP1.f80 v10, v0, v2", "FPATAN.f80 v10, v0, v2", "FSIN.f80 v10, v0",
		"FCOS.f80 v10, v0", "FPTAN.f80 v10, v0", "FXTSIG.f80 v10, v0", "FXTEXP.f80 v10, v0",
		"ADD.f80 v10, v0, v2", "SUB.f80 v10, v0, v2", "MUL.f80 v10, v0, v2", "DIV.f80 v10, v0, v2",
		"SQRT.f80 v10, v0", "NEG.f80 v10, v0", "ABS.f80 v10, v0", "ROUND.x87.f80 v10, v0", "ROUND.rz.f80 v10, v0",
		"CMP.equ.f80 v12, v0, v2", "CVT.x87.f64.f80 v12, v0", "CVT.rn.f80.f32 v10, v100", "CVT.rn.f80.f80 v10, v0",
	}
	covered := map[Op]bool{OpFGetST: true, OpFPutST: true, OpFPush: true, OpFPop: true}
	for _, l := range lines {
		op, _ := ParseOp(strings.Split(strings.Fields(l)[0], ".")[0])
		covered[op] = true
		for _, eng := range allEngines() {
			m := x87Machine(t, eng, 0x37f, []float80.F80{f80(0.5), f80(0.25)}, "  FGETST.f80 v0, 0\n  FGETST.f80 v2, 1\n  "+l+"\n  FPOP\n")
			if stop := m.run(t); stop.Kind != StopSyscall {
				t.Errorf("%s (%s): %v (%v)", l, eng.name, stop, stop.Err)
			}
		}
	}
	for op := OpFGetST; op <= OpFClass; op++ {
		if !covered[op] {
			t.Errorf("%s: not exercised", op)
		}
	}
}
