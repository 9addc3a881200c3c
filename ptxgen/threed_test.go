package ptxgen

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// stencil3D is out[i][j][k] = A[i][j][k]² + x4 over an n×n×n cube of
// doubles, shaped as gcc -O2 does (rotated loops): i in s1 (plane
// offset in bytes), j in s2 (row offset), k in s3 (byte offset); A and
// out in s6 and s8, the row size in bytes in s9, the plane size in s10,
// the cube's in s11; j runs to s12, which the i latch advances by s13
// (n rows: square; one row more per plane: triangular). x4 is 0 at k = 0
// and then the A element before: a register the innermost level carries
// that holds a load (a reload of depth 1, as heat3d's A[i][j][k-1]).
const stencil3D = `
vblock 0x4000..0x4010:
  # 0x4000: xor edx, edx
  LI.u64 v0, 0
  PUT.u64 s2, v0
  JMP 0x4010
vblock 0x4010..0x4020:
  # 0x4010: xor ecx, ecx; pxor xmm4, xmm4
  LI.u64 v0, 0
  PUT.u64 s3, v0
  PUT.u64 x4, v0
  PUT.u64 x5, v0
  JMP 0x4020
vblock 0x4020..0x4040:
  # 0x4020: movsd xmm0, [rsi+rbx+rdx+rcx]
  GET.u64 v0, s1
  GET.u64 v1, s2
  GET.u64 v2, s3
  GET.u64 v3, s6
  ADD.u64 v4, v3, v0
  ADD.u64 v5, v4, v1
  ADD.u64 v6, v5, v2
  LD.f64 v7, v6(0)
  # 0x4024: mulsd xmm0, xmm0
  MUL.f64 v8, v7, v7
  # 0x4028: addsd xmm0, xmm4
  GET.f64 v9, x4
  ADD.f64 v10, v8, v9
  # 0x402c: movsd [r8+rbx+rdx+rcx], xmm0
  GET.u64 v11, s8
  ADD.u64 v12, v11, v0
  ADD.u64 v13, v12, v1
  ADD.u64 v14, v13, v2
  ST.f64 v14(0), v10
  # 0x4030: movq xmm4, xmm7 (the A element, for the next k)
  PUT.u64 x4, v7
  LI.u64 v18, 0
  PUT.u64 x5, v18
  # 0x4034: add rcx, 8; cmp rcx, r9; jne
  ADD.u64 v15, v2, 8
  PUT.u64 s3, v15
  GET.u64 v16, s9
  CMP.ne.u64 v17, v15, v16
  BRANCH v17, 0x4020, 0x4040
vblock 0x4040..0x4050:
  # 0x4040: add rdx, r9; cmp rdx, r12; jne
  GET.u64 v0, s2
  GET.u64 v1, s9
  ADD.u64 v2, v0, v1
  PUT.u64 s2, v2
  GET.u64 v3, s12
  CMP.ne.u64 v4, v2, v3
  BRANCH v4, 0x4010, 0x4050
vblock 0x4050..0x4060:
  # 0x4050: add rbx, r10; add r12, r13; cmp rbx, r11; jne
  GET.u64 v0, s1
  GET.u64 v1, s10
  ADD.u64 v2, v0, v1
  PUT.u64 s1, v2
  GET.u64 v3, s12
  GET.u64 v4, s13
  ADD.u64 v5, v3, v4
  PUT.u64 s12, v5
  GET.u64 v6, s11
  CMP.ne.u64 v7, v2, v6
  BRANCH v7, 0x4000, 0x4100
vblock 0x4100..0x4102:
  # 0x4100: syscall
  SYSCALL 0x4102
`

// stencil3DNest is stencil3D's i level with j as Inner and k as Inner2.
func stencil3DNest(bs blockSet) *Nest {
	nest := &Nest{Header: 0x4000, Inner: 0x4010, Inner2: 0x4020, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks:  map[uint64]bool{0x4010: true, 0x4020: true, 0x4040: true},
		Inner2Blocks: map[uint64]bool{0x4020: true},
		Reloads: []Reload{{Slot: gvinst.XReg(4), Inner: true, Inner2: true, Depth: 1, HighZero: true, Size: 8, Disp: -8, X86: 0x4020,
			Terms: []AddrTerm{{gvinst.SReg(6), 1}, {gvinst.SReg(1), 1}, {gvinst.SReg(2), 1}, {gvinst.SReg(3), 1}}}}}
	for _, a := range []uint64{0x4000, 0x4010, 0x4020, 0x4040, 0x4050} {
		nest.Blocks[a] = bs[a]
	}
	return nest
}

// TestKernel3D runs stencil3D with (i, j, k) mapped to (z, y, x) on
// gpusim and compares with the CPU engine, for a square and a
// triangular j range, with 12 innermost iterations (a thread each) and
// 70 (runs of two a thread: LaunchPlan.Run3D); a wrong innermost or inner
// trip count fails the launch.
func TestKernel3D(t *testing.T) {
	for _, c := range []struct {
		n   uint64
		tri bool
	}{{12, false}, {12, true}, {70, false}, {70, true}} {
		n, tri := c.n, c.tri
		name := fmt.Sprintf("square%d", n)
		if tri {
			name = fmt.Sprintf("triangular%d", n)
		}
		t.Run(name, func(t *testing.T) {
			bs := parseBlocks(t, stencil3D)
			k, err := Generate(stencil3DNest(bs))
			if err != nil {
				t.Fatal(err)
			}
			if !k.ThreeD || !k.TwoD {
				t.Fatal("not a 3D kernel")
			}
			if _, err := ptx.Parse(k.PTX); err != nil {
				t.Fatalf("%v\n%s", err, numbered(k.PTX))
			}
			for _, want := range []string{"%ctaid.z", "$Linner2_entry", "i2trip"} {
				if !strings.Contains(k.PTX, want) {
					t.Errorf("the kernel has no %s", want)
				}
			}
			if want := map[uint64]uint64{12: 1, 70: 2}[n]; k.Plan.Run3D(n-4, n, n) != want {
				t.Errorf("runs of %d innermost iterations of %d, want %d", k.Plan.Run3D(n-4, n, n), n, want)
			}
			runStencil3D(t, bs, k, n, tri)
		})
	}
}

// runStencil3D runs stencil3D's kernel k (its blocks bs) over planes
// 2..n-3 of an n×n×n cube (a triangular j range with tri) on gpusim and
// compares out with the CPU engine's; then checks that wrong trip counts
// and a wrong innermost step fail the launch.
func runStencil3D(t *testing.T, bs blockSet, k *Kernel, n uint64, tri bool) {
	// Each array's bytes, a whole number of pages.
	size := (n*n*n*8 + 0xffff) &^ 0xffff
	setup := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 26)
		if err := mem.Map(dataBase, size*2, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < n*n*n; i++ {
			_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%13)*0.3-1))
		}
		cpu := &gvinst.CPU{PC: 0x4000}
		cpu.State[gvinst.SReg(6)] = dataBase
		cpu.State[gvinst.SReg(8)] = dataBase + size
		cpu.State[gvinst.SReg(9)] = n * 8
		cpu.State[gvinst.SReg(10)] = n * n * 8
		cpu.State[gvinst.SReg(11)] = n * n * n * 8
		cpu.State[gvinst.SReg(12)] = n * n * 8
		if tri {
			cpu.State[gvinst.SReg(12)], cpu.State[gvinst.SReg(13)] = n*8, n*8
		}
		cpu.State[gvinst.MXCSR] = 0x1f80
		return mem, cpu
	}
	refMem, refCPU := setup()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

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
	count := uint64(n - 4) // planes 2..n-3; the CPU runs the last two
	in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n, InnerMax: n, Inner2Trip: n}
	if tri {
		in.InnerTrip0, in.InnerTripStep = 3, 1 // plane 0 is i = 2: j = 0, 1, 2
	}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(2) {
			step = n * 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
	}
	for _, l := range k.Inner2LiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(3) {
			step = 8
		}
		in.Inner2Steps = append(in.Inner2Steps, step)
	}
	for range k.Sites {
		in.Sites = append(in.Sites, Range{dataBase, dataBase + 2*size})
	}
	ctx, fn := simKernel(t, k)
	if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
		t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
	}
	for i, l := range k.LiveIns {
		setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
	}
	runToSyscall(t, e, cpu)
	want, got := make([]byte, size), make([]byte, size)
	_ = refMem.Read(dataBase+size, want)
	_ = mem.Read(dataBase+size, got)
	if !bytes.Equal(want, got) {
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("out differs first at byte %d (element %d)", i, i/8)
			}
		}
	}
	// Wrong trip counts are caught by the kernel.
	for _, c := range []struct {
		what string
		edit func(*LaunchInput)
	}{
		{"innermost trip count one short", func(in *LaunchInput) { in.Inner2Trip-- }},
		{"innermost trip count one long", func(in *LaunchInput) { in.Inner2Trip++ }},
		{"inner trip count one long", func(in *LaunchInput) { in.InnerTrip0++; in.InnerMax++ }},
		{"inner trip count one short", func(in *LaunchInput) { in.InnerTrip0-- }},
	} {
		bad := in
		c.edit(&bad)
		m, _ := setup()
		var ke *KernelError
		if _, err := Launch(ctx, fn, k, m, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeExit {
			t.Errorf("%s: got %v, want a wrong trip count", c.what, err)
		}
	}
	// A wrong innermost step: the threads' iterations do not
	// advance by it (or the last one does not leave).
	bad := in
	bad.Inner2Steps = append([]uint64(nil), in.Inner2Steps...)
	for i, l := range k.Inner2LiveIns {
		if !l.Stack && l.Slot == gvinst.SReg(3) {
			bad.Inner2Steps[i] = 16
		}
	}
	m, _ := setup()
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, m, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeStep && ke.Code != ErrCodeExit {
		t.Errorf("a wrong innermost step: got %v, want a step or trip count error", err)
	}
}

// TestKernel3DRejects: what the 3D kernel cannot map is refused with a
// reason.
func TestKernel3DRejects(t *testing.T) {
	bs := parseBlocks(t, stencil3D)
	for _, c := range []struct {
		what string
		edit func(*Nest)
		want string
	}{
		{"the innermost header outside the inner level", func(n *Nest) { n.Inner2 = 0x4050; n.Inner2Blocks = map[uint64]bool{0x4050: true} }, "not a block of the inner level"},
		{"an interchanged nest", func(n *Nest) { n.Interchange = true }, "plain 2D nest"},
		{"the inner header as the innermost", func(n *Nest) { n.Inner2 = 0x4010; n.Inner2Blocks = map[uint64]bool{0x4010: true} }, "not a block of the inner level"},
	} {
		n := stencil3DNest(bs)
		c.edit(n)
		_, err := Generate(n)
		if err == nil || !errors.Is(err, ErrNotOffloadable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.what, err, c.want)
		}
	}
	// An inner body that divides: each innermost iteration's thread
	// would repeat the division.
	src := strings.Replace(stencil3D, "  PUT.u64 x5, v0\n  JMP 0x4020\n", "  PUT.u64 x5, v0\n  GET.u64 v1, s9\n  DIV.u64 v2, v1, v1\n  PUT.u64 s4, v2\n  JMP 0x4020\n", 1)
	if src == stencil3D {
		t.Fatal("the dividing variant did not apply")
	}
	if _, err := Generate(stencil3DNest(parseBlocks(t, src))); err == nil || !strings.Contains(err.Error(), "inner body divides") {
		t.Errorf("an inner body that divides: got %v, want it refused", err)
	}
}
