package ptxgen

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// saxpyLike is the saxpy loop of saxpyO2 with its second load and its
// store at an address from LOAD2ADDR (a register the loop computes), and
// with what the loop does between the load and the back edge replaced by
// MIDDLE.
const saxpyLike = `
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
  ADD.u64 v7, v6, LOAD2ADDR
  LD.f64 v8, v7(0)
  ADD.f64 v9, v5, v8
MIDDLE
  PUT.f64 x1, v9
  # 0x100e: movsd qword ptr [rdi+rax], xmm1
  ST.f64 v7(0), v9
  # 0x1013: add rax, 8
  ADD.u64 v10, v0, 8
  PUT.u64 s0, v10
  # 0x1017: cmp rax, rdx
  GET.u64 v11, s2
  # 0x101a: jne 0x1000
  CMP.ne.u64 v12, BRANCHON, v11
  BRANCH v12, 0x1000, 0x1030
vblock 0x1030..0x1032:
  # 0x1030: syscall
  SYSCALL 0x1032
`

// TestDataIndependent checks which kernels are data independent: those
// whose addresses, branches and trapping operations use no loaded value
// (saxpy, and one that divides loaded floats), not a gather (an address
// from a loaded index), a loop whose exit depends on a loaded value, or
// one that divides integers it loaded. The unchecked variant keeps the
// kernel's parameters and has no footprint check.
func TestDataIndependent(t *testing.T) {
	for _, c := range []struct {
		name, load2, middle, branchOn string
		want                          bool
	}{
		{"saxpy", "v0", "", "v10", true},
		{"float division", "v0", "  DIV.f64 v9, v9, v3\n", "v10", true},
		{"gather", "v13", "", "v10", false},
		{"exit on data", "v0", "  CVT.rz.s64.f64 v14, v3\n  ADD.u64 v10, v10, v14\n", "v10", false},
		{"integer division", "v0", "  CVT.rz.s64.f64 v14, v3\n  DIV.s64 v15, v0, v14\n  PUT.u64 s3, v15\n", "v10", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.ReplaceAll(saxpyLike, "LOAD2ADDR", c.load2)
			src = strings.ReplaceAll(src, "BRANCHON", c.branchOn)
			if c.load2 == "v13" {
				// The index: the 8 bytes at x[i], as an integer.
				src = strings.Replace(src, "  GET.u64 v6, s7\n", "  GET.u64 v6, s7\n  LD.u64 v13, v2(0)\n", 1)
			}
			src = strings.Replace(src, "MIDDLE\n", c.middle, 1)
			if c.name == "exit on data" {
				// The back edge's compare reads the index moved by data.
				src = strings.Replace(src, "  # 0x1013: add rax, 8\n  ADD.u64 v10, v0, 8\n", "  # 0x1013: add rax, 8\n  ADD.u64 v10, v0, 8\n  CVT.rz.s64.f64 v14, v3\n  ADD.u64 v10, v10, v14\n", 1)
				src = strings.Replace(src, "  CVT.rz.s64.f64 v14, v3\n  ADD.u64 v10, v10, v14\n  PUT.f64 x1", "  PUT.f64 x1", 1)
			}
			bs := parseBlocks(t, src)
			k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
			if err != nil {
				t.Fatal(err)
			}
			if k.DataIndependent != c.want || (k.Unchecked != nil) != c.want {
				t.Fatalf("DataIndependent %v, Unchecked %v; want %v", k.DataIndependent, k.Unchecked != nil, c.want)
			}
			if !c.want {
				return
			}
			u := k.Unchecked
			if len(u.Params) != len(k.Params) || strings.Contains(u.PTX, "[site0_lo]") || strings.Contains(u.PTX, "[site0_span]") {
				t.Errorf("the unchecked kernel should take the same parameters and check nothing:\n%s", u.PTX)
			}
			simKernel(t, u) // gpusim accepts it
		})
	}
}

// TestProvenLaunch launches the saxpy kernel with a lazy Resident: the
// checked kernel twice, then, with the same input, the unchecked one as a
// proven launch, which makes no backup of the stale pages it overwrites
// and leaves the guest as the CPU engine does. A proven launch that fails
// all the same over stale pages reports ErrLostCopy, never a silent loss;
// a failing launch that is not proven restores them from its backup.
func TestProvenLaunch(t *testing.T) {
	const n = 3000
	bs, k, sim, fn := saxpyKernel(t)
	if k.Unchecked == nil {
		t.Fatal("saxpy's kernel should be data independent")
	}
	ctx := &callCounter{Context: sim}
	m, err := ctx.LoadModule(k.Unchecked.PTX)
	if err != nil {
		t.Fatal(err)
	}
	fnU, err := m.Function(k.Unchecked.Name)
	if err != nil {
		t.Fatal(err)
	}
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	// A page at a time, so that y's pages but the last stay stale
	// across the CPU's iteration.
	res := Resident{Lazy: true, FaultWindow: 1}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := 0; round < 3; round++ {
		in := saxpyInput(k, cpu, n, xr, yr)
		kk, f := k, fn
		if round == 2 {
			kk, f, in.Proven = k.Unchecked, fnU, true
		}
		ctx.dtod = 0
		if _, err := Launch(ctx, f, kk, mem, in, &res); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round > 0 && (ctx.dtod == 0) != in.Proven {
			t.Errorf("round %d (proven %v): %d device-to-device copies; a backup only when not proven", round, in.Proven, ctx.dtod)
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's after the proven launch")
	}
	// Reading the guest brought y back: one more launch leaves it on the
	// device. A failing launch that is not proven then puts the stale
	// pages back from its backup.
	if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	in := saxpyInput(k, cpu, n, Range{xr.Lo, xr.Lo + 8*100}, yr)
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, mem, in, &res); !errors.As(err, &ke) || errors.Is(err, ErrLostCopy) {
		t.Fatalf("a failing checked launch: %v, want a kernel error only", err)
	}
	if !mem.IsStale(yr.Lo) {
		t.Fatal("y should still be on the device after the failed launch")
	}
	// The same launch claimed proven has no backup: the bytes are lost,
	// and it says so.
	in.Proven = true
	if _, err := Launch(ctx, fn, k, mem, in, &res); !errors.Is(err, ErrLostCopy) {
		t.Fatalf("a failing proven launch over stale pages: %v, want ErrLostCopy", err)
	}
}
