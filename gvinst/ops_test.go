package gvinst

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// x87Pending is the allowlist reason for an x87 stack op that execX87
// (interp_x87.go, over gvinst/float80) reports as unsupported: such an op
// is logged, not failed.
const x87Pending = "pending x87: executed by execX87 (interp_x87.go), implemented over gvinst/float80"

// TestEveryOpHasInterpreterCase walks the op table and fails for an op the
// interpreter cannot execute: a control transfer with no compiled form, or
// an op for which every type its table entry allows reaches the
// "unsupported" default of the reference path. x87 ops are allowed only
// through x87Pending.
func TestEveryOpHasInterpreterCase(t *testing.T) {
	for _, op := range Ops() {
		info := op.Info()
		if op.EndsBlock() {
			in := Inst{Op: op, Src: [4]Reg{VReg(0)}, Target: [2]uint64{0x10, 0x20}}
			var b cblock
			c := cinst{op: iSlow}
			lowerControl(&c, &in, &b)
			if c.op == iSlow {
				t.Errorf("%s: no compiled form for a control transfer", info.Name)
			}
			continue
		}
		x87 := false
		if in := (Inst{Op: op, Type: F80}); info.Types == TFloat && usesX87Hook(&in) && !isVecOp(op) && op != OpAdd && op != OpSub && op != OpMul && op != OpDiv && op != OpSqrt && op != OpRound {
			x87 = true
		}
		var ok bool
		var lastErr error
		for _, ty := range candidateTypes(info.Types) {
			if x87 {
				ty = F80
			}
			for _, st := range candidateTypes(info.SrcType) {
				in := sampleInst(op, ty, st)
				err := execSample(t, &in)
				if err == nil || !errors.Is(err, errUnsupported) {
					ok = true
					break
				}
				lastErr = err
			}
			if ok {
				break
			}
		}
		switch {
		case !ok && x87:
			t.Logf("%s: %s: %v", info.Name, x87Pending, lastErr)
		case !ok:
			t.Errorf("%s: the interpreter has no case for any allowed type: %v", info.Name, lastErr)
		}
	}
	// Every .f80 arithmetic op goes to the x87 hook, and only those.
	for _, op := range []Op{OpAdd, OpSub, OpMul, OpDiv, OpSqrt, OpNeg, OpAbs, OpMin, OpMax, OpCmp, OpRound} {
		if in := (Inst{Op: op, Type: F80}); !usesX87Hook(&in) {
			t.Errorf("%s.f80 is not routed to execX87", op)
		}
	}
	for _, op := range []Op{OpGet, OpPut, OpMov, OpLi, OpLd, OpSt, OpSelect} {
		if in := (Inst{Op: op, Type: F80}); usesX87Hook(&in) {
			t.Errorf("%s.f80 is data movement but routed to execX87", op)
		}
	}
}

func candidateTypes(c TypeClass) []Type {
	switch c {
	case TInt:
		return []Type{U32, S64}
	case TFloat:
		return []Type{F64, F32}
	case TNum:
		return []Type{U32, F64}
	case TAny:
		return []Type{U64, B128}
	case TVec:
		return []Type{F64, F32, S16, U8, U16, S32, U32, S8, U64}
	case TInt64:
		return []Type{U64}
	case TB128:
		return []Type{B128}
	}
	return []Type{TypeNone}
}

// sampleInst builds an instance of op whose register sources all hold
// dataBase (a mapped, 16-byte aligned address; non-zero for divisions).
func sampleInst(op Op, ty, st Type) Inst {
	info := op.Info()
	in := Inst{Op: op, Type: ty, SrcType: st}
	if info.SrcType == TNone {
		in.SrcType = TypeNone
	}
	if info.Mod == ModX86Cond {
		in.Mod = uint8(CondE)
	}
	si := 0
	for _, k := range info.Operands {
		switch k {
		case OpdDst:
			in.Dst = VReg(10)
		case OpdSrc, OpdMem, OpdSrcImm:
			in.Src[si] = VReg(20 + 2*si)
			si++
		case OpdImm:
			in.Imm = 1
		case OpdSite:
			in.Target[0] = 3
		}
	}
	return in
}

func execSample(t *testing.T, in *Inst) error {
	mem := NewMemory(0)
	if err := mem.Map(dataBase, dataPages*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	it := NewInterpreter(mem, nil, InterpOptions{})
	f := it.f
	for r := 20; r < 30; r++ {
		f[VReg(r)] = dataBase
	}
	f[S1], f[S6], f[S7] = 4, dataBase, dataBase+64
	if it.slow(f, in, 0) {
		return nil
	}
	return it.trap.err
}

// binCase is one integer or float operation and its expected result.
type binCase struct {
	inst    string // op with modifiers and type, e.g. "SHL.u32"
	a, b    uint64
	want    uint64
	divTrap bool
}

// TestIntegerOps runs each case with a register and (where the op takes
// one) an immediate second operand, on every engine.
func TestIntegerOps(t *testing.T) {
	const (
		m32 = 0xffffffff
		m64 = ^uint64(0)
	)
	cases := []binCase{
		{"ADD.u8", 0xff, 1, 0, false},
		{"ADD.u32", m32, 2, 1, false},
		{"ADD.s64", m64, 2, 1, false},
		{"SUB.u16", 0, 1, 0xffff, false},
		{"SUB.s32", 5, 7, 0xfffffffe, false},
		{"MUL.u32", 0x10000, 0x10000, 0, false},
		{"MUL.s16", 0xffff, 3, 0xfffd, false},
		{"MULHI.u64", m64, m64, m64 - 1, false},
		{"MULHI.s64", m64, m64, 0, false},
		{"MULHI.s64", 1 << 63, 2, m64, false},
		{"MULHI.u32", m32, m32, m32 - 1, false},
		{"MULHI.s32", m32, 5, m32, false},
		{"MULHI.s8", 0x80, 0x80, 0x40, false},
		{"DIV.u32", 7, 2, 3, false},
		{"DIV.s32", m32 - 6, 2, m32 - 2, false}, // -7/2 = -3
		{"REM.s32", m32 - 6, 2, m32, false},     // -7%2 = -1
		{"REM.u8", 200, 7, 4, false},
		{"DIV.s64", 1 << 63, m64, 0, true},
		{"REM.s64", 1 << 63, m64, 0, true},
		{"DIV.s8", 0x80, 0xff, 0, true},
		{"DIV.u64", 1, 0, 0, true},
		{"REM.u16", 1, 0, 0, true},
		{"AND.u32", 0xf0f0, 0xff00, 0xf000, false},
		{"OR.u8", 0x0f, 0xf0, 0xff, false},
		{"XOR.u64", m64, 1, m64 - 1, false},
		{"SHL.u32", 1, 31, 1 << 31, false},
		{"SHL.u32", 1, 32, 0, false},
		{"SHL.u64", 3, 0, 3, false},
		{"SHL.u64", 1, 64, 0, false},
		{"SHL.u8", 0x81, 1, 0x02, false},
		{"SHL.u16", 1, 16, 0, false},
		{"SHR.u16", 0x8000, 15, 1, false},
		{"SHR.u16", 0x8000, 16, 0, false},
		{"SHR.u64", m64, 63, 1, false},
		{"SHR.u64", m64, 70, 0, false},
		{"SHR.u32", m32, 0, m32, false},
		{"SAR.s8", 0x80, 7, 0xff, false},
		{"SAR.s8", 0x80, 9, 0xff, false},
		{"SAR.u32", 0x80000000, 31, m32, false},
		{"SAR.s32", 0x80000000, 40, m32, false},
		{"SAR.s64", 1 << 63, 100, m64, false},
		{"SAR.s64", 0x40, 0, 0x40, false},
		{"SAR.s64", 0x40, 3, 8, false},
		{"ROL.u8", 0x81, 1, 0x03, false},
		{"ROL.u8", 0x81, 9, 0x03, false},
		{"ROL.u64", 1 << 63, 1, 1, false},
		{"ROR.u16", 1, 1, 0x8000, false},
		{"ROR.u32", 0x12345678, 32, 0x12345678, false},
		{"MIN.s32", m32, 1, m32, false},
		{"MIN.u32", m32, 1, 1, false},
		{"MAX.s8", 0x80, 0x7f, 0x7f, false},
		{"MAX.u64", 1 << 63, 5, 1 << 63, false},
		{"CMP.lt.s32", m32, 0, 1, false},
		{"CMP.lt.u32", m32, 0, 0, false},
		{"CMP.le.s64", 5, 5, 1, false},
		{"CMP.gt.u8", 0x80, 0x7f, 1, false},
		{"CMP.ge.s16", 0x8000, 0, 0, false},
		{"CMP.eq.u32", 0x100000001, 1, 1, false},
		{"CMP.ne.u64", 0x100000001, 1, 1, false},
		{"CMP.gt.s64", 0, m64, 1, false},
		{"CMP.le.u64", m64, 0, 0, false},
	}
	for _, c := range cases {
		for _, imm := range []bool{false, true} {
			bOperand := "v1"
			if imm {
				ty, _ := ParseType(c.inst[strings.LastIndex(c.inst, ".")+1:])
				bOperand = fmt.Sprint(CanonImm(ty, int64(c.b)))
				if !ty.IsSigned() {
					bOperand = fmt.Sprint(uint64(CanonImm(ty, int64(c.b))))
				}
			}
			body := li("v0", c.a) + li("v1", c.b) + fmt.Sprintf("  %s v2, v0, %s\n  PUT.u64 s0, v2\n", c.inst, bOperand)
			for _, e := range allEngines() {
				m := newMachine(t, e, body)
				stop := m.run(t)
				name := fmt.Sprintf("%s %s %#x, %s (%s)", e.name, c.inst, c.a, bOperand, map[bool]string{true: "imm", false: "reg"}[imm])
				if c.divTrap {
					if stop.Kind != StopTrap || stop.Trap != TrapDivide || stop.PC != 0x1000 {
						t.Errorf("%s: stop %v, want a divide trap", name, stop)
					}
					continue
				}
				if stop.Kind != StopSyscall {
					t.Errorf("%s: stop %v", name, stop)
					continue
				}
				if got := m.cpu.State[S0]; got != c.want {
					t.Errorf("%s = %#x, want %#x", name, got, c.want)
				}
			}
		}
	}
}

// unCase is one op of one register operand (or a DIVW/REMW of three).
type unCase struct {
	inst string
	srcs []uint64
	want uint64
	trap bool
}

func TestUnaryAndWideOps(t *testing.T) {
	const m64 = ^uint64(0)
	cases := []unCase{
		{"NOT.u8", []uint64{0x0f}, 0xf0, false},
		{"NOT.u64", []uint64{0}, m64, false},
		{"NEG.u32", []uint64{1}, 0xffffffff, false},
		{"NEG.s16", []uint64{0x8000}, 0x8000, false},
		{"ABS.s16", []uint64{0x8000}, 0x8000, false},
		{"ABS.s32", []uint64{0xfffffffb}, 5, false},
		{"ABS.s64", []uint64{5}, 5, false},
		{"CLZ.u32", []uint64{0}, 32, false},
		{"CLZ.u64", []uint64{1}, 63, false},
		{"CLZ.u16", []uint64{0x00ff}, 8, false},
		{"CTZ.u16", []uint64{0}, 16, false},
		{"CTZ.u64", []uint64{1 << 40}, 40, false},
		{"POPC.u64", []uint64{m64}, 64, false},
		{"POPC.u8", []uint64{0x1ff}, 8, false},
		{"BSWAP.u32", []uint64{0x11223344}, 0x44332211, false},
		{"BSWAP.u64", []uint64{0x0102030405060708}, 0x0807060504030201, false},
		{"BSWAP.u16", []uint64{0x1122}, 0x2211, false},
		{"NEG.f64", []uint64{math.Float64bits(1.5)}, math.Float64bits(-1.5), false},
		{"ABS.f32", []uint64{uint64(math.Float32bits(-2))}, uint64(math.Float32bits(2)), false},
		{"SQRT.f64", []uint64{math.Float64bits(2)}, math.Float64bits(math.Sqrt(2)), false},
		{"SQRT.f32", []uint64{uint64(math.Float32bits(2))}, uint64(math.Float32bits(float32(math.Sqrt(2)))), false},
		{"DIVW.u64", []uint64{1, 5, 3}, (1<<64 + 5) / 3, false},
		{"REMW.u64", []uint64{1, 5, 3}, (1<<64 + 5) % 3, false},
		{"DIVW.u64", []uint64{3, 0, 3}, 0, true},
		{"DIVW.u64", []uint64{0, 5, 0}, 0, true},
		{"DIVW.s64", []uint64{m64, m64 - 6, 2}, m64 - 2, false},
		{"REMW.s64", []uint64{m64, m64 - 6, 2}, m64, false},
		{"DIVW.s64", []uint64{m64, 1 << 63, m64}, 0, true},
		{"DIVW.s64", []uint64{0, 1 << 63, 1}, 0, true},
		{"DIVW.s64", []uint64{m64, 1 << 63, 1}, 1 << 63, false},
		{"DIVW.u32", []uint64{1, 0, 2}, 0x80000000, false},
		{"DIVW.u32", []uint64{2, 0, 2}, 0, true},
		{"DIVW.s32", []uint64{0xffffffff, 0xfffffff9, 2}, 0xfffffffd, false},
		{"REMW.s32", []uint64{0xffffffff, 0xfffffff9, 2}, 0xffffffff, false},
		{"DIVW.s32", []uint64{0, 0x80000000, 1}, 0, true},
		{"DIVW.u8", []uint64{0x12, 0x34, 0x20}, 0x91, false},
		{"REMW.u16", []uint64{1, 0, 3}, 1, false},
	}
	for _, c := range cases {
		var body strings.Builder
		regs := make([]string, len(c.srcs))
		for i, v := range c.srcs {
			regs[i] = fmt.Sprintf("v%d", i)
			body.WriteString(li(regs[i], v))
		}
		fmt.Fprintf(&body, "  %s v9, %s\n  PUT.u64 s0, v9\n", c.inst, strings.Join(regs, ", "))
		for _, e := range allEngines() {
			m := newMachine(t, e, body.String())
			stop := m.run(t)
			name := fmt.Sprintf("%s %s %#x", e.name, c.inst, c.srcs)
			if c.trap {
				if stop.Kind != StopTrap || stop.Trap != TrapDivide {
					t.Errorf("%s: stop %v, want a divide trap", name, stop)
				}
				continue
			}
			if stop.Kind != StopSyscall {
				t.Errorf("%s: stop %v", name, stop)
			} else if got := m.cpu.State[S0]; got != c.want {
				t.Errorf("%s = %#x, want %#x", name, got, c.want)
			}
		}
	}
}
