package ptxgen

import (
	"bytes"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestLaunchBringsBackAhead launches the saxpy loop again and again (a
// time step) with a lazy Resident whose staging buffer is pinned; between
// launches the guest reads y's first element, which the launch before
// left on the device, as a nest's loads ahead of its loop do. The first
// read of each finds the page stale; from the second launch on, the page
// comes back with the launch (behind its kernel, in its one wait), and
// the read finds it current: one fault in all, not one a step. The guest
// ends as the CPU engine leaves it.
func TestLaunchBringsBackAhead(t *testing.T) {
	const n, steps = 3000, 5
	bs, k, sim, fn := saxpyKernel(t)
	ctx := &pinningContext{Context: sim}
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, FaultWindow: 1}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	var waits uint64
	for step := 0; step < steps; step++ {
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatal(err)
		}
		// (The wrapper's copies in wait: it queues no batch.)
		if step == 0 {
			waits = st.Parts.Waits
		} else if st.Parts.Waits != waits {
			t.Errorf("step %d: %d waits, want the first launch's %d: the pages coming back with it wait for nothing", step, st.Parts.Waits, waits)
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
		if stale := mem.IsStale(yr.Lo); stale != (step == 0) {
			t.Errorf("step %d: y's first page stale after the launch: %v", step, stale)
		}
		if _, err := mem.Load(yr.Lo, 8); err != nil {
			t.Fatal(err)
		}
	}
	// The CPU's last iteration reads y's last page: after the first
	// launch it too comes back with each.
	st := res.BringBackStats()
	if st.Faults != 2 || st.Ahead != 2*(steps-1) {
		t.Errorf("%d faults and %d pages brought back with launches, want 2 and %d", st.Faults, st.Ahead, 2*(steps-1))
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
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
