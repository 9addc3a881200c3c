package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/gxbit/gxbit/gpu/gputest"
	"github.com/gxbit/gxbit/gvinst"
)

// TestLaunchWaitsOnce launches the saxpy kernel with a lazy Resident over
// a context that counts its calls, the CPU running the last iteration and
// changing an element of x between launches: every launch, the first
// (new buffers, copied in whole) and those that copy in what the CPU
// changed and back up y's stale pages, queues its copies and backups and
// waits for the device once, with its kernel (a synchronous copy or batch
// each way, and one more for the kernel, before). So does a launch whose
// kernel fails; it still puts y's stale pages back, and the guest ends as
// the CPU engine leaves it.
func TestLaunchWaitsOnce(t *testing.T) {
	const n = 3000
	bs, k, sim, fn := saxpyKernel(t)
	ctx := gputest.NewCounting(sim)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, FaultWindow: 1}
	defer func() { _ = res.Close() }()
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := range 4 {
		if round > 0 {
			a := dataBase + uint64(8*(5+round))
			for _, m := range []*gvinst.Memory{refMem, mem} {
				v, _ := m.Load(a, 8)
				if err := m.Store(a, 8, math.Float64bits(math.Float64frombits(v)+1)); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := ctx.Counts()
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		d := ctx.Counts().Sub(before)
		if d.Waits() != 1 || d.Syncs != 1 || d.Launches != 1 || st.Parts.Waits != 1 {
			t.Errorf("round %d: %v (copy parts: %d waits); want one launch and its one wait", round, d, st.Parts.Waits)
		}
		if d.Queued() == 0 || round > 0 && d.QueuedDtoD == 0 {
			t.Errorf("round %d: %v; want the copies in and (after the first) y's backup queued", round, d)
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	}
	// A launch whose kernel fails (x's footprint cut short) after its
	// threads before x[100] wrote y, which only the device holds.
	before := ctx.Counts()
	_, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, Range{xr.Lo, xr.Lo + 8*100}, yr), &res)
	var ke *KernelError
	if !errors.As(err, &ke) || errors.Is(err, ErrLostCopy) {
		t.Fatalf("a failing launch: %v, want a kernel error only", err)
	}
	if d := ctx.Counts().Sub(before); d.Waits() != 1 || d.QueuedDtoD == 0 {
		t.Errorf("the failing launch: %v; want its backup queued and one wait", d)
	}
	if !mem.IsStale(yr.Lo) {
		t.Fatal("y should still be on the device after the failed launch")
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
}
