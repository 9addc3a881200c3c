package lift

import (
	"hash/crc32"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/jit"
)

// Register slots by x86 name, for tests.
const (
	rax = gvinst.Reg(0)
	rcx = gvinst.Reg(1)
	rdx = gvinst.Reg(2)
	rbx = gvinst.Reg(3)
	rsp = gvinst.Reg(4)
	rbp = gvinst.Reg(5)
	rsi = gvinst.Reg(6)
	rdi = gvinst.Reg(7)
	r8  = gvinst.Reg(8)
	r9  = gvinst.Reg(9)
	r15 = gvinst.Reg(15)
)

// flagsTail is "pushfq; pop r15; int3": it leaves RFLAGS in r15 and stops.
const flagsTail = "9c 415f cc"

// run executes code (which must end in int3) from testCode with the
// registers in regs, and returns the final CPU state.
func run(t *testing.T, code string, regs map[gvinst.Reg]uint64, setup func(mem *gvinst.Memory), opts gvinst.InterpOptions) (*gvinst.CPU, *gvinst.Memory) {
	t.Helper()
	mem := codeMem(t, hexCode(t, code))
	if setup != nil {
		setup(mem)
	}
	l := NewLifter(mem)
	it := gvinst.NewInterpreter(mem, l, opts)
	cpu := &gvinst.CPU{PC: testCode}
	cpu.State[rsp] = testStack - 64
	cpu.State[gvinst.RFLAGS] = 0x202
	cpu.State[gvinst.MXCSR] = 0x1f80 // the reset value: SSE exceptions masked
	for r, v := range regs {
		cpu.State[r] = v
	}
	start := *cpu
	stop := it.Run(cpu, 100000)
	if stop.Kind != gvinst.StopTrap || stop.Trap != gvinst.TrapBreakpoint {
		t.Fatalf("code %s: stopped with %v, want the final int3", code, stop)
	}
	if jit.Supported() {
		// The compiling engine must end in the same state.
		jmem := codeMem(t, hexCode(t, code))
		if setup != nil {
			setup(jmem)
		}
		e, err := jit.New(jmem, NewLifter(jmem), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		jcpu := start
		jstop := e.Run(&jcpu, 100000)
		if jstop.Kind != stop.Kind || jstop.Trap != stop.Trap || jstop.PC != stop.PC {
			t.Errorf("code %s: jit stopped with %v, the interpreter with %v", code, jstop, stop)
		}
		for r := range cpu.State {
			if jcpu.State[r] != cpu.State[r] {
				t.Errorf("code %s: jit leaves %v = %#x, the interpreter %#x", code, gvinst.Reg(r), jcpu.State[r], cpu.State[r])
			}
		}
	}
	return cpu, mem
}

func xlo(n int) gvinst.Reg { return gvinst.XReg(n) }
func xhi(n int) gvinst.Reg { return gvinst.XReg(n) + 1 }

// execCase runs code and checks registers, flags (through r15: the code
// ends with flagsTail) and memory.
type execCase struct {
	name     string
	code     string
	regs     map[gvinst.Reg]uint64
	mem      map[uint64][]byte
	want     map[gvinst.Reg]uint64
	flagMask uint64 // the RFLAGS bits to check in r15
	flags    uint64
	wantMem  map[uint64][]byte
}

const (
	fCF  = flagCF
	fPF  = flagPF
	fAF  = flagAF
	fZF  = flagZF
	fSF  = flagSF
	fDF  = flagDF
	fOF  = flagOF
	fAll = statusFlags
)

var execCases = []execCase{
	{name: "add32 carry zero-extends",
		code: "b8ffffffff 83c001" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x123400000000},
		want: map[gvinst.Reg]uint64{rax: 0}, flagMask: fAll, flags: fCF | fPF | fAF | fZF},
	{name: "sub8 merges",
		code: "2c90" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x1122334455667788},
		want: map[gvinst.Reg]uint64{rax: 0x11223344556677f8}, flagMask: fAll, flags: fCF | fSF},
	{name: "mov ah",
		code: "b45a cc",
		regs: map[gvinst.Reg]uint64{rax: 0x1122334455667788},
		want: map[gvinst.Reg]uint64{rax: 0x1122334455665a88}},
	{name: "add16 overflow",
		code: "6605ff7f" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0xaaaabbbbcccc0001},
		want: map[gvinst.Reg]uint64{rax: 0xaaaabbbbcccc8000}, flagMask: fAll, flags: fOF | fSF | fAF | fPF},
	{name: "adc sbb chain",
		code: "4801c8 4811d3" + flagsTail, // add rax, rcx; adc rbx, rdx
		regs: map[gvinst.Reg]uint64{rax: ^uint64(0), rcx: 1, rbx: 5, rdx: 6},
		want: map[gvinst.Reg]uint64{rax: 0, rbx: 12}, flagMask: fCF | fZF, flags: 0},
	{name: "sbb borrow",
		code: "4829c8 4819d3" + flagsTail, // sub rax, rcx; sbb rbx, rdx
		regs: map[gvinst.Reg]uint64{rax: 0, rcx: 1, rbx: 5, rdx: 5},
		want: map[gvinst.Reg]uint64{rax: ^uint64(0), rbx: ^uint64(0)}, flagMask: fCF | fZF | fSF, flags: fCF | fSF},
	{name: "neg not inc dec",
		code:     "48f7d8 48f7d1 48ffc2 ffcb" + flagsTail, // neg rax; not rcx; inc rdx; dec ebx
		regs:     map[gvinst.Reg]uint64{rax: 5, rcx: 0xff, rdx: 0x7fffffffffffffff, rbx: 0xffffffff00000001},
		want:     map[gvinst.Reg]uint64{rax: ^uint64(4), rcx: ^uint64(0xff), rdx: 1 << 63, rbx: 0},
		flagMask: fCF | fZF | fOF, flags: fCF | fZF}, // CF from neg survives inc and dec
	{name: "imul2 overflow",
		code: "480fafc1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 1 << 62, rcx: 4},
		want: map[gvinst.Reg]uint64{rax: 0}, flagMask: fCF | fOF, flags: fCF | fOF},
	{name: "imul3 no overflow",
		code: "6bc1fd" + flagsTail, // imul eax, ecx, -3
		regs: map[gvinst.Reg]uint64{rcx: 7, rax: 0xffffffffffffffff},
		want: map[gvinst.Reg]uint64{rax: 0xffffffeb}, flagMask: fCF | fOF, flags: 0},
	{name: "imul1 64",
		code: "48f7e9 cc", // imul rcx
		regs: map[gvinst.Reg]uint64{rax: ^uint64(1), rcx: 3},
		want: map[gvinst.Reg]uint64{rax: ^uint64(5), rdx: ^uint64(0)}},
	{name: "mul8",
		code: "f6e1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0xffffffffffffff80, rcx: 3},
		want: map[gvinst.Reg]uint64{rax: 0xffffffffffff0180}, flagMask: fCF | fOF, flags: fCF | fOF},
	{name: "mul64",
		code: "48f7e1 cc",
		regs: map[gvinst.Reg]uint64{rax: 1 << 63, rcx: 6},
		want: map[gvinst.Reg]uint64{rax: 0, rdx: 3}},
	{name: "div64",
		code: "48f7f1 cc",
		regs: map[gvinst.Reg]uint64{rdx: 1, rax: 0, rcx: 2},
		want: map[gvinst.Reg]uint64{rax: 1 << 63, rdx: 0}},
	{name: "idiv32",
		code: "f7f9 cc",
		regs: map[gvinst.Reg]uint64{rax: 0xdead0000fffffff9, rdx: 0xffffffff, rcx: 2},
		want: map[gvinst.Reg]uint64{rax: 0xfffffffd, rdx: 0xffffffff}},
	{name: "div8",
		code: "f6f1 cc",
		regs: map[gvinst.Reg]uint64{rax: 0x5500000000000107, rcx: 0x10},
		want: map[gvinst.Reg]uint64{rax: 0x5500000000000710}},
	{name: "idiv8 negative",
		code: "f6f9 cc", // idiv cl: ax=-7, cl=2
		regs: map[gvinst.Reg]uint64{rax: 0xfff9, rcx: 2},
		want: map[gvinst.Reg]uint64{rax: 0xfffd}},
	{name: "shl count masked",
		code: "48d3e0 d3e3" + flagsTail, // shl rax, cl; shl ebx, cl
		regs: map[gvinst.Reg]uint64{rax: 1, rcx: 65, rbx: 0x80000001},
		want: map[gvinst.Reg]uint64{rax: 2, rbx: 2}, flagMask: fCF | fZF, flags: fCF},
	{name: "shift by zero cl keeps flags",
		code: "39c0 d3e3" + flagsTail, // cmp eax, eax; shl ebx, cl (cl=0)
		regs: map[gvinst.Reg]uint64{rbx: 0xffffffff00000001},
		want: map[gvinst.Reg]uint64{rbx: 1}, flagMask: fZF | fCF, flags: fZF},
	{name: "sar",
		code: "c1f804" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x80000008},
		want: map[gvinst.Reg]uint64{rax: 0xf8000000}, flagMask: fCF | fSF | fZF, flags: fCF | fSF},
	{name: "shr8",
		code: "c0e902" + flagsTail, // shr cl, 2
		regs: map[gvinst.Reg]uint64{rcx: 0x1207},
		want: map[gvinst.Reg]uint64{rcx: 0x1201}, flagMask: fCF | fOF, flags: fCF},
	{name: "rol ror",
		code: "c1c008 d0c9" + flagsTail, // rol eax, 8; ror cl, 1
		regs: map[gvinst.Reg]uint64{rax: 0x12345678, rcx: 1},
		want: map[gvinst.Reg]uint64{rax: 0x34567812, rcx: 0x80}, flagMask: fCF | fOF, flags: fCF | fOF},
	{name: "rcl",
		code: "f9 d1d0" + flagsTail, // stc; rcl eax, 1
		regs: map[gvinst.Reg]uint64{rax: 0x80000000},
		want: map[gvinst.Reg]uint64{rax: 1}, flagMask: fCF | fOF, flags: fCF | fOF},
	{name: "rcr8",
		code: "f8 d0d8" + flagsTail, // clc; rcr al, 1
		regs: map[gvinst.Reg]uint64{rax: 0x101},
		want: map[gvinst.Reg]uint64{rax: 0x100}, flagMask: fCF | fOF, flags: fCF},
	{name: "rcl by 3",
		code: "f9 48c1d003" + flagsTail, // stc; rcl rax, 3
		regs: map[gvinst.Reg]uint64{rax: 0xa000000000000001},
		want: map[gvinst.Reg]uint64{rax: 0x000000000000000e}, flagMask: fCF, flags: fCF},
	{name: "rcr by cl",
		code: "f9 48d3d8" + flagsTail, // stc; rcr rax, cl (cl = 4)
		regs: map[gvinst.Reg]uint64{rax: 0x18, rcx: 4},
		want: map[gvinst.Reg]uint64{rax: 0x1000000000000001}, flagMask: fCF, flags: fCF},
	{name: "rcl8 by cl mod 9",
		code: "f8 d2d0" + flagsTail, // clc; rcl al, cl (cl = 10: 10 mod 9 = 1)
		regs: map[gvinst.Reg]uint64{rax: 0x81, rcx: 10},
		want: map[gvinst.Reg]uint64{rax: 0x02}, flagMask: fCF | fOF, flags: fCF | fOF},
	{name: "rcl by cl zero keeps flags",
		code: "f9 d3d0" + flagsTail, // stc; rcl eax, cl (cl = 0)
		regs: map[gvinst.Reg]uint64{rax: 0xffffffff00000005, rcx: 0},
		want: map[gvinst.Reg]uint64{rax: 5}, flagMask: fCF, flags: fCF},
	{name: "cmpxchg8b",
		code:     "0fc70e" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rax: 1, rdx: 2, rbx: 3, rcx: 4, rsi: testData},
		mem:      map[uint64][]byte{testData: {1, 0, 0, 0, 2, 0, 0, 0}},
		wantMem:  map[uint64][]byte{testData: {3, 0, 0, 0, 4, 0, 0, 0}},
		flagMask: fZF, flags: fZF},
	{name: "shrd16 count 19",
		code: "b113 660fadd8" + flagsTail, // mov cl, 19; shrd ax, bx, cl
		regs: map[gvinst.Reg]uint64{rax: 0x1234, rbx: 0xabcd},
		want: map[gvinst.Reg]uint64{rax: 0x9579}, flagMask: fCF | fSF | fZF, flags: fCF | fSF},
	{name: "shld16 count 20",
		code: "66c1e000 660fa4d814" + flagsTail, // shl ax, 0; shld ax, bx, 20
		regs: map[gvinst.Reg]uint64{rax: 0x1234, rbx: 0xabcd},
		want: map[gvinst.Reg]uint64{rax: 0xbcd1}, flagMask: fCF | fSF | fZF, flags: fSF},
	{name: "crc32 byte and qword",
		code: "f20f38f0c1 f2490f38f1d8 cc", // crc32 eax, cl; crc32 rbx, r8
		regs: map[gvinst.Reg]uint64{rax: 0xffffffff_ffffffff, rcx: 0x61, rbx: 0xdead_0000_0000, r8: 0x3837363534333231},
		want: map[gvinst.Reg]uint64{rax: crc32cUpdate(0xffffffff, []byte{0x61}), rbx: crc32cUpdate(0, []byte("12345678"))}},
	{name: "shld",
		code: "480fa4c804" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x1000000000000001, rcx: 0xf000000000000000},
		want: map[gvinst.Reg]uint64{rax: 0x1f}, flagMask: fCF, flags: fCF},
	{name: "shrd",
		code: "0facc808" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x12345678, rcx: 0xaabbccdd},
		want: map[gvinst.Reg]uint64{rax: 0xdd123456}, flagMask: fCF | fZF | fSF, flags: fSF},
	{name: "shrd cl",
		code: "480fadc8" + flagsTail, // shrd rax, rcx, cl
		regs: map[gvinst.Reg]uint64{rax: 0x89, rcx: 0x4},
		want: map[gvinst.Reg]uint64{rax: 0x4000000000000008}, flagMask: fCF | fZF | fSF, flags: fCF},
	{name: "bt imm",
		code:     "0fbae005" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rax: 0x20},
		flagMask: fCF, flags: fCF},
	{name: "bts reg",
		code: "480fabc8" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0, rcx: 65},
		want: map[gvinst.Reg]uint64{rax: 2}, flagMask: fCF, flags: 0},
	{name: "bt mem beyond operand",
		code:     "0fa30b" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rbx: testData, rcx: 35},
		mem:      map[uint64][]byte{testData + 4: {0x08}},
		flagMask: fCF, flags: fCF},
	{name: "bts mem negative offset",
		code:     "480fab0b" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rbx: testData + 8, rcx: ^uint64(0)},
		wantMem:  map[uint64][]byte{testData: {0, 0, 0, 0, 0, 0, 0, 0x80}},
		flagMask: fCF, flags: 0},
	{name: "btr btc",
		code: "0fbaf000 0fbaf901" + flagsTail, // btr eax, 0; btc ecx, 1
		regs: map[gvinst.Reg]uint64{rax: 0xff, rcx: 0},
		want: map[gvinst.Reg]uint64{rax: 0xfe, rcx: 2}, flagMask: fCF, flags: 0},
	{name: "bsf bsr",
		code: "0fbcc1 480fbdd1" + flagsTail, // bsf eax, ecx; bsr rdx, rcx
		regs: map[gvinst.Reg]uint64{rcx: 0xf0},
		want: map[gvinst.Reg]uint64{rax: 4, rdx: 7}, flagMask: fZF, flags: 0},
	{name: "bsf zero keeps dest",
		code: "480fbcc1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0x1234, rcx: 0},
		want: map[gvinst.Reg]uint64{rax: 0x1234}, flagMask: fZF, flags: fZF},
	{name: "tzcnt zero",
		code: "f30fbcc1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rcx: 0},
		want: map[gvinst.Reg]uint64{rax: 32}, flagMask: fCF | fZF, flags: fCF},
	{name: "lzcnt",
		code: "f3480fbdc1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rcx: 1},
		want: map[gvinst.Reg]uint64{rax: 63}, flagMask: fCF | fZF, flags: 0},
	{name: "popcnt",
		code: "f30fb8c1" + flagsTail,
		regs: map[gvinst.Reg]uint64{rcx: 0xff00ff},
		want: map[gvinst.Reg]uint64{rax: 16}, flagMask: fAll, flags: 0},
	{name: "bswap",
		code: "0fc8 480fc9 cc",
		regs: map[gvinst.Reg]uint64{rax: 0xffffffff12345678, rcx: 0x0102030405060708},
		want: map[gvinst.Reg]uint64{rax: 0x78563412, rcx: 0x0807060504030201}},
	{name: "xchg",
		code:    "4887cb 8703 cc", // xchg rbx, rcx; xchg [rbx]... (rbx is rcx's old value)
		regs:    map[gvinst.Reg]uint64{rbx: 1, rcx: testData, rax: 0xaaaaaaaa77777777},
		mem:     map[uint64][]byte{testData: {1, 2, 3, 4}},
		want:    map[gvinst.Reg]uint64{rbx: testData, rcx: 1, rax: 0x04030201},
		wantMem: map[uint64][]byte{testData: {0x77, 0x77, 0x77, 0x77}}},
	{name: "cmpxchg equal",
		code: "0fb10b" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 5, rbx: testData, rcx: 9},
		mem:  map[uint64][]byte{testData: {5, 0, 0, 0}},
		want: map[gvinst.Reg]uint64{rax: 5}, wantMem: map[uint64][]byte{testData: {9, 0, 0, 0}},
		flagMask: fZF, flags: fZF},
	{name: "cmpxchg not equal",
		code: "0fb10b" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0xffffffff00000006, rbx: testData, rcx: 9},
		mem:  map[uint64][]byte{testData: {5, 0, 0, 0}},
		want: map[gvinst.Reg]uint64{rax: 5}, wantMem: map[uint64][]byte{testData: {5, 0, 0, 0}},
		flagMask: fZF | fCF, flags: 0},
	{name: "xadd",
		code: "f00fc103 cc",
		regs: map[gvinst.Reg]uint64{rax: 3, rbx: testData},
		mem:  map[uint64][]byte{testData: {10, 0, 0, 0}},
		want: map[gvinst.Reg]uint64{rax: 10}, wantMem: map[uint64][]byte{testData: {13, 0, 0, 0}}},
	{name: "cmpxchg16b equal",
		code:     "480fc70e" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rax: 1, rdx: 2, rbx: 7, rcx: 8, rsi: testData},
		mem:      map[uint64][]byte{testData: {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
		want:     map[gvinst.Reg]uint64{rax: 1, rdx: 2},
		wantMem:  map[uint64][]byte{testData: {7, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0}},
		flagMask: fZF, flags: fZF},
	{name: "cmpxchg16b not equal",
		code:     "480fc70e" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rax: 1, rdx: 3, rbx: 7, rcx: 8, rsi: testData},
		mem:      map[uint64][]byte{testData: {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
		want:     map[gvinst.Reg]uint64{rax: 1, rdx: 2},
		wantMem:  map[uint64][]byte{testData: {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}},
		flagMask: fZF, flags: 0},
	{name: "sign extensions",
		code: "4898 4899 cc", // cdqe; cqo
		regs: map[gvinst.Reg]uint64{rax: 0x80000000},
		want: map[gvinst.Reg]uint64{rax: 0xffffffff80000000, rdx: ^uint64(0)}},
	{name: "cbw cwd cwde cdq",
		code: "6698 6699 cc",
		regs: map[gvinst.Reg]uint64{rax: 0x1111111111111180, rdx: 0x2222222222222222},
		want: map[gvinst.Reg]uint64{rax: 0x111111111111ff80, rdx: 0x222222222222ffff}},
	{name: "cwde cdq",
		code: "98 99 cc",
		regs: map[gvinst.Reg]uint64{rax: 0x1111111111117fff, rdx: 0x2222222222222222},
		want: map[gvinst.Reg]uint64{rax: 0x7fff, rdx: 0}},
	{name: "setcc cmov",
		code: "39c8 0f9cc2 0f4fd9 0f4cf1 cc", // cmp eax, ecx; setl dl; cmovg ebx, ecx; cmovl esi, ecx
		regs: map[gvinst.Reg]uint64{rax: 1, rcx: 2, rdx: 0x1100, rbx: 0xffffffff00000007, rsi: 9},
		want: map[gvinst.Reg]uint64{rdx: 0x1101, rbx: 7, rsi: 2}},
	{name: "movzx movsx lea",
		code: "0fb6c4 480fbfd9 4863f1 488d7c4b10 cc", // movzx eax, ah; movsx rbx, cx; movsxd rsi, ecx; lea rdi, [rbx+rcx*2+0x10]
		regs: map[gvinst.Reg]uint64{rax: 0x9988, rcx: 0x80008001},
		want: map[gvinst.Reg]uint64{rax: 0x99, rbx: 0xffffffffffff8001, rsi: 0xffffffff80008001, rdi: 0x100008013}},
	{name: "loop sum",
		code: "31c0 b90a000000 01c8 ffc9 75fa cc",
		want: map[gvinst.Reg]uint64{rax: 55, rcx: 0}},
	{name: "call ret",
		code: "e805000000 4883c001 cc b807000000 c3",
		want: map[gvinst.Reg]uint64{rax: 8, rsp: testStack - 64}},
	{name: "indirect call and jump table",
		code: "488d0d08000000 ffd1 cc 90909090 90 b803000000 c3", // lea rcx, [rip+8]; call rcx; int3; ...; mov eax, 3; ret
		want: map[gvinst.Reg]uint64{rax: 3, rsp: testStack - 64}},
	{name: "push pop leave",
		code: "55 4889e5 6a11 ff33 58 59 c9 cc",
		regs: map[gvinst.Reg]uint64{rbx: testData, rbp: 0x1234},
		mem:  map[uint64][]byte{testData: {0xef, 0xbe, 0xad, 0xde}},
		want: map[gvinst.Reg]uint64{rax: 0xdeadbeef, rcx: 0x11, rbp: 0x1234, rsp: testStack - 64}},
	{name: "enter leave",
		code: "c8200000 4889e0 c9 cc",
		regs: map[gvinst.Reg]uint64{rbp: 0x1234},
		want: map[gvinst.Reg]uint64{rax: testStack - 64 - 8 - 0x20, rbp: 0x1234, rsp: testStack - 64}},
	{name: "ret imm",
		code: "6a05 e805000000 cc cccccccc c20800",
		want: map[gvinst.Reg]uint64{rsp: testStack - 64}},
	{name: "rep movsb",
		code:    "f3a4 cc",
		regs:    map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 0x100, rcx: 5},
		mem:     map[uint64][]byte{testData: []byte("hello")},
		want:    map[gvinst.Reg]uint64{rcx: 0, rsi: testData + 5, rdi: testData + 0x105},
		wantMem: map[uint64][]byte{testData + 0x100: []byte("hello")}},
	{name: "rep stosq",
		code:    "f348ab cc",
		regs:    map[gvinst.Reg]uint64{rax: 0x0101010101010101, rdi: testData + 0x200, rcx: 2},
		want:    map[gvinst.Reg]uint64{rcx: 0, rdi: testData + 0x210},
		wantMem: map[uint64][]byte{testData + 0x200: {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}},
	{name: "repne scasb strlen",
		code: "f2ae" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0, rdi: testData, rcx: ^uint64(0)},
		mem:  map[uint64][]byte{testData: []byte("abc\x00")},
		want: map[gvinst.Reg]uint64{rcx: ^uint64(0) - 4, rdi: testData + 4}, flagMask: fZF, flags: fZF},
	{name: "repe cmpsb",
		code: "f3a6" + flagsTail,
		regs: map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 0x10, rcx: 8},
		mem:  map[uint64][]byte{testData: []byte("abcd"), testData + 0x10: []byte("abxd")},
		want: map[gvinst.Reg]uint64{rcx: 5, rsi: testData + 3}, flagMask: fZF | fCF, flags: fCF},
	{name: "movsb lodsb stosw std",
		code:     "a4 fd ac 66ab fc" + flagsTail,
		regs:     map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 0x20, rax: 0xff00},
		mem:      map[uint64][]byte{testData: {7, 8}},
		want:     map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 0x1f, rax: 0xff08},
		wantMem:  map[uint64][]byte{testData + 0x20: {7, 0x08, 0xff}},
		flagMask: fDF, flags: 0},
	{name: "scasd cmpsq",
		code: "af 48a7" + flagsTail,
		regs: map[gvinst.Reg]uint64{rax: 0xffffffff00000002, rdi: testData, rsi: testData + 0x10},
		mem:  map[uint64][]byte{testData: {2, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}, testData + 0x10: {9, 0, 0, 0, 0, 0, 0, 0}},
		want: map[gvinst.Reg]uint64{rdi: testData + 12, rsi: testData + 0x18}, flagMask: fZF, flags: fZF},
	{name: "xlat",
		code: "d7 cc",
		regs: map[gvinst.Reg]uint64{rbx: testData, rax: 0x1103},
		mem:  map[uint64][]byte{testData: {10, 11, 12, 13}},
		want: map[gvinst.Reg]uint64{rax: 0x110d}},
	{name: "lahf",
		code: "31c0 f9 9f cc", // xor eax, eax (ZF PF); stc; lahf
		want: map[gvinst.Reg]uint64{rax: 0x4700}},
	{name: "sahf",
		code:     "b4d5 9e" + flagsTail,
		flagMask: fAll, flags: fCF | fPF | fAF | fZF | fSF},
	{name: "popf pushf",
		code:     "68d50c0000 9d" + flagsTail,
		flagMask: fAll | fDF, flags: fAll | fDF},
	{name: "cmc",
		code:     "f9 f5" + flagsTail,
		flagMask: fCF, flags: 0},
	{name: "fs load",
		code: "64488b042528000000 cc",
		regs: map[gvinst.Reg]uint64{gvinst.FSBase: testData},
		mem:  map[uint64][]byte{testData + 0x28: {1, 2, 3, 4, 5, 6, 7, 8}},
		want: map[gvinst.Reg]uint64{rax: 0x0807060504030201}},
	{name: "rip relative",
		code: "488b0501000000 cc 1122334455667788",
		want: map[gvinst.Reg]uint64{rax: 0x8877665544332211}},
	{name: "sib no base 32-bit disp negative",
		code: "8b04cdf8ffffff cc", // mov eax, [rcx*8-8]
		regs: map[gvinst.Reg]uint64{rcx: (testData + 8) / 8},
		mem:  map[uint64][]byte{testData: {4, 3, 2, 1}},
		want: map[gvinst.Reg]uint64{rax: 0x01020304}},
	{name: "jrcxz",
		code: "e302 b001 cc",
		regs: map[gvinst.Reg]uint64{rcx: 0, rax: 0},
		want: map[gvinst.Reg]uint64{rax: 0}},
	{name: "endbr64 nop",
		code: "f30f1efa 0f1f4000 6690 b801000000 cc",
		want: map[gvinst.Reg]uint64{rax: 1}},
	{name: "pxor pcmpeqb pmovmskb",
		code: "66480f6ec0 660f74c9 660fefc8 660fd7c1 cc",
		regs: map[gvinst.Reg]uint64{rax: 0x00ff00ff00ff00ff},
		want: map[gvinst.Reg]uint64{rax: 0xffaa, xlo(1): 0xff00ff00ff00ff00, xhi(1): ^uint64(0), xhi(0): 0}},
	{name: "movdqu load store",
		code:    "f30f6f16 f30f7f17 cc",
		regs:    map[gvinst.Reg]uint64{rsi: testData, rdi: testData + 0x40},
		mem:     map[uint64][]byte{testData: []byte("0123456789abcdef")},
		want:    map[gvinst.Reg]uint64{xlo(2): 0x3736353433323130, xhi(2): 0x6665646362613938},
		wantMem: map[uint64][]byte{testData + 0x40: []byte("0123456789abcdef")}},
	{name: "movsd load zeroes movss merges",
		code: "f20f1006 f30f10c1 cc",
		regs: map[gvinst.Reg]uint64{rsi: testData, xlo(0): 1, xhi(0): 2, xlo(1): 0xaaaaaaaabbbbbbbb, xhi(1): 3},
		mem:  map[uint64][]byte{testData: {1, 2, 3, 4, 5, 6, 7, 8}},
		want: map[gvinst.Reg]uint64{xlo(0): 0x08070605bbbbbbbb, xhi(0): 0}},
	{name: "addsd",
		code: "66480f6ec0 66480f6ec9 f20f58c1 66480f7ec0 cc",
		regs: map[gvinst.Reg]uint64{rax: 0x3ff8000000000000, rcx: 0x4002000000000000}, // 1.5, 2.25
		want: map[gvinst.Reg]uint64{rax: 0x400e000000000000}},                         // 3.75
	{name: "cvtsi2sd cvttsd2si",
		code: "f2480f2ac0 f20f2cc8 cc",
		regs: map[gvinst.Reg]uint64{rax: ^uint64(6), rcx: ^uint64(0)},
		want: map[gvinst.Reg]uint64{xlo(0): 0xc01c000000000000, rcx: 0xfffffff9}},
	{name: "ucomisd less",
		code:     "660f2ec1" + flagsTail,
		regs:     map[gvinst.Reg]uint64{xlo(0): 0x3ff0000000000000, xlo(1): 0x4000000000000000},
		flagMask: fAll, flags: fCF},
	{name: "ucomisd unordered",
		code:     "660f2ec1" + flagsTail,
		regs:     map[gvinst.Reg]uint64{xlo(0): 0x7ff8000000000000, xlo(1): 0x4000000000000000},
		flagMask: fAll, flags: fCF | fZF | fPF},
	{name: "pshufd punpcklbw psrldq",
		code: "660f70c11b 660f60d3 660f73da08 cc", // pshufd xmm0, xmm1, 0x1b; punpcklbw xmm2, xmm3; psrldq xmm2, 8
		regs: map[gvinst.Reg]uint64{xlo(1): 0x0000000200000001, xhi(1): 0x0000000400000003, xlo(2): 0x0706050403020100, xlo(3): 0x1716151413121110},
		want: map[gvinst.Reg]uint64{xlo(0): 0x0000000300000004, xhi(0): 0x0000000100000002, xlo(2): 0x1707160615051404, xhi(2): 0}},
	{name: "ptest",
		code:     "660f3817c1" + flagsTail,
		regs:     map[gvinst.Reg]uint64{xlo(0): 0xf0, xlo(1): 0x0f},
		flagMask: fAll, flags: fZF},
	{name: "pinsrw pextrb movmskps",
		code: "660fc4c005 660f3a14c00b 0f50c9 cc", // pinsrw xmm0, eax, 5; pextrb eax, xmm0, 11; movmskps ecx, xmm1
		regs: map[gvinst.Reg]uint64{rax: 0xabcd, xhi(1): 0x8000000000000000},
		want: map[gvinst.Reg]uint64{xhi(0): 0xabcd0000, rax: 0xab, rcx: 8}},
}

func TestExec(t *testing.T) {
	for _, c := range execCases {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

// crc32cUpdate is the crc32 instruction's update of crc with p, computed
// with the standard library's table (Castagnoli, reflected): the
// instruction has no pre- or post-inversion, hash/crc32's Update has both.
func crc32cUpdate(crc uint32, p []byte) uint64 {
	return uint64(^crc32.Update(^crc, crc32.MakeTable(crc32.Castagnoli), p))
}
