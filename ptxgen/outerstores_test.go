package ptxgen

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// initRows is an initialisation nest whose outer body stores before its
// inner loop (mvt's x1[i] = … beside A[i][j] = …): X[i] = the row's
// offset, then A[i][j] = offset ^ j over the row. i is s1 (row offset in
// bytes, step s9) and s3 (X offset, step 8), j is s2 (bytes); A and X in
// s6 and s7, the row size in bytes in s9, the matrix's in s10.
const initRows = `
vblock 0x5000..0x5010:
  # 0x5000: mov [rdi+rbx], rcx; xor edx, edx
  GET.u64 v0, s3
  GET.u64 v1, s7
  ADD.u64 v2, v1, v0
  GET.u64 v3, s1
  ST.u64 v2(0), v3
  LI.u64 v4, 0
  PUT.u64 s2, v4
  JMP 0x5010
vblock 0x5010..0x5020:
  # 0x5010: mov [rsi+rcx+rdx], rcx^rdx; add rdx, 8; cmp rdx, r9; jne
  GET.u64 v0, s1
  GET.u64 v1, s2
  GET.u64 v2, s6
  ADD.u64 v3, v2, v0
  ADD.u64 v4, v3, v1
  XOR.u64 v5, v0, v1
  ST.u64 v4(0), v5
  ADD.u64 v6, v1, 8
  PUT.u64 s2, v6
  GET.u64 v7, s9
  CMP.ne.u64 v8, v6, v7
  BRANCH v8, 0x5010, 0x5020
vblock 0x5020..0x5030:
  # 0x5020: add rcx, r9; add rbx, 8; cmp rcx, r10; jne
  GET.u64 v0, s1
  GET.u64 v1, s9
  ADD.u64 v2, v0, v1
  PUT.u64 s1, v2
  GET.u64 v3, s3
  ADD.u64 v4, v3, 8
  PUT.u64 s3, v4
  GET.u64 v5, s10
  CMP.ne.u64 v6, v2, v5
  BRANCH v6, 0x5000, 0x5100
vblock 0x5100..0x5102:
  # 0x5100: syscall
  SYSCALL 0x5102
`

// initRowsNest is initRows' i level with j as Inner.
func initRowsNest(bs blockSet, outerStores bool) *Nest {
	n := &Nest{Header: 0x5000, Inner: 0x5010, OuterStores: outerStores, Blocks: map[uint64]*gvinst.VBlock{},
		InnerBlocks: map[uint64]bool{0x5010: true}}
	for _, a := range []uint64{0x5000, 0x5010, 0x5020} {
		n.Blocks[a] = bs[a]
	}
	return n
}

// TestKernel2DOuterStores: the 2D kernel of a nest whose outer body
// stores before the inner loop exists only with Nest.OuterStores, lists
// the store in Kernel.OuterStores, and on gpusim writes what the CPU
// does; so does one whose store comes after the inner loop (conv2d's
// memset of its output row after the loop over its input row), made by
// each row's last thread; and OuterStoresApart refuses footprints that
// meet.
func TestKernel2DOuterStores(t *testing.T) {
	const n = 20
	const aBase, xBase = dataBase, dataBase + 0x8000
	bs := parseBlocks(t, initRows)
	if _, err := Generate(initRowsNest(bs, false)); err == nil || !strings.Contains(err.Error(), "stores outside the inner loop") {
		t.Fatalf("without OuterStores: got %v, want the outer store refused", err)
	}
	// run generates the 2D kernel of src (initRows' shape) with its outer
	// store at x86 store, launches it on gpusim over the rows after two
	// the interpreter ran, and compares memory with the interpreter's
	// whole run.
	run := func(src string, store uint64) {
		t.Helper()
		bs := parseBlocks(t, src)
		k, err := Generate(initRowsNest(bs, true))
		if err != nil {
			t.Fatal(err)
		}
		if !k.TwoD || len(k.OuterStores) != 1 || k.Sites[k.OuterStores[0]].X86 != store {
			t.Fatalf("TwoD %v, outer stores %v: want the store at %#x", k.TwoD, k.OuterStores, store)
		}
		setup := func() (*gvinst.Memory, *gvinst.CPU) {
			mem := gvinst.NewMemory(1 << 26)
			if err := mem.Map(dataBase, 0x10000, gvinst.PermRead|gvinst.PermWrite); err != nil {
				t.Fatal(err)
			}
			cpu := &gvinst.CPU{PC: 0x5000}
			cpu.State[gvinst.SReg(6)] = aBase
			cpu.State[gvinst.SReg(7)] = xBase
			cpu.State[gvinst.SReg(9)] = n * 8
			cpu.State[gvinst.SReg(10)] = n * n * 8
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
			r := Range{aBase, aBase + n*n*8}
			if s.X86 == store {
				r = Range{xBase, xBase + n*8}
			}
			in.Sites = append(in.Sites, r)
		}
		if !OuterStoresApart(k, in.Sites) {
			t.Fatal("OuterStoresApart refuses X and A apart")
		}
		// Made before the inner loop, the store is checked against the
		// row's inner stores by the kernel (RowChecked), and its
		// footprint may meet others'; made after it, by the row's last
		// thread, it must stay apart.
		entry := store != 0x5020
		if got := len(k.RowChecked) == 1 && k.RowChecked[0] == k.OuterStores[0]; got != entry {
			t.Errorf("store at %#x: RowChecked %v, want it there %v", store, k.RowChecked, entry)
		}
		meet := append([]Range(nil), in.Sites...)
		meet[k.OuterStores[0]] = Range{aBase + n*n*8 - 8, aBase + n*n*8 + 8}
		if OuterStoresApart(k, meet) != entry {
			t.Errorf("store at %#x: OuterStoresApart of an outer store's footprint that meets A's: %v, want %v", store, !entry, entry)
		}
		ctx, fn := simKernel(t, k)
		if _, err := Launch(ctx, fn, k, mem, in, nil); err != nil {
			t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
		}
		for i, l := range k.LiveIns {
			setLive(mem, cpu, l, in.Values[i]+in.Steps[i]*count)
		}
		runToSyscall(t, e, cpu)
		want, got := make([]byte, 0x10000), make([]byte, 0x10000)
		_ = refMem.Read(dataBase, want)
		_ = mem.Read(dataBase, got)
		if !bytes.Equal(want, got) {
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("store at %#x: memory differs first at %#x", store, dataBase+uint64(i))
				}
			}
		}
	}
	run(initRows, 0x5000)

	// The same store in the latch, after the inner loop: each row's last
	// thread makes it.
	after := strings.Replace(strings.Replace(initRows,
		"  GET.u64 v0, s3\n  GET.u64 v1, s7\n  ADD.u64 v2, v1, v0\n  GET.u64 v3, s1\n  ST.u64 v2(0), v3\n", "", 1),
		"  GET.u64 v5, s10\n", "  GET.u64 v10, s7\n  ADD.u64 v11, v10, v3\n  ST.u64 v11(0), v0\n  GET.u64 v5, s10\n", 1)
	if after == initRows {
		t.Fatal("the variant storing after the inner loop did not apply")
	}
	run(after, 0x5020)

	// An outer body that divides (mvt's x1[i] = (double)(i % n) / n):
	// every thread of a row would divide, so the nest stays 1D.
	divides := strings.Replace(initRows, "  GET.u64 v3, s1\n  ST.u64 v2(0), v3\n", "  GET.u64 v3, s1\n  GET.u64 v10, s9\n  REM.u64 v11, v3, v10\n  ST.u64 v2(0), v11\n", 1)
	if divides == initRows {
		t.Fatal("the dividing variant did not apply")
	}
	if _, err := Generate(initRowsNest(parseBlocks(t, divides), true)); err == nil || !strings.Contains(err.Error(), "outer body divides") {
		t.Errorf("an outer body that divides: got %v, want it refused", err)
	}

	// The store in a loop of the outer body, before the inner loop (every
	// thread of the row would run that loop): refused.
	looped := strings.Replace(initRows, `vblock 0x5000..0x5010:
  # 0x5000: mov [rdi+rbx], rcx; xor edx, edx
  GET.u64 v0, s3`, `vblock 0x5000..0x5004:
  # 0x5000: xor r8d, r8d
  LI.u64 v0, 0
  PUT.u64 s4, v0
  JMP 0x5004
vblock 0x5004..0x5010:
  # 0x5004: mov [rdi+rbx], rcx; inc r8; cmp r8, 2; jne; xor edx, edx
  GET.u64 v20, s4
  ADD.u64 v21, v20, 1
  PUT.u64 s4, v21
  CMP.ne.u64 v22, v21, 2
  GET.u64 v0, s3`, 1)
	looped = strings.Replace(looped, "  PUT.u64 s2, v4\n  JMP 0x5010\n", "  PUT.u64 s2, v4\n  BRANCH v22, 0x5004, 0x5010\n", 1)
	lb := parseBlocks(t, looped)
	ln := initRowsNest(lb, true)
	ln.Blocks[0x5004] = lb[0x5004]
	if len(ln.Blocks) != 4 {
		t.Fatal("the looped variant did not parse into four blocks")
	}
	if _, err := Generate(ln); err == nil || !strings.Contains(err.Error(), "stores outside the inner loop") {
		t.Errorf("a store in a loop of the outer body: got %v, want it refused", err)
	}
}

// TestKernel2DRowStore: an outer store before the inner loop whose bytes
// an inner store of the same row writes (X[i] on A's diagonal, A[i][i]
// written by inner iteration i) fails the 2D launch with ErrCodeRowStore,
// as another thread of the row could store X[i] after it; the
// unchecked kernel has no such check.
func TestKernel2DRowStore(t *testing.T) {
	const n = 20
	// X advances by a row and an element: X[i] is A[i][i] when X is A.
	diag := strings.Replace(initRows, "  GET.u64 v3, s3\n  ADD.u64 v4, v3, 8\n", "  GET.u64 v3, s3\n  ADD.u64 v4, v3, 8\n  ADD.u64 v4, v4, v1\n", 1)
	if diag == initRows {
		t.Fatal("the diagonal variant did not apply")
	}
	bs := parseBlocks(t, diag)
	k, err := Generate(initRowsNest(bs, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(k.RowChecked) != 1 {
		t.Fatalf("RowChecked %v, want the outer store", k.RowChecked)
	}
	if !regexp.MustCompile(`(mov\.b64|add\.u64) %os0, %[rt]\d+`).MatchString(k.PTX) || !regexp.MustCompile(`setp\.lt\.and\.u64 %p\d+, %os0, %t\d+, %p\d+;\s+@%p\d+ bra \$Lrow5010;`).MatchString(k.PTX) {
		t.Fatalf("no row store check in the kernel\n%s", numbered(k.PTX))
	}
	if k.Unchecked != nil && strings.Contains(k.Unchecked.PTX, "$Lrow") {
		t.Error("the unchecked kernel checks the row's stores")
	}
	mem := gvinst.NewMemory(1 << 26)
	if err := mem.Map(dataBase, 0x10000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	// Rows 0..n-1 from the first: s1 the row offset, s3 X's offset, s2 j.
	var in LaunchInput
	in.Count, in.InnerTrip0, in.InnerMax = n, n, n
	for _, l := range k.LiveIns {
		v, step := uint64(0), uint64(0)
		switch l.Slot {
		case gvinst.SReg(1):
			step = n * 8
		case gvinst.SReg(3):
			step = n*8 + 8
		case gvinst.SReg(6), gvinst.SReg(7):
			v = dataBase
		case gvinst.SReg(9):
			v = n * 8
		case gvinst.SReg(10):
			v = n * n * 8
		}
		in.Values, in.Steps = append(in.Values, v), append(in.Steps, step)
	}
	for _, l := range k.InnerLiveIns {
		step := uint64(0)
		if !l.Stack && l.Slot == gvinst.SReg(2) {
			step = 8
		}
		in.InnerSteps = append(in.InnerSteps, step)
	}
	for range k.Sites {
		in.Sites = append(in.Sites, Range{dataBase, dataBase + n*n*8})
	}
	if !OuterStoresApart(k, in.Sites) {
		t.Fatal("OuterStoresApart refuses the row-checked store")
	}
	ctx, fn := simKernel(t, k)
	var ke *KernelError
	if _, err := Launch(ctx, fn, k, mem, in, nil); !errors.As(err, &ke) || ke.Code != ErrCodeRowStore || ke.X86 != 0x5010 {
		t.Fatalf("got %v, want the inner store at 0x5010 meeting its row's outer store (ErrCodeRowStore)", err)
	}
}
