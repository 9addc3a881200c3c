package ptxgen

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// blockSet is a Translator over parsed blocks.
type blockSet map[uint64]*gvinst.VBlock

func (s blockSet) Translate(addr uint64) (*gvinst.VBlock, error) {
	b, ok := s[addr]
	if !ok {
		return nil, fmt.Errorf("no block at %#x", addr)
	}
	c := *b
	c.Insts = append([]gvinst.Inst(nil), b.Insts...)
	return &c, nil
}

func parseBlocks(t *testing.T, src string) blockSet {
	t.Helper()
	bs, err := gvinst.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	s := blockSet{}
	for _, b := range bs {
		if err := gvinst.Verify(b); err != nil {
			t.Fatalf("block %#x: %v", b.Addr, err)
		}
		s[b.Addr] = b
	}
	return s
}

// saxpyO2 is y[i] += x[i]*a as gcc -O2 shapes it: one rotated block, the
// byte offset in s0 as the induction variable, n*8 in s2.
const saxpyO2 = `
vblock 0x1000..0x1030:
  # 0x1000: movsd xmm1, qword ptr [rsi+rax]
  GET.u64 v0, s0
  GET.u64 v1, s6
  ADD.u64 v2, v1, v0
  LD.f64 v3, v2(0)
  # 0x1005: mulsd xmm1, xmm0
  GET.f64 v4, x0
  MUL.f64 v5, v3, v4
  # 0x1009: addsd xmm1, qword ptr [rdi+rax]
  GET.u64 v6, s7
  ADD.u64 v7, v6, v0
  LD.f64 v8, v7(0)
  ADD.f64 v9, v5, v8
  PUT.f64 x1, v9
  # 0x100e: movsd qword ptr [rdi+rax], xmm1
  ST.f64 v7(0), v9
  # 0x1013: add rax, 8
  ADD.u64 v10, v0, 8
  PUT.u64 s0, v10
  # 0x1017: cmp rax, rdx
  GET.u64 v11, s2
  FLAGS.sub.u64 v10, v11, v10, v10
  # 0x101a: jne 0x1000
  CMP.ne.u64 v12, v10, v11
  BRANCH v12, 0x1000, 0x1030
vblock 0x1030..0x1032:
  # 0x1030: syscall
  SYSCALL 0x1032
`

// intO0 is an -O0-style nest: i and n in stack slots, an inner sequential
// loop over j accumulating into a stack local, integer division, shifts,
// conversions and a square root.
const intO0 = `
vblock 0x2000..0x2010:
  # 0x2000: mov eax, [rbp-8]; cmp eax, [rbp-12]; jge 0x2100
  GET.u64 v0, s5
  LD.s32 v1, v0(-8)
  LD.s32 v2, v0(-12)
  CMP.lt.s32 v3, v1, v2
  BRANCH v3, 0x2010, 0x2100
vblock 0x2010..0x2020:
  # 0x2010: mov dword ptr [rbp-16], 0; mov dword ptr [rbp-20], 1
  GET.u64 v0, s5
  LI.u32 v1, 0
  ST.u32 v0(-16), v1
  LI.u32 v2, 1
  ST.u32 v0(-20), v2
  JMP 0x2020
vblock 0x2020..0x2030:
  # 0x2020: cmp dword ptr [rbp-16], 6; jg 0x2040
  GET.u64 v0, s5
  LD.s32 v1, v0(-16)
  CMP.le.s32 v2, v1, 6
  BRANCH v2, 0x2030, 0x2040
vblock 0x2030..0x2040:
  # 0x2030: inner body
  GET.u64 v0, s5
  LD.s32 v1, v0(-8)
  LD.s32 v2, v0(-16)
  LD.s32 v3, v0(-20)
  MUL.s32 v4, v3, 3
  MUL.s32 v5, v1, v2
  SAR.s32 v6, v1, 1
  XOR.s32 v7, v5, v6
  ADD.s32 v8, v2, 1
  DIV.s32 v9, v7, v8
  REM.s32 v13, v1, v8
  SUB.s32 v14, v9, v13
  ADD.s32 v10, v4, v14
  ST.u32 v0(-20), v10
  ADD.s32 v11, v2, 1
  ST.u32 v0(-16), v11
  # 0x2038: movzx, rol
  GET.u64 v20, s3
  LD.u8 v21, v20(-1)
  ROL.u8 v22, v21, v2
  MULHI.s16 v23, v22, v3
  PUT.u16 s9, v23
  JMP 0x2020
vblock 0x2040..0x2100:
  # 0x2040: out[i] = acc; out2[i] = sqrt((double)acc) / 3.0
  GET.u64 v0, s5
  LD.s32 v1, v0(-8)
  LD.s32 v2, v0(-20)
  CVT.rn.s64.s32 v3, v2
  CVT.rn.s64.s32 v4, v1
  SHL.u64 v5, v4, 3
  GET.u64 v6, s3
  ADD.u64 v7, v6, v5
  ST.u64 v7(0), v3
  CVT.dyn.f64.s32 v8, v2
  ABS.f64 v30, v8
  SQRT.f64 v9, v30
  LI.f64 v31, 4613937818241073152
  DIV.f64 v32, v9, v31
  CVT.rn.f32.f64 v33, v32
  CVT.rz.s32.f32 v34, v33
  MIN.s32 v35, v34, v1
  GET.u64 v10, s12
  ADD.u64 v11, v10, v5
  ST.f64 v11(0), v32
  ST.u32 v11(0x800), v35
  ADD.s32 v12, v1, 1
  ST.u32 v0(-8), v12
  JMP 0x2000
vblock 0x2100..0x2102:
  # 0x2100: syscall
  SYSCALL 0x2102
`

// unswitchedGuard is a level holding the register-only twin of an
// unswitched loop, as gcc -O2 leaves gemm's k loop (profile leaves such a
// twin out of the loop forest, so its blocks are the level's code). The
// guard at 0x3010 tests s13, which nothing in the level writes: non-zero,
// the real path stores 1.0 at row[0]; zero, the twin at 0x3040 advances
// s7 and s1 s14 times, branching back to the guard, a block of the level
// that is not its header. The latch then stores s7 at out[i].
const unswitchedGuard = `
vblock 0x3000..0x3010:
  # 0x3000: mov rdi, r9; xor ecx, ecx
  GET.u64 v0, s9
  PUT.u64 s7, v0
  LI.u64 v1, 0
  PUT.u64 s1, v1
  JMP 0x3010
vblock 0x3010..0x3020:
  # 0x3010: test r13, r13; je 0x3040
  GET.u64 v0, s13
  CMP.eq.u64 v1, v0, 0
  BRANCH v1, 0x3040, 0x3020
vblock 0x3020..0x3030:
  # 0x3020: the real path: row[0] = 1.0
  GET.u64 v0, s7
  LI.f64 v1, 4607182418800017408
  ST.f64 v0(0x1000), v1
  JMP 0x3050
vblock 0x3040..0x3050:
  # 0x3040: add rdi, 8; add rcx, 1; cmp rcx, r14; jne 0x3010
  GET.u64 v0, s7
  ADD.u64 v1, v0, 8
  PUT.u64 s7, v1
  GET.u64 v2, s1
  ADD.u64 v3, v2, 1
  PUT.u64 s1, v3
  GET.u64 v4, s14
  CMP.ne.u64 v5, v3, v4
  BRANCH v5, 0x3010, 0x3050
vblock 0x3050..0x3060:
  # 0x3050: out[i] = rdi; r9 += 8; r12 -= 1; jne 0x3000
  GET.u64 v0, s9
  GET.u64 v1, s7
  ST.u64 v0(0), v1
  ADD.u64 v2, v0, 8
  PUT.u64 s9, v2
  GET.u64 v3, s12
  SUB.u64 v4, v3, 1
  PUT.u64 s12, v4
  CMP.ne.u64 v5, v4, 0
  BRANCH v5, 0x3000, 0x3100
vblock 0x3100..0x3102:
  # 0x3100: syscall
  SYSCALL 0x3102
`

// loopCase is one nest to run on the CPU and on the simulated GPU.
type loopCase struct {
	name     string
	src      string
	header   uint64
	level    []uint64 // the level's blocks
	arrivals uint64   // header arrivals of the whole loop
	setup    func(mem *gvinst.Memory, cpu *gvinst.CPU)
	data     Range // the guest bytes the arrays live in
	// unchecked launches the kernel's Unchecked variant (runOnGPU).
	unchecked bool
}

const (
	dataBase  = 0x100000
	stackBase = 0x800000
)

func cases() []loopCase {
	return []loopCase{
		{
			name: "saxpyO2", src: saxpyO2, header: 0x1000, level: []uint64{0x1000}, arrivals: 300,
			setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
				for i := 0; i < 300; i++ {
					_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i)*0.1+1/3.0))
					_ = mem.Store(dataBase+0x1000+uint64(8*i), 8, math.Float64bits(float64(i*i)/7.0))
				}
				cpu.State[gvinst.S6] = dataBase
				cpu.State[gvinst.S7] = dataBase + 0x1000
				cpu.State[gvinst.S2] = 300 * 8
				cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
			},
			data: Range{dataBase, dataBase + 0x2000},
		},
		unswitchedCase("unswitchedTwinRuns", 0),
		unswitchedCase("unswitchedRealPath", 1),
		{
			name: "intO0", src: intO0, header: 0x2000, level: []uint64{0x2000, 0x2010, 0x2020, 0x2030, 0x2040}, arrivals: 201,
			setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
				cpu.State[gvinst.S5] = stackBase + 0x800
				cpu.State[gvinst.S4] = stackBase + 0x700
				_ = mem.Store(stackBase+0x800-8, 4, 0)
				_ = mem.Store(stackBase+0x800-12, 4, 200)
				cpu.State[gvinst.S3] = dataBase + 0x10
				_ = mem.Store(dataBase+0xf, 1, 0xb7)
				cpu.State[gvinst.SReg(12)] = dataBase + 0x1000
			},
			data: Range{dataBase, dataBase + 0x2000},
		},
	}
}

// unswitchedCase runs unswitchedGuard over 100 rows with s13 = guard: 0
// takes the twin's back edge to the guard 5 times in every thread.
func unswitchedCase(name string, guard uint64) loopCase {
	return loopCase{
		name: name, src: unswitchedGuard, header: 0x3000, level: []uint64{0x3000, 0x3010, 0x3020, 0x3040, 0x3050}, arrivals: 100,
		setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
			cpu.State[gvinst.SReg(9)] = dataBase
			cpu.State[gvinst.SReg(12)] = 100
			cpu.State[gvinst.SReg(13)] = guard
			cpu.State[gvinst.SReg(14)] = 5
		},
		data: Range{dataBase, dataBase + 0x2000},
	}
}

func newGuest(t *testing.T, c loopCase) (*gvinst.Memory, *gvinst.CPU) {
	mem := gvinst.NewMemory(1 << 28)
	if err := mem.Map(dataBase, 0x8000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := mem.Map(stackBase, 0x1000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	cpu := &gvinst.CPU{PC: c.header}
	cpu.State[gvinst.MXCSR] = 0x1f80
	c.setup(mem, cpu)
	return mem, cpu
}

func runToSyscall(t *testing.T, e gvinst.Engine, cpu *gvinst.CPU) {
	t.Helper()
	for {
		st := e.Run(cpu, 0)
		switch st.Kind {
		case gvinst.StopSyscall:
			return
		case gvinst.StopBreakpoint:
			continue
		default:
			t.Fatalf("engine stopped: %v", st)
		}
	}
}

// liveValue reads live-in l in the given state.
func liveValue(mem *gvinst.Memory, cpu *gvinst.CPU, l LiveIn) uint64 {
	if !l.Stack {
		return cpu.State[l.Slot]
	}
	v, err := mem.Load(cpu.State[l.Base]+uint64(l.Disp), l.Size)
	if err != nil {
		panic(err)
	}
	return v
}

func setLive(mem *gvinst.Memory, cpu *gvinst.CPU, l LiveIn, v uint64) {
	if !l.Stack {
		cpu.State[l.Slot] = v
		return
	}
	if err := mem.Store(cpu.State[l.Base]+uint64(l.Disp), l.Size, v); err != nil {
		panic(err)
	}
}

// TestKernelsMatchCPU runs each nest on the CPU engine alone, and again
// with iterations 2..N-3 on gpusim, and compares memory and registers.
func TestKernelsMatchCPU(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			if k, err := runOnGPU(t, c, nil); err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
		})
	}
}

func numbered(s string) string {
	var sb strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&sb, "%4d %s\n", i+1, l)
	}
	return sb.String()
}

// simKernel loads k on a fresh gpusim context, closed when the test ends,
// and returns the context and the kernel's function; a kernel gpusim
// rejects fails the test with the numbered PTX.
func simKernel(t *testing.T, k *Kernel) (gpu.Context, gpu.Function) {
	t.Helper()
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctx.Close() })
	m, err := ctx.LoadModule(k.PTX)
	if err != nil {
		t.Fatalf("gpusim rejects the kernel: %v\n%s", err, numbered(k.PTX))
	}
	fn, err := m.Function(k.Name)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, fn
}
