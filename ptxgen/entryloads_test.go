package ptxgen

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// rowSums2D is out[i][j] = A[i][j] + A[i][j-1] for j ≥ 1 shaped as gcc
// -O2 writes a stencil: the row's first element is loaded before the j
// loop into xmm4 (movsd: the high lane zeroed), and each iteration
// leaves its A element there for the next (a reload of depth 1). i in s1
// (row offset in bytes), j in s3 (byte offset), A and out in s6 and s8,
// the row size in bytes in s9, the rows' in s11.
const rowSums2D = `
vblock 0x5000..0x5010:
  # 0x5000: movsd xmm4, [rsi+rbx]
  GET.u64 v0, s1
  GET.u64 v1, s6
  ADD.u64 v2, v1, v0
  LD.u64 v3, v2(0)
  LI.u64 v4, 0
  JOIN.b128 v5, v3, v4
  PUT.b128 x4, v5
  # 0x5008: mov ecx, 8
  LI.u64 v7, 8
  PUT.u64 s3, v7
  JMP 0x5010
vblock 0x5010..0x5030:
  # 0x5010: movsd xmm0, [rsi+rbx+rcx]
  GET.u64 v0, s1
  GET.u64 v1, s3
  GET.u64 v2, s6
  ADD.u64 v3, v2, v0
  ADD.u64 v4, v3, v1
  LD.f64 v5, v4(0)
  # 0x5014: movapd xmm1, xmm0; addsd xmm1, xmm4
  GET.f64 v6, x4
  ADD.f64 v7, v5, v6
  # 0x5018: movsd [r8+rbx+rcx], xmm1
  GET.u64 v8, s8
  ADD.u64 v9, v8, v0
  ADD.u64 v10, v9, v1
  ST.f64 v10(0), v7
  # 0x501c: movq xmm4, xmm0
  PUT.u64 x4, v5
  LI.u64 v11, 0
  PUT.u64 x5, v11
  # 0x5020: add rcx, 8; cmp rcx, r9; jne
  ADD.u64 v12, v1, 8
  PUT.u64 s3, v12
  GET.u64 v13, s9
  CMP.ne.u64 v14, v12, v13
  BRANCH v14, 0x5010, 0x5030
vblock 0x5030..0x5040:
  # 0x5030: add rbx, r9; cmp rbx, r11; jne
  GET.u64 v0, s1
  GET.u64 v1, s9
  ADD.u64 v2, v0, v1
  PUT.u64 s1, v2
  GET.u64 v3, s11
  CMP.ne.u64 v4, v2, v3
  BRANCH v4, 0x5000, 0x5100
vblock 0x5100..0x5102:
  # 0x5100: syscall
  SYSCALL 0x5102
`

// rowSums2DNest is rowSums2D's i level with j as the inner level and xmm4
// reloaded from A[i][j-1].
func rowSums2DNest(bs blockSet) *Nest {
	nest := &Nest{Header: 0x5000, Inner: 0x5010, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x5010: true},
		Reloads: []Reload{{Slot: gvinst.XReg(4), Inner: true, Depth: 1, HighZero: true, Size: 8, Disp: -8, X86: 0x5010,
			Terms: []AddrTerm{{gvinst.SReg(6), 1}, {gvinst.SReg(1), 1}, {gvinst.SReg(3), 1}}}}}
	for _, a := range []uint64{0x5000, 0x5010, 0x5030} {
		nest.Blocks[a] = bs[a]
	}
	return nest
}

// TestEntryLoads2D checks that the 2D kernel of a nest whose outer body
// loads a register the inner level reloads skips that load (and its
// footprint check) in the threads past the reload's depth, which load
// the register again, and keeps it in the others; then runs the kernel on
// gpusim against the CPU engine, with rows of 5 and 40 inner iterations
// (runs of several a thread at 40), and checks that a row's entry load
// is still checked: a footprint that leaves out A's first column fails
// the launch.
func TestEntryLoads2D(t *testing.T) {
	bs := parseBlocks(t, rowSums2D)
	k, err := Generate(rowSums2DNest(bs))
	if err != nil {
		t.Fatal(err)
	}
	if !k.TwoD {
		t.Fatal("not a 2D kernel")
	}
	if _, err := ptx.Parse(k.PTX); err != nil {
		t.Fatalf("%v\n%s", err, numbered(k.PTX))
	}
	// The entry load of xmm4 at 0x5000: skipped from inner iteration 1 on
	// (the reload's depth), its check inside the skipped part.
	skip := regexp.MustCompile(`setp\.ge\.u64 (%p\d+), %xi, 1;\s+@%p\d+ bra (\$Lentry5000_\d+);\s+sub\.u64 %t\d+, %r\d+, %sl0;(?s:.*?)ld\.global\.u64 [^\n]*\n(?:[^\n]*\n)?(\$Lentry5000_\d+):`)
	m := skip.FindStringSubmatch(k.PTX)
	if m == nil || m[2] != m[3] {
		t.Fatalf("no skipped entry load of xmm4 in the 2D kernel\n%s", numbered(k.PTX))
	}
	if strings.Count(k.PTX, "$Lentry") != 2 {
		t.Errorf("%d entry-load labels, want the one load's branch and label", strings.Count(k.PTX, "$Lentry"))
	}
	// The inner body's own load of A[i][j] is not an entry load.
	if regexp.MustCompile(`\$Lentry5010`).MatchString(k.PTX) {
		t.Error("the inner body's load is skipped too")
	}
	for _, n := range []uint64{6, 41} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { runRowSums2D(t, bs, k, n) })
	}
}

// runRowSums2D runs rowSums2D's kernel k over an n×n array of doubles,
// rows 2..n-3 on the GPU, and compares out with the CPU engine's.
func runRowSums2D(t *testing.T, bs blockSet, k *Kernel, n uint64) {
	size := (n*n*8 + 0xffff) &^ 0xffff
	setup := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 26)
		if err := mem.Map(dataBase, size*2, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < n*n; i++ {
			_ = mem.Store(dataBase+8*i, 8, math.Float64bits(float64(i%11)*0.7-2))
		}
		cpu := &gvinst.CPU{PC: 0x5000}
		cpu.State[gvinst.SReg(6)] = dataBase
		cpu.State[gvinst.SReg(8)] = dataBase + size
		cpu.State[gvinst.SReg(9)] = n * 8
		cpu.State[gvinst.SReg(11)] = n * n * 8
		cpu.State[gvinst.MXCSR] = 0x1f80
		return mem, cpu
	}
	refMem, refCPU := setup()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)

	mem, cpu := setup()
	e := gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{Breakpoints: map[uint64]bool{0x5000: true}})
	var states [2][]uint64
	for s := 0; s < 2; s++ {
		if st := e.Run(cpu, 0); st.Kind != gvinst.StopBreakpoint {
			t.Fatalf("expected a breakpoint, got %v", st)
		}
		for _, l := range k.LiveIns {
			states[s] = append(states[s], liveValue(mem, cpu, l))
		}
	}
	// n-4 rows on the GPU from the second breakpoint's; the CPU runs the
	// rest.
	count := n - 4
	in := LaunchInput{Count: count, Values: states[1], InnerTrip0: n - 1, InnerMax: n - 1}
	for i := range k.LiveIns {
		in.Steps = append(in.Steps, states[1][i]-states[0][i])
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(3) {
			step = 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
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
	// The entry load is still checked, by each row's first thread: a
	// footprint for it that starts one element past the first launched
	// row's first element fails the launch.
	rowOffset := ^uint64(0)
	for i, l := range k.LiveIns {
		if !l.Stack && l.Slot == gvinst.SReg(1) {
			rowOffset = in.Values[i]
		}
	}
	if rowOffset == ^uint64(0) {
		t.Fatal("the row offset s1 is not a live-in")
	}
	bad := in
	bad.Sites = append([]Range(nil), in.Sites...)
	found := false
	for s, site := range k.Sites {
		if site.X86 == 0x5000 {
			bad.Sites[s].Lo, found = dataBase+rowOffset+8, true
		}
	}
	if !found {
		t.Fatal("no site at 0x5000")
	}
	m, _ := setup()
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, m, bad, nil); !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
		t.Errorf("a footprint without the first row's first element: got %v, want a footprint error", err)
	}
}

// TestEntryLoads3D runs stencil3D with xmm4 loaded from A[i][j][0]
// before the k loop (a load the innermost level's reload of A[i][j][k-1]
// makes again from k = 1 on) on gpusim against the CPU engine: the 3D
// kernel skips that load in its threads at k ≥ 1.
func TestEntryLoads3D(t *testing.T) {
	src := strings.Replace(stencil3D, `  LI.u64 v0, 0
  PUT.u64 s3, v0
  PUT.u64 x4, v0
  PUT.u64 x5, v0
  JMP 0x4020`, `  LI.u64 v0, 0
  PUT.u64 s3, v0
  GET.u64 v1, s1
  GET.u64 v2, s2
  GET.u64 v3, s6
  ADD.u64 v4, v3, v1
  ADD.u64 v5, v4, v2
  LD.f64 v6, v5(0)
  PUT.u64 x4, v6
  PUT.u64 x5, v0
  JMP 0x4020`, 1)
	if src == stencil3D {
		t.Fatal("the entry load variant did not apply")
	}
	bs := parseBlocks(t, src)
	k, err := Generate(stencil3DNest(bs))
	if err != nil {
		t.Fatal(err)
	}
	if !k.ThreeD {
		t.Fatal("not a 3D kernel")
	}
	if _, err := ptx.Parse(k.PTX); err != nil {
		t.Fatalf("%v\n%s", err, numbered(k.PTX))
	}
	if !regexp.MustCompile(`setp\.ge\.u64 %p\d+, %xi, 1;\s+@%p\d+ bra \$Lentry4010_\d+;`).MatchString(k.PTX) {
		t.Fatalf("no skipped entry load of xmm4 in the 3D kernel\n%s", numbered(k.PTX))
	}
	for _, n := range []uint64{12, 70} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { runStencil3D(t, bs, k, n, false) })
	}
}
