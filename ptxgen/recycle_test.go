package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestResidentRecyclesBroughtBack launches the saxpy loop over 1 MiB
// arrays with a lazy Resident whose BackWindow is 64 KiB, then reads y
// forward on the host, as a checksum does: the pages past the window are
// released (their host memory reused for the next ones), but a page the
// guest wrote after it came back keeps its bytes. A second pass over y
// brings the released pages back again, once, and stops their release;
// a launch after it, and Close, leave the guest as the CPU engine does.
func TestResidentRecyclesBroughtBack(t *testing.T) {
	const n = 0x100000 / 8
	const window = 64 << 10
	bs, k, ctx, fn := saxpyKernel(t)
	guest := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 28)
		if err := mem.Map(dataBase, 0x200000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%97)*0.1+1/3.0))
			_ = mem.Store(dataBase+0x100000+uint64(8*i), 8, math.Float64bits(float64(i%89)/7.0))
		}
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.MXCSR] = 0x1f80
		cpu.State[gvinst.S6] = dataBase
		cpu.State[gvinst.S7] = dataBase + 0x100000
		cpu.State[gvinst.S2] = uint64(n) * 8
		cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
		return mem, cpu
	}
	refMem, refCPU := guest()
	mem, cpu := guest()
	res := Resident{Lazy: true, BackWindow: window}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x100000, dataBase + 0x100000 + 8*n}
	launch := func() {
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
	// pass reads y forward, an element at a time, and compares it with
	// the reference; on the page written it writes an element.
	written := yr.Lo + 5*gvinst.PageSize + 16
	pass := func(write bool) {
		t.Helper()
		for a := yr.Lo; a < yr.Hi; a += 8 {
			v, err := mem.Load(a, 8)
			if err != nil {
				t.Fatal(err)
			}
			if w, _ := refMem.Load(a, 8); v != w {
				t.Fatalf("y at %#x reads %#x, want %#x", a, v, w)
			}
			if write && a == written {
				for _, mm := range []*gvinst.Memory{refMem, mem} {
					if err := mm.Store(a, 8, v^0x55); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	launch()
	host := mem.HostBytes()
	pass(true)
	// (The last iteration on the CPU brought y's last pages back first:
	// released first, they come back at the pass's end.)
	st := res.BringBackStats()
	if st.Released == 0 || st.Reread > 16*gvinst.PageSize {
		t.Fatalf("reading y once released %d bytes and read %d again, want some released and at most its last 16 pages again", st.Released, st.Reread)
	}
	// y's pages now take about the window: its read-ahead's last run
	// (up to half of y), the window before it; x all its pages.
	if hb, most := mem.HostBytes(), (xr.Hi-xr.Lo)+(yr.Hi-yr.Lo)/2+window+2*gvinst.PageSize; hb > most || hb >= host {
		t.Errorf("after reading y the guest's pages take %d bytes of host memory (%d before), want at most %d", hb, host, most)
	}
	if !mem.IsStale(yr.Lo + gvinst.PageSize) {
		t.Error("y's second page, long read, was not released")
	}
	if mem.IsStale(written) {
		t.Error("the page the guest wrote was released")
	}
	// A second pass brings the released pages back once, and they
	// stay.
	pass(false)
	st2 := res.BringBackStats()
	if st2.Reread == st.Reread {
		t.Error("a second pass over y read no released page again")
	}
	pass(false)
	if st3 := res.BringBackStats(); st3.Bytes != st2.Bytes || st3.Released != st2.Released {
		t.Errorf("a third pass brought back %d bytes and released %d, want none: the second stops y's release", st3.Bytes-st2.Bytes, st3.Released-st2.Released)
	}
	launch()
	pass(false)
	launch()
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := make([]byte, 0x200000), make([]byte, 0x200000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
}

// TestResidentRecyclesGrownBuffer launches the saxpy loop over a growing
// number of elements, y's buffer growing in place at its end (extend),
// and reads y forward after each launch with a window of one page: the
// pages a buffer grew by after some of its pages were released come back
// like the others (a released-page record shorter than the grown buffer
// made that an index out of range). The guest ends as a Resident that
// keeps every page brought back leaves it.
func TestResidentRecyclesGrownBuffer(t *testing.T) {
	_, k, ctx, fn := saxpyKernel(t)
	run := func(window uint64) (*gvinst.Memory, BringBackStats) {
		mem, cpu := lazyGuest(t, 3000)
		res := Resident{Lazy: true, BackWindow: window, FaultWindow: 1}
		for _, n := range []uint64{1000, 1001, 1600, 2100, 3000} {
			xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
			if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
				t.Fatal(err)
			}
			for a := yr.Lo; a < yr.Hi; a += 8 {
				if _, err := mem.Load(a, 8); err != nil {
					t.Fatal(err)
				}
			}
		}
		st := res.BringBackStats()
		if err := res.Close(); err != nil {
			t.Fatal(err)
		}
		return mem, st
	}
	refMem, _ := run(1 << 40)
	mem, st := run(gvinst.PageSize)
	if st.Released == 0 {
		t.Error("nothing was released")
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from a Resident's that keeps every page")
	}
}

// TestLaunchLeavesWrittenPagesUnwatched checks that a launch does not
// watch the pages of a written range it leaves stale (watchLoaded): a
// mark a page the stale mark undoes. Its second launch fails after its
// kernel wrote part of y; y's last page, which the guest held and no
// store footprint covers, was not watched then: it counts as dirty, so
// that the launch after the guest ran the loop on the CPU (the fallback)
// and wrote y's last element copies it in, and the guest ends as the CPU
// engine leaves it.
func TestLaunchLeavesWrittenPagesUnwatched(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, FaultWindow: 1}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	cpuRun := func(m *gvinst.Memory, from uint64) {
		c := *refCPU
		c.State[gvinst.S0] = from * 8
		runToSyscall(t, gvinst.NewInterpreter(m, bs, gvinst.InterpOptions{}), &c)
	}
	for round := 0; round < 3; round++ {
		in := saxpyInput(k, cpu, n, xr, yr)
		if round == 1 {
			// The threads storing into y's last page fail: the page is
			// in the written group's range (y's loads) but in no store
			// footprint, which the failed launch's restore marks.
			for s, site := range k.Sites {
				if site.Store {
					in.Sites[s].Hi = (yr.Hi - 1) / gvinst.PageSize * gvinst.PageSize
				}
			}
		}
		_, err := Launch(ctx, fn, k, mem, in, &res)
		cpuRun(refMem, 0)
		if round == 1 {
			var ke *KernelError
			if !errors.As(err, &ke) {
				t.Fatalf("round 1: want a kernel error, got %v", err)
			}
			cpuRun(mem, 0) // the fallback
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				if err := mm.Store(yr.Hi-8, 8, 0x4000000000000000); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for a := yr.Lo; a < yr.Hi; a += gvinst.PageSize {
			if mem.IsStale(a) && mem.IsWatched(a) {
				t.Errorf("round %d: y's page at %#x, left stale, is watched", round, a)
				break
			}
		}
		cpuRun(mem, n-1)
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLoadSetsUnwrittenPagesToZero launches the saxpy loop over 64 KiB
// arrays of which the guest wrote only y and x's first page: x's other
// pages read as zeros from no bytes of their own, and the launch sets
// them to zeros on the device instead of copying them in. The guest ends
// as the CPU engine leaves it.
func TestLoadSetsUnwrittenPagesToZero(t *testing.T) {
	const n = 0x20000 / 8
	bs, k, ctx, fn := saxpyKernel(t)
	guest := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 28)
		if err := mem.Map(dataBase, 0x40000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if i < gvinst.PageSize/8 {
				_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i)*0.1+1/3.0))
			}
			_ = mem.Store(dataBase+0x20000+uint64(8*i), 8, math.Float64bits(float64(i%89)/7.0))
		}
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.MXCSR] = 0x1f80
		cpu.State[gvinst.S6] = dataBase
		cpu.State[gvinst.S7] = dataBase + 0x20000
		cpu.State[gvinst.S2] = uint64(n) * 8
		cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
		return mem, cpu
	}
	refMem, refCPU := guest()
	mem, cpu := guest()
	res := Resident{Lazy: true}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x20000, dataBase + 0x20000 + 8*n}
	st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
	if err != nil {
		t.Fatal(err)
	}
	if want := (yr.Hi - yr.Lo) + gvinst.PageSize; st.Parts.BytesHtoD != want || st.BytesIn != want || st.Parts.Memset == 0 {
		t.Errorf("copied %d bytes in (%d counted, memsets %v), want y and x's first page, %d, and x's other pages set on the device", st.Parts.BytesHtoD, st.BytesIn, st.Parts.Memset, want)
	}
	rc := *refCPU
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	last := *cpu
	last.State[gvinst.S0] = (n - 1) * 8
	runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := make([]byte, 0x40000), make([]byte, 0x40000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
}
