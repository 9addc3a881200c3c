package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// gemmIKJ is gemm's product as gcc -O2 shapes it, whole: for i { for k {
// a = alpha*A[i][k]; for j: C[i][j] += a*B[k][j] } }. The i level (0x3000)
// starts k (s3, a byte offset into A's row) at 0 and B's row (s9) at B
// (s14); the k loop is gemmKJ's (0x4000..0x4030); the i latch (0x4040)
// moves A's row (s6) by s12, C's row (s8) by s10 and counts i in s11 up to
// s13.
var gemmIKJ = `
vblock 0x3000..0x3010:
  LI.u64 v0, 0
  PUT.u64 s3, v0
  GET.u64 v1, s14
  PUT.u64 s9, v1
  JMP 0x4000
` + gemmKJBlocks + `
vblock 0x4040..0x4050:
  GET.u64 v0, s6
  GET.u64 v1, s12
  ADD.u64 v2, v0, v1
  PUT.u64 s6, v2
  GET.u64 v3, s8
  GET.u64 v4, s10
  ADD.u64 v5, v3, v4
  PUT.u64 s8, v5
  GET.u64 v6, s11
  ADD.u64 v7, v6, 1
  PUT.u64 s11, v7
  GET.u64 v8, s13
  CMP.ne.u64 v9, v7, v8
  BRANCH v9, 0x3000, 0x4100
`

// gemmKJBlocks are gemmKJ's k loop, leaving to the i latch at 0x4040.
var gemmKJBlocks = strings.Replace(gemmKJ[:strings.Index(gemmKJ, "vblock 0x4100")], "BRANCH v6, 0x4000, 0x4100", "BRANCH v6, 0x4000, 0x4040", 1) +
	"vblock 0x4100..0x4102:\n  SYSCALL 0x4102\n"

// TestKernelThreadLoop runs gemm's i-k-j product as the schedule's grid
// (i, j) with k in each thread (Nest.ThreadLoop) on gpusim, and compares
// C with the CPU engine's bit for bit; the thread loop must come out as
// one block with its checks at its entry and unrolled, C[i][j] in a register
// where the kernel can prove no other access touches it; a wrong inner trip count is caught.
func TestKernelThreadLoop(t *testing.T) {
	const ni, nj, nk = 12, 24, 20
	bs := parseBlocks(t, gemmIKJ)
	nest := &Nest{Header: 0x3000, Inner: 0x4010, ThreadLoop: 0x4000, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x4010: true}}
	for _, a := range []uint64{0x3000, 0x4000, 0x4010, 0x4030, 0x4040} {
		nest.Blocks[a] = bs[a]
	}
	k, err := Generate(nest)
	if err != nil {
		t.Fatal(err)
	}
	if !k.ThreadLoop || !k.TwoD {
		t.Fatal("not a 2D kernel with a thread loop")
	}
	if _, err := ptx.Parse(k.PTX); err != nil {
		t.Fatalf("%v\n%s", err, numbered(k.PTX))
	}
	if !strings.Contains(k.PTX, "$Lx4000_unroll:") || strings.Contains(k.PTX, "$Lx4010:") || !strings.Contains(k.PTX, "%hcd0") {
		t.Errorf("the thread loop is not one hoisted, unrolled block:\n%s", numbered(k.PTX))
	}
	const (
		aBase = dataBase
		bBase = dataBase + 0x10000
		cBase = dataBase + 0x20000
	)
	setup := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 26)
		if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < ni*nk; i++ {
			_ = mem.Store(aBase+uint64(8*i), 8, math.Float64bits(float64(i%13)*0.3-1))
		}
		for i := 0; i < nk*nj; i++ {
			_ = mem.Store(bBase+uint64(8*i), 8, math.Float64bits(float64(i%7)/3))
		}
		for i := 0; i < ni*nj; i++ {
			_ = mem.Store(cBase+uint64(8*i), 8, math.Float64bits(float64(i%5)/7+0.1))
		}
		cpu := &gvinst.CPU{PC: 0x3000}
		cpu.State[gvinst.SReg(6)] = aBase
		cpu.State[gvinst.SReg(8)] = cBase
		cpu.State[gvinst.SReg(14)] = bBase
		cpu.State[gvinst.SReg(10)] = nj * 8
		cpu.State[gvinst.SReg(12)] = nk * 8
		cpu.State[gvinst.SReg(13)] = ni
		cpu.State[gvinst.XReg(3)] = math.Float64bits(1.5)
		cpu.State[gvinst.MXCSR] = 0x1f80
		return mem, cpu
	}
	refMem, refCPU := setup()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

	// Rows 0 and 1 on the CPU (their states give the steps), rows
	// 1..count on the GPU, the rest on the CPU again.
	mem, cpu := setup()
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x3000: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	count := uint64(ni - 3)
	in := LaunchInput{Count: count, Values: states[1], InnerTrip0: nj, InnerMax: nj}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(2) {
			step = 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
		in.InnerStepRows = append(in.InnerStepRows, 0)
	}
	// A, B and C apart: three device buffers, C[i][j] kept in a register
	// through the k loop (unroll.go's promotion).
	for _, s := range k.Sites {
		switch {
		case s.Block == 0x4000:
			in.Sites = append(in.Sites, Range{aBase, aBase + 8*ni*nk})
		case s.Block == 0x4010 && s.Index == 3:
			in.Sites = append(in.Sites, Range{bBase, bBase + 8*nk*nj})
		default:
			in.Sites = append(in.Sites, Range{cBase, cBase + 8*ni*nj})
		}
	}
	// All in one range: one buffer, so the kernel cannot rule out that a
	// load of A or B reads C[i][j]; the loop keeps loading and storing it.
	oneGroup := in
	oneGroup.Sites = nil
	for range k.Sites {
		oneGroup.Sites = append(oneGroup.Sites, Range{dataBase, dataBase + 0x30000})
	}
	ctx, fn := simKernel(t, k)
	// Per thread: the prologue (live-in values, the thread loop's entry
	// checks) about 170 instructions, then per k step about 9 with C[i][j]
	// in a register (nvcc's reference kernel: 8 to 10); without, the loop
	// runs as hoist.go left it, not unrolled (about 15).
	for _, c := range []struct {
		name string
		in   LaunchInput
		per  uint64
	}{{"three buffers", in, 10}, {"one buffer", oneGroup, 16}} {
		mem, cpu := setup()
		e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x3000: true}})
		for s := 0; s < 2; s++ {
			if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
				t.Fatalf("expected a breakpoint, got %v", st)
			}
		}
		if _, err := Launch(ctx, fn, k, mem, c.in, nil); err != nil {
			t.Fatalf("%s: launch: %v\n%s", c.name, err, numbered(k.PTX))
		}
		if per := ctx.LastLaunchStats().ThreadInstructions / (count * nj); per > 200+c.per*nk {
			t.Errorf("%s: %d thread instructions per thread for %d k steps, want at most %d", c.name, per, nk, 200+c.per*nk)
		}
		for i, l := range k.LiveIns {
			setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
		}
		runToSyscall(t, e, cpu)
		want, got := make([]byte, 8*ni*nj), make([]byte, 8*ni*nj)
		_ = refMem.Read(cBase, want)
		_ = mem.Read(cBase, got)
		if !bytes.Equal(want, got) {
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("%s: C differs first at byte %d (element %d)", c.name, i, i/8)
				}
			}
		}
	}
	// A wrong inner trip count is caught by the kernel, one short or
	// one long; a footprint that misses C's last row by its entry check.
	var ke *KernelError
	for _, d := range []int{-1, 1} {
		mem2, _ := setup()
		bad := in
		bad.InnerTrip0 = uint64(int(nj) + d)
		bad.InnerMax = max(bad.InnerTrip0, nj)
		if _, err := Launch(ctx, fn, k, mem2, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit {
			t.Errorf("inner trip count %+d: got %v, want an exit error", d, err)
		}
	}
	mem3, _ := setup()
	bad := in
	bad.Sites = append([]Range(nil), in.Sites...)
	for i, s := range k.Sites {
		if s.Store {
			bad.Sites[i] = Range{cBase, cBase + 8*count*nj} // rows 0..count-1: not the last the GPU runs
		}
	}
	if _, err := Launch(ctx, fn, k, mem3, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
		t.Errorf("C's footprint a row short: got %v, want a footprint error", err)
	}
}
