package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// gemmKJ is the k-j sub-nest of gemm for one i, as gcc -O2 shapes it:
// for k { a = alpha*A[k]; for j: C[j] += a*B[k][j] }. k (s3, a byte
// offset into A) carries C from one row to the next; j (s2, a byte offset)
// is parallel. A, the B row of k, C in s6, s9, s8; the row size in bytes
// in s10, n*8 in s12; alpha in x3.
const gemmKJ = `
vblock 0x4000..0x4010:
  # 0x4000: movsd xmm1, [rsi+rcx]; mulsd xmm1, xmm3; xor edx, edx
  GET.u64 v0, s6
  GET.u64 v1, s3
  ADD.u64 v2, v0, v1
  LD.f64 v3, v2(0)
  GET.f64 v4, x3
  MUL.f64 v5, v3, v4
  PUT.f64 x1, v5
  LI.u64 v6, 0
  PUT.u64 s2, v6
  JMP 0x4010
vblock 0x4010..0x4030:
  # 0x4010: movsd xmm0, [r9+rdx]; mulsd xmm0, xmm1; addsd xmm0, [r8+rdx]; movsd [r8+rdx], xmm0
  GET.u64 v0, s9
  GET.u64 v1, s2
  ADD.u64 v2, v0, v1
  LD.f64 v3, v2(0)
  GET.f64 v4, x1
  MUL.f64 v5, v3, v4
  GET.u64 v6, s8
  ADD.u64 v7, v6, v1
  LD.f64 v8, v7(0)
  ADD.f64 v9, v5, v8
  ST.f64 v7(0), v9
  PUT.f64 x0, v9
  # 0x4020: add rdx, 8; cmp rdx, r10; jne
  ADD.u64 v10, v1, 8
  PUT.u64 s2, v10
  GET.u64 v11, s10
  CMP.ne.u64 v12, v10, v11
  BRANCH v12, 0x4010, 0x4030
vblock 0x4030..0x4040:
  # 0x4030: add rcx, 8; add r9, r10; cmp rcx, r12; jne
  GET.u64 v0, s3
  ADD.u64 v1, v0, 8
  PUT.u64 s3, v1
  GET.u64 v2, s9
  GET.u64 v3, s10
  ADD.u64 v4, v2, v3
  PUT.u64 s9, v4
  GET.u64 v5, s12
  CMP.ne.u64 v6, v1, v5
  BRANCH v6, 0x4000, 0x4100
vblock 0x4100..0x4102:
  # 0x4100: syscall
  SYSCALL 0x4102
`

// TestKernelInterchanged runs gemm's k-j nest with k inside each thread
// and j on the grid on gpusim, and compares C with the CPU engine's bit
// for bit: every element is updated in k order, as on the CPU.
func TestKernelInterchanged(t *testing.T) {
	for _, even := range []bool{false, true} {
		t.Run(map[bool]string{false: "any rows", true: "even rows"}[even], func(t *testing.T) { testInterchanged(t, even) })
	}
}

// testInterchanged is TestKernelInterchanged with the kernel for any rows
// or for even ones (Nest.Even): that one's row loop must come out hoisted
// and unrolled, C[j] in a register, and it must refuse rows that are not
// even.
func testInterchanged(t *testing.T, even bool) {
	const n = 40
	bs := parseBlocks(t, gemmKJ)
	nest := &Nest{Header: 0x4000, Inner: 0x4010, Interchange: true, Even: even, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x4010: true}}
	for _, a := range []uint64{0x4000, 0x4010, 0x4030} {
		nest.Blocks[a] = bs[a]
	}
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Interchanged {
		t.Fatal("not an interchanged kernel")
	}
	if _, err := ptx.Parse(k.PTX); err != nil {
		t.Fatalf("%v\n%s", err, numbered(k.PTX))
	}
	setup := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 26)
		if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%13)*0.3-1))
			_ = mem.Store(dataBase+0x20000+uint64(8*i), 8, math.Float64bits(float64(i%5)/7+0.1))
		}
		for i := 0; i < n*n; i++ {
			_ = mem.Store(dataBase+0x10000+uint64(8*i), 8, math.Float64bits(float64(i%7)/3))
		}
		cpu := &gvinst.CPU{PC: 0x4000}
		cpu.State[gvinst.SReg(6)] = dataBase
		cpu.State[gvinst.SReg(9)] = dataBase + 0x10000
		cpu.State[gvinst.SReg(8)] = dataBase + 0x20000
		cpu.State[gvinst.SReg(10)] = n * 8
		cpu.State[gvinst.SReg(12)] = n * 8
		cpu.State[gvinst.XReg(3)] = math.Float64bits(1.5)
		cpu.State[gvinst.MXCSR] = 0x1f80
		return mem, cpu
	}
	refMem, refCPU := setup()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

	// Rows 0 and 1 on the CPU (their states give the steps), rows
	// 1..count on the GPU, the rest on the CPU again.
	mem, cpu := setup()
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x4000: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	count := uint64(n - 4)
	in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n, InnerMax: n}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(2) {
			step = 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
	}
	for _, s := range k.Sites {
		// A, B and C apart: three device buffers.
		switch {
		case s.Block == 0x4000:
			in.Sites = append(in.Sites, Range{dataBase, dataBase + 8*n})
		case s.Index == 3:
			in.Sites = append(in.Sites, Range{dataBase + 0x10000, dataBase + 0x10000 + 8*n*n})
		default:
			in.Sites = append(in.Sites, Range{dataBase + 0x20000, dataBase + 0x20000 + 8*n})
		}
	}
	if even && (!strings.Contains(k.PTX, "_unroll:") || !strings.Contains(k.PTX, "%hcd0")) {
		t.Errorf("the even kernel's row loop is not unrolled with C[j] in a register:\n%s", numbered(k.PTX))
	}
	if u := unrolledLoop(k.PTX); even && (strings.Count(u, "bra ") != 1 || !regexp.MustCompile(`_unroll:\n(\s*(ld\.global|mad\.wide)[^\n]*\n){11}\s*//`).MatchString(u)) {
		// The check that the level does not end before the count runs
		// once, before the copies (rowChecks); then all eight loads
		// lead the copies (hoistLoads).
		t.Errorf("the even kernel's copies branch, or do not start with their loads:\n%s", u)
	}
	ctx, fn := simKernel(t, k)
	if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
		t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
	}
	for i, l := range k.LiveIns {
		setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
	}
	runToSyscall(t, e, cpu)
	want, got := make([]byte, 8*n), make([]byte, 8*n)
	_ = refMem.Read(dataBase+0x20000, want)
	_ = mem.Read(dataBase+0x20000, got)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("C differs first at byte %d (element %d)", i, i/8)
			}
		}
	}
	// A wrong inner trip count is caught by the kernel.
	mem2, _ := setup()
	bad := in
	bad.InnerTrip0--
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, mem2, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit {
		t.Errorf("inner trip count one short: got %v, want an exit error", err)
	}
	if even {
		// More rows than the level has left: the row check, which the
		// copies leave out, must still end the launch (the loop runs as
		// it was where the level would end within the copies).
		mem4, _ := setup()
		long := in
		long.Count = n
		long.Sites = nil
		for range k.Sites {
			long.Sites = append(long.Sites, Range{dataBase, dataBase + 0x40000})
		}
		if _, err := Launch(ctx, fn, k, mem4, long, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit || ke.X86 != 0x4030 {
			t.Errorf("rows past the level's end: got %v, want an exit error at the row check, 0x4030", err)
		}
		// Rows whose inner level is not even.
		mem3, _ := setup()
		bad := in
		bad.InnerStepRows = make([]uint64, len(k.InnerLiveIns))
		for i, l := range k.InnerLiveIns {
			if l.Written {
				bad.InnerStepRows[i] = 8
			}
		}
		if _, err := Launch(ctx, fn, k, mem3, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit {
			t.Errorf("uneven rows: got %v, want an exit error", err)
		}
	}
}

// TestInterchangeRefusals: an inner loop whose written value the level
// reads after it cannot be interchanged (each thread skips the other
// iterations).
func TestInterchangeRefusals(t *testing.T) {
	src := `
vblock 0x4000..0x4010:
  LI.u64 v0, 0
  PUT.u64 s2, v0
  JMP 0x4010
vblock 0x4010..0x4020:
  GET.u64 v1, s2
  ADD.u64 v2, v1, 8
  PUT.u64 s2, v2
  GET.u64 v3, s10
  CMP.ne.u64 v4, v2, v3
  BRANCH v4, 0x4010, 0x4030
vblock 0x4030..0x4040:
  GET.u64 v0, s3
  GET.u64 v5, s2
  ADD.u64 v1, v0, v5
  PUT.u64 s3, v1
  GET.u64 v2, s12
  CMP.ne.u64 v6, v1, v2
  BRANCH v6, 0x4000, 0x4100
vblock 0x4100..0x4102:
  SYSCALL 0x4102
`
	bs := parseBlocks(t, src)
	nest := &Nest{Header: 0x4000, Inner: 0x4010, Interchange: true, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x4010: true}}
	for _, a := range []uint64{0x4000, 0x4010, 0x4030} {
		nest.Blocks[a] = bs[a]
	}
	if _, err := Generate(nest); !errors.Is(err, ErrNotOffloadable) {
		t.Fatalf("got %v, want a refusal (s2 is read after the inner loop)", err)
	}
}
