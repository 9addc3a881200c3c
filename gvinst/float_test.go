package gvinst

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func b64(x float64) uint64 { return math.Float64bits(x) }
func b32(x float32) uint64 { return uint64(math.Float32bits(x)) }

// TestFloatAndConvertOps checks float arithmetic, comparison and every kind
// of conversion against values computed plainly in Go (on amd64, Go's float
// operations are the SSE instructions the guest would run).
func TestFloatAndConvertOps(t *testing.T) {
	nan := math.NaN()
	// Variables, so that Go computes at run time, rounding each operation.
	p1, p2 := 0.1, 0.2
	one32, tiny32, x32 := float32(1), float32(1e-8), float32(1.1)
	third := 1.0 / 3
	big := float64(1<<63 - 1)
	cases := []struct {
		inst  string
		srcs  []uint64
		want  uint64
		mxcsr uint64
	}{
		{"ADD.f64", []uint64{b64(0.1), b64(0.2)}, b64(p1 + p2), 0},
		{"SUB.f32", []uint64{b32(1), b32(1e-8)}, b32(one32 - tiny32), 0},
		{"MUL.f32", []uint64{b32(1.1), b32(1.1)}, b32(x32 * x32), 0},
		{"DIV.f64", []uint64{b64(1), b64(0)}, b64(math.Inf(1)), 0},
		{"DIV.f64", []uint64{b64(1), b64(3)}, b64(third), 0},
		{"MIN.f64", []uint64{b64(nan), b64(2)}, b64(2), 0},
		{"MIN.f64", []uint64{b64(2), b64(nan)}, b64(nan), 0},
		{"MIN.f64", []uint64{b64(0), b64(math.Copysign(0, -1))}, b64(math.Copysign(0, -1)), 0},
		{"MAX.f32", []uint64{b32(-1), b32(3)}, b32(3), 0},
		{"CMP.lt.f64", []uint64{b64(nan), b64(1)}, 0, 0},
		{"CMP.ltu.f64", []uint64{b64(nan), b64(1)}, 1, 0},
		{"CMP.ne.f64", []uint64{b64(nan), b64(1)}, 0, 0},
		{"CMP.neu.f64", []uint64{b64(nan), b64(1)}, 1, 0},
		{"CMP.nan.f32", []uint64{b32(1), b32(float32(nan))}, 1, 0},
		{"CMP.num.f32", []uint64{b32(1), b32(2)}, 1, 0},
		{"CMP.eq.f64", []uint64{b64(0), b64(math.Copysign(0, -1))}, 1, 0},
		{"CMP.ge.f32", []uint64{b32(2), b32(2)}, 1, 0},
		{"CVT.rz.s32.f64", []uint64{b64(-3.7)}, 0xfffffffd, 0},
		{"CVT.rn.s32.f64", []uint64{b64(2.5)}, 2, 0},
		{"CVT.rn.s32.f64", []uint64{b64(3.5)}, 4, 0},
		{"CVT.rm.s32.f64", []uint64{b64(-2.5)}, 0xfffffffd, 0},
		{"CVT.rp.s32.f64", []uint64{b64(2.1)}, 3, 0},
		{"CVT.rz.s32.f64", []uint64{b64(nan)}, 0x80000000, 0},
		{"CVT.rz.s32.f64", []uint64{b64(3e10)}, 0x80000000, 0},
		{"CVT.rz.s64.f64", []uint64{b64(-9.3e18)}, 1 << 63, 0},
		{"CVT.rz.s64.f32", []uint64{b32(-2.75)}, ^uint64(1), 0},
		{"CVT.dyn.s32.f64", []uint64{b64(-2.5)}, 0xfffffffd, 1 << 13},
		{"CVT.dyn.s32.f64", []uint64{b64(2.5)}, 3, 2 << 13},
		{"CVT.dyn.s32.f64", []uint64{b64(2.5)}, 2, 0},
		{"CVT.rn.f64.s32", []uint64{0xffffffff}, b64(-1), 0},
		{"CVT.dyn.f64.s32", []uint64{0x80000000}, b64(-2147483648), 1 << 13},
		{"CVT.rz.s32.f64", []uint64{b64(-2147483648.9)}, 0x80000000, 0},
		{"CVT.rz.s32.f64", []uint64{b64(-2147483649)}, 0x80000000, 0},
		{"CVT.rz.s32.f64", []uint64{b64(2147483647.9)}, 0x7fffffff, 0},
		{"CVT.rz.s32.f64", []uint64{b64(2147483648)}, 0x80000000, 0},
		{"CVT.rz.s32.f64", []uint64{b64(-0.9)}, 0, 0},
		{"CVT.rz.s64.f64", []uint64{b64(0x1p63)}, 1 << 63, 0},
		{"CVT.rz.s64.f64", []uint64{b64(-0x1p63)}, 1 << 63, 0},
		{"CVT.rz.s64.f64", []uint64{b64(0x1p62 + 0.5)}, 1 << 62, 0},
		{"CVT.rz.s64.f64", []uint64{b64(math.Inf(-1))}, 1 << 63, 0},
		{"CVT.rn.f64.u32", []uint64{0xffffffff}, b64(4294967295), 0},
		{"CVT.rn.f64.u64", []uint64{^uint64(0)}, b64(1 << 64), 0},
		{"CVT.rn.f64.s64", []uint64{1<<53 + 1}, b64(1 << 53), 0},
		{"CVT.rp.f64.s64", []uint64{1<<53 + 1}, b64(1<<53 + 2), 0},
		{"CVT.rz.f32.s64", []uint64{1<<63 - 1}, b32(math.Nextafter32(float32(big), 0)), 0},
		{"CVT.rm.f32.s64", []uint64{uint64(1<<63-1) + 2}, b32(-float32(big)), 0}, // -(2^63-1) rounds down to -2^63
		{"CVT.rn.f32.f64", []uint64{b64(third)}, b32(float32(third)), 0},
		{"CVT.rz.f32.f64", []uint64{b64(third)}, b32(math.Nextafter32(float32(third), 0)), 0},
		{"CVT.rp.f32.f64", []uint64{b64(1e300)}, b32(float32(math.Inf(1))), 0},
		{"CVT.rz.f32.f64", []uint64{b64(1e300)}, b32(math.MaxFloat32), 0},
		{"CVT.rn.f64.f32", []uint64{b32(0.1)}, b64(float64(float32(0.1))), 0},
		{"CVT.rn.s64.s8", []uint64{0x80}, ^uint64(0x7f), 0},
		{"CVT.rn.u64.u8", []uint64{0x180}, 0x80, 0},
		{"CVT.rn.u8.u64", []uint64{0x1234}, 0x34, 0},
		{"CVT.rn.s32.s16", []uint64{0x8000}, 0xffff8000, 0},
		{"CVT.rn.u64.s32", []uint64{0xffffffff}, ^uint64(0), 0},
		{"ROUND.rm.f64", []uint64{b64(-1.5)}, b64(-2), 0},
		{"ROUND.rn.f32", []uint64{b32(2.5)}, b32(2), 0},
		{"ROUND.rz.f64", []uint64{b64(-1.7)}, b64(-1), 0},
		{"ROUND.rp.f64", []uint64{b64(1.2)}, b64(2), 0},
		{"ROUND.dyn.f64", []uint64{b64(1.2)}, b64(2), 2 << 13},
	}
	for _, c := range cases {
		var body strings.Builder
		fmt.Fprintf(&body, "%s  PUT.u64 mxcsr, v8\n", li("v8", 0x1f80|c.mxcsr))
		regs := make([]string, len(c.srcs))
		for i, v := range c.srcs {
			regs[i] = fmt.Sprintf("v%d", i)
			body.WriteString(li(regs[i], v))
		}
		fmt.Fprintf(&body, "  %s v9, %s\n  PUT.u64 s0, v9\n", c.inst, strings.Join(regs, ", "))
		for _, e := range allEngines() {
			m := newMachine(t, e, body.String())
			m.mustSyscall(t)
			if got := m.cpu.State[S0]; got != c.want {
				t.Errorf("%s %s %#x = %#x, want %#x", e.name, c.inst, c.srcs, got, c.want)
			}
		}
	}
}

// TestMoveOps checks GET/PUT masking, MOV, LI, JOIN, SELECT and LD/ST of
// every size, across a page boundary too.
func TestMoveOps(t *testing.T) {
	body := `  LI.u64 v0, 0x1122334455667788
  PUT.u32 s1, v0
  PUT.u64 s2, v0
  GET.u16 v1, s2
  PUT.u64 s3, v1
  PUT.f64 x0, v0
  GET.u8 v2, x0
  PUT.u64 s4, v2
  LI.u64 v3, 0x100ffc
  ST.u64 v3(0), v0
  LD.u32 v4, v3(4)
  PUT.u64 s5, v4
  LD.s16 v5, v3(6)
  PUT.u64 s6, v5
  LI.u64 v6, 0xaaaa
  JOIN.b128 v10, v0, v6
  ST.b128 v3(-12), v10
  LD.b128 v12, v3(-12)
  PUT.b128 x1, v12
  ST.f80 v3(32), v10
  LD.f80 v14, v3(32)
  PUT.f80 fr1, v14
  LD.u64 v7, v3(40)
  PUT.u64 s7, v7
  LI.u64 v8, 0
  SELECT.u64 v9, v8, v0, v6
  PUT.u64 s8, v9
  SELECT.b128 v16, v0, v10, v12
  PUT.b128 x2, v16
  MOV.b128 v18, v10
  PUT.b128 x3, v18
  GET.b128 v20, x3
  PUT.b128 x4, v20
  LI.b128 v22, -1
  PUT.b128 x5, v22
`
	want := map[Reg]uint64{
		S1: 0x55667788, S2: 0x1122334455667788, S3: 0x7788, S4: 0x88,
		S5: 0x11223344, S6: 0x1122, S7: 0xaaaa, SReg(8): 0xaaaa,
		XReg(1): 0x1122334455667788, XReg(1) + 1: 0xaaaa,
		FReg(1): 0x1122334455667788, FReg(1) + 1: 0xaaaa,
		XReg(2): 0x1122334455667788, XReg(2) + 1: 0xaaaa,
		XReg(3) + 1: 0xaaaa, XReg(4): 0x1122334455667788, XReg(4) + 1: 0xaaaa,
		XReg(5): ^uint64(0), XReg(5) + 1: 0,
	}
	for _, e := range allEngines() {
		m := newMachine(t, e, body)
		m.mustSyscall(t)
		for r, w := range want {
			if got := m.cpu.State[r]; got != w {
				t.Errorf("%s: slot %d = %#x, want %#x", e.name, r, got, w)
			}
		}
	}
}

// TestMemoryFaultMidBlock checks the state and stop of a store fault, for
// a wide store across the end of the mapping (nothing may be written).
func TestMemoryFaultMidBlock(t *testing.T) {
	end := uint64(dataBase + dataPages*PageSize)
	body := li("v0", end-8) + li("v1", 0x55) + "  JOIN.b128 v2, v1, v1\n  ST.b128 v0(0), v2\n"
	for _, e := range allEngines() {
		m := newMachine(t, e, body)
		stop := m.run(t)
		if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.FaultAddr != end {
			t.Errorf("%s: stop %+v", e.name, stop)
		}
		if v, _ := m.mem.Load(end-8, 8); v != 0 {
			t.Errorf("%s: a faulting wide store wrote its first half", e.name)
		}
	}
}
