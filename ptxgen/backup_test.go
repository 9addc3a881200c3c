package ptxgen

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// TestBackupStaleWritable runs the saxpy loop (y += a·x over 3000
// elements, six pages of y) with a lazy Resident: two launches leave y on
// the device, the guest reads y's first two pages back, and a launch
// whose x footprint is too small fails after other threads stored to y.
// Its backup holds only what it could write of the pages only the device
// held (y's last four pages, not the two the guest holds again), and after
// the failure the device is as before on the stale pages and copies the
// other two in again: the launches after it leave memory as the CPU
// engine does.
func TestBackupStaleWritable(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, FaultWindow: 1} // a page a fault: the stale pages the test counts
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	round := func() {
		t.Helper()
		if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
			t.Fatal(err)
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	}
	round()
	round()
	// y's last iteration ran on the CPU (its page came back); bring the
	// first two pages back too.
	if err := mem.Read(yr.Lo, make([]byte, 2*gvinst.PageSize)); err != nil {
		t.Fatal(err)
	}
	stale := 0
	for p := yr.Lo; p < yr.Hi; p += gvinst.PageSize {
		if mem.IsStale(p) {
			stale++
		}
	}
	if stale == 0 || stale >= 6 {
		t.Fatalf("%d of y's pages stale, want some", stale)
	}
	before := make([]byte, 8*n)
	if err := refMem.Read(yr.Lo, before); err != nil {
		t.Fatal(err)
	}
	st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, Range{xr.Lo, xr.Lo + 8*100}, yr), &res)
	var ke *KernelError
	if !errors.As(err, &ke) || errors.Is(err, ErrLostCopy) {
		t.Fatalf("a failing launch: %v, want a kernel error only", err)
	}
	// The backup and its restoring: y's stale pages each way, no more.
	if max := 2 * uint64(stale) * gvinst.PageSize; st.Parts.BytesDtoD == 0 || st.Parts.BytesDtoD > max {
		t.Errorf("the backup copied %d bytes on the device, there and back, want at most y's %d stale pages each way (%d bytes)", st.Parts.BytesDtoD, stale, max)
	}
	round()
	round()
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's after a failed launch")
	}
}

// TestDryLaunch launches saxpy's dry kernel over y left on the device: a
// clean one writes nothing (the guest reads y as before, no backup is
// made, nothing more is stale), and one whose x footprint is too small
// fails as the checked kernel would, leaving everything as it was. The
// unchecked kernel then runs the proven input, as the CPU engine does.
func TestDryLaunch(t *testing.T) {
	const n = 3000
	bs, k, sim, fn := saxpyKernel(t)
	if k.Dry == nil || k.Unchecked == nil {
		t.Fatal("saxpy's kernel should be data independent, with a dry variant")
	}
	load := func(kk *Kernel) gpu.Function {
		m, err := sim.LoadModule(kk.PTX)
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Function(kk.Name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fnD, fnU := load(k.Dry), load(k.Unchecked)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, FaultWindow: 1} // a page a fault: the stale pages the test counts
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	cpuRest := func() {
		t.Helper()
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	}
	if _, err := Launch(sim, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	cpuRest()
	if res.BackupBytes(k, saxpyInput(k, cpu, n, xr, yr).Sites) == 0 {
		t.Fatal("y should be on the device, to back up")
	}
	same := func(what string) {
		t.Helper()
		want, got := make([]byte, 0x10000), make([]byte, 0x10000)
		_ = refMem.Read(dataBase, want)
		if err := mem.Read(dataBase, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("memory differs from the CPU engine's %s", what)
		}
	}
	for _, bad := range []bool{false, true} {
		in := saxpyInput(k, cpu, n, xr, yr)
		if bad {
			in.Sites = saxpyInput(k, cpu, n, Range{xr.Lo, xr.Lo + 8*100}, yr).Sites
		}
		in.Dry = true
		st, err := Launch(sim, fnD, k.Dry, mem, in, &res)
		var ke *KernelError
		if bad != errors.As(err, &ke) || err != nil && ke == nil {
			t.Fatalf("a dry launch (footprint too small %v): %v", bad, err)
		}
		if st.Parts.BytesDtoD != 0 || st.BytesDeferred != 0 || st.BytesOut != 0 {
			t.Errorf("a dry launch copied %d bytes on the device, left %d on it, copied %d out: want none", st.Parts.BytesDtoD, st.BytesDeferred, st.BytesOut)
		}
	}
	// The guest reads the device's y (the first launch's), not a dry one's.
	same("after dry launches")
	in := saxpyInput(k, cpu, n, xr, yr)
	in.Proven = true
	st, err := Launch(sim, fnU, k.Unchecked, mem, in, &res)
	if err != nil {
		t.Fatal(err)
	}
	if st.Parts.BytesDtoD != 0 {
		t.Errorf("the proven launch copied %d bytes on the device: want no backup", st.Parts.BytesDtoD)
	}
	cpuRest()
	same("after the proven launch")
}
