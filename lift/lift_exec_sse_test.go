package lift

import (
	"errors"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// sseExecCases check SSE instructions on values worked out by hand from
// the Intel SDM's definitions.
var sseExecCases = []execCase{
	{name: "movhps movhlps movlhps",
		code:    "0f1606 0f12ca 0f16da 0f1707 cc",
		regs:    map[gvinst.Reg]uint64{xlo(0): 1, xhi(0): 2, xlo(1): 3, xhi(1): 4, xlo(2): 5, xhi(2): 6, xlo(3): 7, xhi(3): 8, rsi: testData, rdi: testData + 0x40},
		mem:     map[uint64][]byte{testData: {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}},
		want:    map[gvinst.Reg]uint64{xlo(0): 1, xhi(0): 0x1111111111111111, xlo(1): 6, xhi(1): 4, xlo(3): 7, xhi(3): 5},
		wantMem: map[uint64][]byte{testData + 0x40: {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11}}},
	{name: "shufps",
		code: "0fc6c14e cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0000000200000001, xhi(0): 0x0000000400000003, xlo(1): 0x0000000600000005, xhi(1): 0x0000000800000007},
		want: map[gvinst.Reg]uint64{xlo(0): 0x0000000400000003, xhi(0): 0x0000000600000005}},
	{name: "cvtdq2ps",
		code: "0f5bc1 cc",
		regs: map[gvinst.Reg]uint64{xlo(1): 0xfffffffe00000001, xhi(1): 3},
		want: map[gvinst.Reg]uint64{xlo(0): 0xc00000003f800000, xhi(0): 0x40400000}},
	{name: "pmovzxbw from memory",
		code: "660f383006 cc",
		regs: map[gvinst.Reg]uint64{rsi: testData},
		mem:  map[uint64][]byte{testData: {1, 0xff, 2, 3, 4, 5, 6, 7, 0xee}},
		want: map[gvinst.Reg]uint64{xlo(0): 0x0003000200ff0001, xhi(0): 0x0007000600050004}},
	{name: "pmovsxdq",
		code: "660f3825c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(1): 0x80000000_00000005},
		want: map[gvinst.Reg]uint64{xlo(0): 5, xhi(0): 0xffffffff80000000}},
	{name: "cmpltps with NaN",
		code: "0fc2c101 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x400000003f800000, xhi(0): 0x7fc00000, xlo(1): 0x3f80000040000000, xhi(1): 0x3f800000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x00000000ffffffff, xhi(0): 0}},
	{name: "cmpneqsd unordered",
		code: "f20fc2c104 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x7ff8000000000000, xhi(0): 9, xlo(1): 0x7ff8000000000000},
		want: map[gvinst.Reg]uint64{xlo(0): ^uint64(0), xhi(0): 9}},
	{name: "sqrtsd minsd roundsd",
		code: "f20f51c1 f20f5dd3 660f3a0be501 cc",
		regs: map[gvinst.Reg]uint64{xlo(1): 0x4010000000000000, xhi(1): 9, xhi(0): 0x77, xlo(2): 0x3ff0000000000000, xlo(3): 0x7ff8000000000000, xlo(5): 0xbff8000000000000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x4000000000000000, xhi(0): 0x77, xlo(2): 0x7ff8000000000000, xlo(4): 0xc000000000000000}},
	{name: "addss merges",
		code: "f30f58c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x123456783f800000, xhi(0): 5, xlo(1): 0x40000000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x1234567840400000, xhi(0): 5}},
	{name: "pcmpgtb",
		code: "660f64c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x7f8001, xlo(1): 0x800000},
		want: map[gvinst.Reg]uint64{xlo(0): 0xff00ff, xhi(0): 0}},
	{name: "packuswb",
		code: "660f67c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0080007fffff0100, xlo(1): 5},
		want: map[gvinst.Reg]uint64{xlo(0): 0x00000000807f00ff, xhi(0): 5}},
	{name: "packssdw",
		code: "660f6bc1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0xfffeee9000011170, xhi(0): 0xfffffffb00000005},
		want: map[gvinst.Reg]uint64{xlo(0): 0xfffb000580007fff, xhi(0): 0}},
	{name: "pmaddwd",
		code: "660ff5c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0003ffff00020001, xlo(1): 0x000100070014000a},
		want: map[gvinst.Reg]uint64{xlo(0): 0xfffffffc00000032, xhi(0): 0}},
	{name: "pshufb",
		code: "660f3800c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0706050403020100, xhi(0): 0x0f0e0d0c0b0a0908, xlo(1): 0x000000000001800f},
		want: map[gvinst.Reg]uint64{xlo(0): 0x000000000001000f, xhi(0): 0}},
	{name: "palignr",
		code: "660f3a0fc104 cc",
		regs: map[gvinst.Reg]uint64{xlo(1): 0x1716151413121110, xhi(1): 0x1f1e1d1c1b1a1918, xlo(0): 0x2726252423222120, xhi(0): 0x2f2e2d2c2b2a2928},
		want: map[gvinst.Reg]uint64{xlo(0): 0x1b1a191817161514, xhi(0): 0x232221201f1e1d1c}},
	{name: "pslld by xmm psraw psllq by 64",
		code: "660ff2c1 660f71e20f 660f73f340 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x1000000000000001, xhi(0): 0xffffffff00000003, xlo(1): 4, xlo(2): 0x7fff8000, xlo(3): 0x1234, xhi(3): 0x5678},
		want: map[gvinst.Reg]uint64{xlo(0): 0x10, xhi(0): 0xfffffff000000030, xlo(2): 0xffff, xlo(3): 0, xhi(3): 0}},
	{name: "float conversions",
		code: "f30f5ac1 f20f5ad3 0f5ae5 f30f5bf7 cc",
		regs: map[gvinst.Reg]uint64{xlo(1): 0x3fc00000, xhi(0): 0x99, xlo(3): 0x3ff8000000000000, xlo(2): 0x1234567800000000,
			xlo(5): 0x400000003f800000, xlo(7): 0xbff333333ff33333, xhi(7): 0x7fc00000501502f9},
		want: map[gvinst.Reg]uint64{xlo(0): 0x3ff8000000000000, xhi(0): 0x99, xlo(2): 0x123456783fc00000,
			xlo(4): 0x3ff0000000000000, xhi(4): 0x4000000000000000, xlo(6): 0xffffffff00000001, xhi(6): 0x8000000080000000}},
	{name: "pmuludq",
		code: "660ff4c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x12345678ffffffff, xhi(0): 0x9999999900000002, xlo(1): 0xabcdef01ffffffff, xhi(1): 0x0000000100000003},
		want: map[gvinst.Reg]uint64{xlo(0): 0xfffffffe00000001, xhi(0): 6}},
	{name: "psadbw",
		code: "660ff6c1 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0807060504030201, xhi(0): ^uint64(0), xlo(1): 0x0102030405060708},
		want: map[gvinst.Reg]uint64{xlo(0): 32, xhi(0): 2040}},
	{name: "blendvps",
		code: "660f3814ca cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0x80000000, xhi(0): 0x7fffffffffffffff, xlo(1): 0x0000000200000001, xhi(1): 0x0000000400000003, xlo(2): 0x0000000600000005, xhi(2): 0x0000000800000007},
		want: map[gvinst.Reg]uint64{xlo(1): 0x0000000200000005, xhi(1): 0x0000000400000007}},
	{name: "movddup punpckhqdq unpcklps",
		code: "f20f12c1 660f6dd1 0f14db cc", // movddup xmm0, xmm1; punpckhqdq xmm2, xmm1; unpcklps xmm3, xmm3
		regs: map[gvinst.Reg]uint64{xlo(1): 7, xhi(1): 8, xhi(2): 9, xlo(3): 0x0000000200000001},
		want: map[gvinst.Reg]uint64{xlo(0): 7, xhi(0): 7, xlo(2): 9, xhi(2): 8, xlo(3): 0x0000000100000001, xhi(3): 0x0000000200000002}},
	{name: "pextrw pinsrd pextrq",
		code: "660fc5c007 660f3a22c903 66480f3a16ca01 cc",
		regs: map[gvinst.Reg]uint64{xhi(0): 0xbeef000000000000, rcx: 0x11223344, xhi(1): 0x5555555566666666},
		want: map[gvinst.Reg]uint64{rax: 0xbeef, xhi(1): 0x1122334466666666, rdx: 0x1122334466666666}},
	{name: "cvtsi2ss cvtss2si cvtsd2si",
		code: "f30f2ac0 f3480f2dc9 f20f2dd2 cc",
		regs: map[gvinst.Reg]uint64{rax: 3, xlo(0): 0xaaaaaaaa00000000, xlo(1): 0x40200000, xlo(2): 0x400c000000000000},
		want: map[gvinst.Reg]uint64{xlo(0): 0xaaaaaaaa40400000, rcx: 2, rdx: 4}},
	{name: "comiss equal",
		code:     "0f2fc1" + flagsTail,
		regs:     map[gvinst.Reg]uint64{xlo(0): 0x3f800000, xlo(1): 0x3f800000},
		flagMask: fAll, flags: fZF},
	{name: "andnpd pminub phaddd",
		code: "660f55c1 660fdad3 660f3802e5 cc",
		regs: map[gvinst.Reg]uint64{xlo(0): 0xff00, xlo(1): 0xffff, xlo(2): 0xc805, xlo(3): 0x640a,
			xlo(4): 0x0000000200000001, xhi(4): 0x0000000400000003, xlo(5): 0x000000140000000a, xhi(5): 0x000000280000001e},
		want: map[gvinst.Reg]uint64{xlo(0): 0xff, xlo(2): 0x6405, xlo(4): 0x0000000700000003, xhi(4): 0x000000460000001e}},
	{name: "insertps addsubpd",
		code: "660f3a21c1d2 660fd0d3 cc", // insertps xmm0, xmm1, 0xd2 (src lane 3 to lane 1, clear lane 1? no: zmask 2 clears lane 1)
		regs: map[gvinst.Reg]uint64{xlo(0): 0x2222222211111111, xhi(0): 0x4444444433333333, xhi(1): 0x9999999988888888,
			xlo(2): 0x4024000000000000, xhi(2): 0x4024000000000000, xlo(3): 0x3ff0000000000000, xhi(3): 0x3ff0000000000000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x0000000011111111, xhi(0): 0x4444444433333333, xlo(2): 0x4022000000000000, xhi(2): 0x4026000000000000}},
	{name: "insertps lane move",
		code: "660f3a21c1e0 cc", // insertps xmm0, xmm1, 0xe0: src lane 3 to lane 2
		regs: map[gvinst.Reg]uint64{xlo(0): 0x2222222211111111, xhi(0): 0x4444444433333333, xhi(1): 0x9999999988888888},
		want: map[gvinst.Reg]uint64{xlo(0): 0x2222222211111111, xhi(0): 0x4444444499999999}},
	{name: "haddps extractps",
		code: "f20f7cc1 660f3a17c302 cc", // haddps xmm0, xmm1; extractps ebx, xmm0, 2
		regs: map[gvinst.Reg]uint64{xlo(0): 0x400000003f800000, xhi(0): 0x4080000040400000, xlo(1): 0x40c0000040a00000, xhi(1): 0x4100000040e00000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x40e0000040400000, xhi(0): 0x4170000041300000, rbx: 0x41300000}},
	{name: "pmaddubsw saturates",
		code: "660f3804c1 cc",
		// a bytes (unsigned) 255,255 | 2,3; b bytes (signed) 127,127 | -1,4
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0302ffff, xlo(1): 0x04ff7f7f},
		want: map[gvinst.Reg]uint64{xlo(0): 0x000a7fff, xhi(0): 0}},
	{name: "pmulhrsw",
		code: "660f380bc1 cc",
		// 0x4000*0x4000 -> 0x2000; -0x8000*-0x8000 -> 0x8000 (wraps); 3*0x2aab -> 1
		regs: map[gvinst.Reg]uint64{xlo(0): 0x000380004000, xlo(1): 0x2aab80004000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x000180002000, xhi(0): 0}},
	{name: "dpps dppd",
		code: "660f3a40c1f5 660f3a41d332 cc", // dpps xmm0, xmm1, 0xf5; dppd xmm2, xmm3, 0x32
		regs: map[gvinst.Reg]uint64{xlo(0): 0x400000003f800000, xhi(0): 0x4080000040400000, xlo(1): 0x40a0000040000000, xhi(1): 0x3f8000003f000000,
			xlo(2): 0x4000000000000000, xhi(2): 0x4008000000000000, xlo(3): 0x4010000000000000, xhi(3): 0x4014000000000000},
		// dpps: 1*2 + 2*5 + 3*0.5 + 4*1 = 17.5 (0x418c0000) in lanes 0 and 2
		// dppd: both products (2*4 + 3*5 = 23) summed, into lane 1 only
		want: map[gvinst.Reg]uint64{xlo(0): 0x418c0000, xhi(0): 0x418c0000, xlo(2): 0, xhi(2): 0x4037000000000000}},
	{name: "phaddsw phsubsw",
		code: "660f3803c1 660f3807d3 cc", // phaddsw xmm0, xmm1; phsubsw xmm2, xmm3
		// xmm0 words 0x7000,0x7000 | 1,2 | 0..; xmm1 words 0x8000,0xffff | ...
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0002000170007000, xlo(1): 0xffff8000,
			xlo(2): 0x0000000000018000, xlo(3): 0x0000000500070000},
		want: map[gvinst.Reg]uint64{xlo(0): 0x00037fff, xhi(0): 0x8000, xlo(2): 0x8000, xhi(2): 0x0005fff9}},
	{name: "mpsadbw",
		code: "660f3a42c105 cc", // mpsadbw xmm0, xmm1, 5: xmm0 bytes 4.., xmm1 bytes 4..7
		// xmm0 bytes 0..15 = 0,1,...,15; xmm1 bytes 4..7 = 10,10,10,10
		regs: map[gvinst.Reg]uint64{xlo(0): 0x0706050403020100, xhi(0): 0x0f0e0d0c0b0a0908, xlo(1): 0x0a0a0a0a00000000},
		// word i = sum_j |(4+i+j) - 10|: 18, 14, 10, 6, 4, 4, 6, 10
		want: map[gvinst.Reg]uint64{xlo(0): 0x0006000a000e0012, xhi(0): 0x000a000600040004}},
	{name: "ldmxcsr stmxcsr",
		code:    "0fae16 0fae1f cc",
		regs:    map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 8},
		mem:     map[uint64][]byte{testData: {0x80, 0x3f, 0, 0}},
		want:    map[gvinst.Reg]uint64{gvinst.MXCSR: 0x3f80},
		wantMem: map[uint64][]byte{testData + 8: {0x80, 0x3f, 0, 0}}},
}

func TestExecSSE(t *testing.T) {
	for _, c := range sseExecCases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

// check runs the case on the interpreter without and with its
// optimization passes.
func (c *execCase) check(t *testing.T) {
	t.Helper()
	for _, opt := range []bool{false, true} {
		c.checkWith(t, gvinst.InterpOptions{Optimize: opt})
	}
}

func (c *execCase) checkWith(t *testing.T, opts gvinst.InterpOptions) {
	t.Helper()
	cpu, mem := run(t, c.code, c.regs, func(mem *gvinst.Memory) {
		for a, b := range c.mem {
			if err := mem.Write(a, b); err != nil {
				t.Fatal(err)
			}
		}
	}, opts)
	for r, want := range c.want {
		if got := cpu.State[r]; got != want {
			t.Errorf("optimize=%v: %s = %#x, want %#x", opts.Optimize, slotName(r), got, want)
		}
	}
	if c.flagMask != 0 {
		if got := cpu.State[r15] & c.flagMask; got != c.flags {
			t.Errorf("optimize=%v: flags&%#x = %#x, want %#x", opts.Optimize, c.flagMask, got, c.flags)
		}
	}
	for a, want := range c.wantMem {
		got := make([]byte, len(want))
		if err := mem.Read(a, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("memory at %#x = % x, want % x", a, got, want)
		}
	}
}

// slotName names a guest slot for test messages, including the high half
// of an xmm register.
func slotName(r gvinst.Reg) string {
	if r >= gvinst.X0 && r < gvinst.FSBase && (r-gvinst.X0)%2 == 1 {
		return (r - 1).String() + ".hi"
	}
	return r.String()
}

// TestExecPcmpistri runs pcmpistri when the interpreter implements
// VPCMPSTR.
func TestExecPcmpistri(t *testing.T) {
	mem := codeMem(t, hexCode(t, "660f3a63c100"+flagsTail))
	it := gvinst.NewInterpreter(mem, NewLifter(mem), gvinst.InterpOptions{})
	cpu := &gvinst.CPU{PC: testCode}
	cpu.State[rsp] = testStack - 64
	cpu.State[xlo(0)] = 0x636261           // "abc"
	cpu.State[xlo(1)] = 0x0000787862787878 // "xxxbxx"
	stop := it.Run(cpu, 100)
	var ie *gvinst.InternalError
	if stop.Kind == gvinst.StopTrap && (errors.As(stop.Err, &ie) || stop.Trap == gvinst.TrapUnsupported) {
		t.Skipf("the interpreter does not run VPCMPSTR yet: %v", stop)
	}
	if stop.Kind != gvinst.StopTrap || stop.Trap != gvinst.TrapBreakpoint {
		t.Fatalf("stop = %v", stop)
	}
	if got := cpu.State[rcx]; got != 3 {
		t.Errorf("ecx = %d, want 3", got)
	}
	if got := cpu.State[r15] & fAll; got != fCF|fZF|fSF {
		t.Errorf("flags = %#x, want CF ZF SF", got)
	}
}
