package ptxgen

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// TestResident launches the saxpy kernel three times with resident
// buffers. The second launch finds x on the device unchanged and does not
// copy it, but copies y, whose last element the CPU changed; before the
// third the guest changes x, which is copied again. Results match the CPU
// engine running the loop as often.
func TestResident(t *testing.T) {
	c := cases()[0]
	bs := parseBlocks(t, c.src)
	k, err := Generate(&Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{c.header: bs[c.header]}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, fn := simKernel(t, k)
	refMem, refCPU := newGuest(t, c)
	mem, cpu := newGuest(t, c)
	var res Resident
	defer func() { _ = res.Close() }()
	for round := 0; round < 3; round++ {
		if round == 2 {
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				_ = mm.Store(dataBase+8*7, 8, 0x4010000000000000) // x[7] = 4.0
			}
		}
		// CPU: the whole loop, from the same registers each round.
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		// GPU: all iterations but the last, which the CPU runs.
		in := LaunchInput{Count: c.arrivals - 1}
		for _, l := range k.LiveIns {
			in.Values = append(in.Values, cpu.State[l.Slot])
			step := uint64(0)
			if l.Slot == gvinst.S0 {
				step = 8
			}
			in.Steps = append(in.Steps, step)
		}
		for range k.Sites {
			in.Sites = append(in.Sites, Range{dataBase, dataBase + 300*8})
		}
		for i := range in.Sites {
			if k.Sites[i].Store || k.Sites[i].Index > 5 {
				in.Sites[i] = Range{dataBase + 0x1000, dataBase + 0x1000 + 300*8}
			}
		}
		st, err := Launch(ctx, fn, k, mem, in, &res)
		if err != nil {
			t.Fatal(err)
		}
		last := *cpu
		last.State[gvinst.S0] = (c.arrivals - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
		switch round {
		case 0:
			if st.BytesReused != 0 || st.BytesIn == 0 {
				t.Errorf("round 0: %+v", st)
			}
		case 1:
			// The CPU changed y's last element: only its changed bytes.
			if st.BytesIn == 0 || st.BytesIn > 8 || st.BytesReused != 2*300*8-st.BytesIn {
				t.Errorf("round 1: want x reused and y's last element copied: %+v", st)
			}
		case 2:
			// And x[7] changed.
			if st.BytesIn < 2 || st.BytesIn > 16 || st.BytesReused != 2*300*8-st.BytesIn {
				t.Errorf("round 2: want x[7] and y's last element copied: %+v", st)
			}
		}
		want, got := make([]byte, 0x2000), make([]byte, 0x2000)
		_ = refMem.Read(dataBase, want)
		_ = mem.Read(dataBase, got)
		if !bytes.Equal(want, got) {
			t.Fatalf("round %d: memory differs from the CPU engine's", round)
		}
	}
}

// lazyGuest is a guest for the saxpy loop over n elements: x at dataBase,
// y at dataBase+0x8000, rax counting bytes from 0.
func lazyGuest(t *testing.T, n int) (*gvinst.Memory, *gvinst.CPU) {
	t.Helper()
	mem := gvinst.NewMemory(1 << 28)
	if err := mem.Map(dataBase, 0x10000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i)*0.1+1/3.0))
		_ = mem.Store(dataBase+0x8000+uint64(8*i), 8, math.Float64bits(float64(i*i)/7.0))
	}
	cpu := &gvinst.CPU{PC: 0x1000}
	cpu.State[gvinst.MXCSR] = 0x1f80
	cpu.State[gvinst.S6] = dataBase
	cpu.State[gvinst.S7] = dataBase + 0x8000
	cpu.State[gvinst.S2] = uint64(n) * 8
	cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
	return mem, cpu
}

// saxpyKernel generates the saxpy loop's kernel and loads it on gpusim.
func saxpyKernel(t *testing.T) (blockSet, *Kernel, gpu.Context, gpu.Function) {
	t.Helper()
	bs := parseBlocks(t, saxpyO2)
	k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, fn := simKernel(t, k)
	return bs, k, ctx, fn
}

// saxpyInput is the launch input for iterations 0..n-2 of the saxpy loop
// from cpu's state: x's load site gets footprint xr, y's sites yr.
func saxpyInput(k *Kernel, cpu *gvinst.CPU, n uint64, xr, yr Range) LaunchInput {
	in := LaunchInput{Count: n - 1}
	for _, l := range k.LiveIns {
		in.Values = append(in.Values, cpu.State[l.Slot])
		step := uint64(0)
		if l.Slot == gvinst.S0 {
			step = 8
		}
		in.Steps = append(in.Steps, step)
	}
	for _, s := range k.Sites {
		r := yr
		if s.X86 == 0x1000 {
			r = xr
		}
		in.Sites = append(in.Sites, r)
	}
	return in
}

// TestResidentLazy runs the saxpy loop over 3000 elements (six pages per
// array) four times with a lazy Resident, the CPU running the last
// iteration each time, and checks what stays on the device, what is
// copied, and that the guest ends up as the CPU engine leaves it. The
// fourth launch fails in its kernel after writing part of y: the device's
// copy of y, which held the only current bytes of five pages, must be put
// back.
func TestResidentLazy(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	// A page at a time: what the CPU touches is what comes back.
	res := Resident{Lazy: true, FaultWindow: 1}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := 0; round < 4; round++ {
		if round == 2 {
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				_ = mm.Store(dataBase+8*7, 8, 0x4010000000000000) // x[7] = 4.0
			}
		}
		xf := xr
		if round == 3 {
			xf.Hi = xr.Lo + 8*100 // threads past x[99] fail
		}
		in := saxpyInput(k, cpu, n, xf, yr)
		// The cost model's view of the copies: everything before the
		// first launch, then only the pages the guest wrote since (y's
		// last page; x[7]'s page in round 2).
		predicted := res.ToCopy(xr) + res.ToCopy(yr)
		switch {
		case round == 0 && predicted != 2*8*n:
			t.Errorf("round 0: ToCopy predicts %d bytes, want both arrays (%d)", predicted, 2*8*n)
		case round == 1 && (predicted == 0 || predicted > gvinst.PageSize):
			t.Errorf("round 1: ToCopy predicts %d bytes, want y's last page at most", predicted)
		case round == 2 && (predicted == 0 || predicted > 2*gvinst.PageSize):
			t.Errorf("round 2: ToCopy predicts %d bytes, want two pages at most", predicted)
		}
		// What running there on the CPU would bring back first: none of
		// x, and, after a launch, y but the last page the CPU touched.
		if st := res.Stale(xr); st != 0 {
			t.Errorf("round %d: Stale(x) = %d, want 0", round, st)
		}
		switch st, all := res.Stale(yr), yr.Hi-yr.Lo; {
		case round == 0 && st != 0:
			t.Errorf("round 0: Stale(y) = %d before any launch, want 0", st)
		case round > 0 && (st >= all || st+2*gvinst.PageSize < all):
			t.Errorf("round %d: Stale(y) = %d of %d, want all but the last page", round, st, all)
		}
		st, err := Launch(ctx, fn, k, mem, in, &res)
		if round == 3 {
			var ke *KernelError
			if !errors.As(err, &ke) || ke.Code != ErrCodeFootprint {
				t.Fatalf("round 3: want a footprint error, got %v", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		if !mem.IsStale(yr.Lo) || !mem.IsStale(yr.Hi-1) || mem.IsStale(xr.Lo) {
			t.Errorf("round %d: y should be stale after the launch, x not", round)
		}
		if st.BytesOut != 0 || st.BytesDeferred != yr.Hi-yr.Lo {
			t.Errorf("round %d: want y deferred, nothing copied out: %+v", round, st)
		}
		// The last iteration on the CPU touches y's last page only.
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
		if !mem.IsStale(yr.Lo) || mem.IsStale(yr.Hi-1) {
			t.Errorf("round %d: only y's last page should have come back", round)
		}
		switch round {
		case 1:
			// y's stale pages are current on the device; on its last
			// page the CPU changed y's last element.
			if st.BytesIn == 0 || st.BytesIn > 8 {
				t.Errorf("round 1: want only y's last element copied in: %+v", st)
			}
		case 2:
			// And x[7] changed.
			if st.BytesIn < 2 || st.BytesIn > 16 {
				t.Errorf("round 2: want x[7] and y's last element copied in: %+v", st)
			}
		}
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
	if n, _ := res.BroughtBack(); n == 0 || mem.IsStale(yr.Lo) {
		t.Errorf("reading y should have brought it back (%d bytes)", n)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestResidentLazyClose checks that Close brings every stale page back.
func TestResidentLazyClose(t *testing.T) {
	const n = 1000
	bs, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, n)
	refMem, refCPU := lazyGuest(t, n)
	rc := *refCPU
	rc.State[gvinst.S2] = 8 * (n - 1) // the reference runs the GPU's part
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	res := Resident{Lazy: true}
	in := saxpyInput(k, cpu, n, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
	if _, err := Launch(ctx, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if mem.OnStale != nil || mem.IsStale(dataBase+0x8000) {
		t.Fatal("Close left the memory held")
	}
	want, got := make([]byte, 0x10000), make([]byte, 0x10000)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's after Close")
	}
}

// TestResidentDiscard checks that Discard frees the buffers without
// bringing the stale pages back, counts their bytes, and leaves a read of
// one failing (no holder) rather than seeing the old bytes.
func TestResidentDiscard(t *testing.T) {
	const n = 1000
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	in := saxpyInput(k, cpu, n, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
	if _, err := Launch(ctx, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	if !mem.IsStale(dataBase + 0x8000) {
		t.Fatal("the launch left no page stale: nothing to discard")
	}
	left := res.Discard()
	if left < 8*n || res.Discarded() != left {
		t.Errorf("Discard left %d bytes (Discarded %d), want y's %d at least", left, res.Discarded(), 8*n)
	}
	if n, _ := res.BroughtBack(); n != 0 {
		t.Errorf("Discard brought %d bytes back, want none", n)
	}
	if mem.OnStale != nil {
		t.Error("Discard left the memory held")
	}
	buf := make([]byte, 8)
	if err := mem.Read(dataBase+0x8000, buf); err == nil {
		t.Error("reading a discarded stale page succeeded, want a fault")
	}
	if err := res.Close(); err != nil {
		t.Errorf("Close after Discard: %v", err)
	}
}

// TestResidentDropped checks that unmapping pages the device holds newer
// bytes of forgets them (no copy back), and that the address range mapped
// again reads its new bytes, not the device's.
func TestResidentDropped(t *testing.T) {
	const n = 1000
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	in := saxpyInput(k, cpu, n, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
	if _, err := Launch(ctx, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	y := uint64(dataBase + 0x8000)
	if !mem.IsStale(y) {
		t.Fatal("the launch left y's pages fresh: nothing to drop")
	}
	if err := mem.Unmap(y, 0x2000); err != nil {
		t.Fatal(err)
	}
	if got, _ := res.BroughtBack(); got != 0 {
		t.Errorf("unmapping y brought %d bytes back, want none", got)
	}
	if res.Discarded() < 8*n {
		t.Errorf("Discarded = %d after unmapping y, want %d at least", res.Discarded(), 8*n)
	}
	if err := mem.Map(y, 0x2000, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8*n)
	if err := mem.Read(y, buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, make([]byte, 8*n)) {
		t.Error("y mapped again does not read as zeros")
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mem.Read(y, buf); err != nil || !bytes.Equal(buf, make([]byte, 8*n)) {
		t.Errorf("after Close, y mapped again reads %v (err %v), want zeros", buf[:8], err)
	}
}

// TestResidentLazyEvict runs the saxpy loop twice with a lazy Resident
// that has room for two arrays only; the second launch's footprints are
// 16 bytes longer, so x's buffer grows (merged with the new range) and
// evicts y's, which holds the only current copy of y: eviction must bring
// it back first. y's new buffer then finds no room (x's is in use) and
// the launch copies y back at once.
func TestResidentLazyEvict(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true, MaxBytes: 48010}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := 0; round < 2; round++ {
		if round == 1 {
			xr.Hi += 16
			yr.Hi += 16
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
			t.Fatal(err)
		}
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
		if len(res.bufs) != 2-round || res.bytes > res.MaxBytes {
			t.Fatalf("round %d: %d buffers, %d bytes kept", round, len(res.bufs), res.bytes)
		}
	}
	if n, _ := res.BroughtBack(); n < 8*(3000-512) {
		t.Errorf("evicting y brought back %d bytes, want most of y", n)
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

// TestResidentMerge runs the saxpy loop over the first 1500 elements,
// then over all 3000, with a lazy Resident and nothing run on the CPU in
// between: the second launch's footprints contain the first's, so its
// buffers grow over the first launch's (device to device) instead of
// bringing y back through the guest. Only the bytes the first launch did
// not hold are copied in, nothing comes back until the end, and the guest
// ends up as the CPU engine leaves it.
func TestResidentMerge(t *testing.T) {
	const n1, n2 = 1500, 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n2)
	mem, cpu := lazyGuest(t, n2)
	res := Resident{Lazy: true}
	var in uint64
	for _, n := range []uint64{n1, n2} {
		rc := *refCPU
		rc.State[gvinst.S2] = 8 * (n - 1) // the reference runs the GPU's part
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatal(err)
		}
		in += st.BytesIn
		if len(res.bufs) != 2 {
			t.Fatalf("after %d elements: %d buffers, want one per array", n, len(res.bufs))
		}
	}
	if got, _ := res.BroughtBack(); got != 0 {
		t.Errorf("growing the buffers brought back %d bytes, want none", got)
	}
	// Each array once, to the end of its last page (the grown buffers'
	// padding).
	if want := uint64(2 * ((8*n2 + gvinst.PageSize - 1) / gvinst.PageSize * gvinst.PageSize)); in != want {
		t.Errorf("copied in %d bytes, want each array once, to the end of its page (%d)", in, want)
	}
	if !mem.IsStale(dataBase+0x8000) || !mem.IsStale(dataBase+0x8000+8*n2-8) {
		t.Error("y should be on the device only")
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

// TestResidentLoadsItsRange launches the saxpy loop over all 3000
// elements, then the guest changes x[0], and a launch over the second half
// (a range inside the resident buffers) copies nothing in: x's first page
// is outside it. The next launch over everything copies x[0]'s bytes.
func TestResidentLoadsItsRange(t *testing.T) {
	const n = 3000
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	defer func() { _ = res.Close() }()
	all := func() (Range, Range) {
		return Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	}
	xr, yr := all()
	if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	if err := mem.Store(dataBase, 8, 0x4010000000000000); err != nil { // x[0] = 4.0
		t.Fatal(err)
	}
	half := *cpu
	half.State[gvinst.S0] = 8 * n / 2
	xh, yh := Range{dataBase + 8*n/2, xr.Hi}, Range{dataBase + 0x8000 + 8*n/2, yr.Hi}
	st, err := Launch(ctx, fn, k, mem, saxpyInput(k, &half, n/2, xh, yh), &res)
	if err != nil {
		t.Fatal(err)
	}
	if st.BytesIn != 0 {
		t.Errorf("the launch over the second half copied %d bytes in, want 0", st.BytesIn)
	}
	if st, err = Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	if st.BytesIn == 0 || st.BytesIn > 8 {
		t.Errorf("the launch over everything copied %d bytes in, want x[0]'s changed bytes", st.BytesIn)
	}
}

// countingContext counts a context's copies between host and device (a
// batch once each way), and its allocations.
type countingContext struct {
	gpu.Context
	htod, dtoh, allocs int
}

func (c *countingContext) Alloc(n uint64) (gpu.DevicePtr, error) {
	c.allocs++
	return c.Context.Alloc(n)
}

func (c *countingContext) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	c.htod++
	return c.Context.CopyHtoD(dst, src)
}

func (c *countingContext) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	c.dtoh++
	return c.Context.CopyDtoH(dst, src)
}

// CopyBatch counts a batch as one copy each way it copies (one call),
// where the context under it runs batches.
func (c *countingContext) CopyBatch(copies []gpu.Copy) error {
	bc, ok := c.Context.(gpu.BatchCopier)
	if !ok {
		return copyBatch(struct{ gpu.Context }{c}, copies)
	}
	in, out := false, false
	for _, cp := range copies {
		out = out || cp.FromDevice && len(cp.Host) > 0
		in = in || !cp.FromDevice && len(cp.Host) > 0
	}
	if in {
		c.htod++
	}
	if out {
		c.dtoh++
	}
	return bc.CopyBatch(copies)
}

// TestResidentColumnWalk runs the saxpy loop over 128-page arrays with a
// lazy Resident, then lets the host change one element every four pages
// of y (a column walked row by row, as LU's column scaling on the CPU
// does) and launches again. The walk's reads bring y back in growing runs
// (a few copies, not one per page), and the second launch copies what the
// walk changed in a few copies spanning the unchanged pages between (not
// one per changed element); the guest ends as the CPU engine leaves it.
func TestResidentColumnWalk(t *testing.T) {
	const n = 0x80000 / 8
	bs, k, sim, fn := saxpyKernel(t)
	ctx := &countingContext{Context: sim}
	guest := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 28)
		if err := mem.Map(dataBase, 0x100000, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%97)*0.1+1/3.0))
			_ = mem.Store(dataBase+0x80000+uint64(8*i), 8, math.Float64bits(float64(i%89)/7.0))
		}
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.MXCSR] = 0x1f80
		cpu.State[gvinst.S6] = dataBase
		cpu.State[gvinst.S7] = dataBase + 0x80000
		cpu.State[gvinst.S2] = uint64(n) * 8
		cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
		return mem, cpu
	}
	refMem, refCPU := guest()
	mem, cpu := guest()
	res := Resident{Lazy: true}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x80000, dataBase + 0x80000 + 8*n}
	const walked = 32
	for round := 0; round < 2; round++ {
		if round == 1 {
			// The column walk: one element every four pages of y.
			d0 := ctx.dtoh
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				for r := 0; r < walked; r++ {
					a := yr.Lo + uint64(r)*4*gvinst.PageSize + 8
					v, err := mm.Load(a, 8)
					if err != nil {
						t.Fatal(err)
					}
					if err := mm.Store(a, 8, v^1); err != nil {
						t.Fatal(err)
					}
				}
			}
			if calls := ctx.dtoh - d0; calls > 8 {
				t.Errorf("the walk over %d pages brought y back in %d copies, want a few growing runs", walked, calls)
			}
		}
		h0 := ctx.htod
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatal(err)
		}
		if round == 1 {
			if calls := ctx.htod - h0; calls > 4 || st.BytesIn == 0 {
				t.Errorf("the launch after the walk copied %d bytes in %d copies, want the %d changed elements in a few", st.BytesIn, calls, walked)
			}
		}
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		last := *cpu
		last.State[gvinst.S0] = (n - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	}
	want, got := make([]byte, 0x100000), make([]byte, 0x100000)
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

// TestResidentDropsUnmapped launches the saxpy loop with a lazy Resident,
// which leaves y on the device, then unmaps y (the program frees it): its
// pages are not brought back first (gvinst.Memory.OnStaleDropped). The
// program maps y again and fills it anew, and the next launch copies the
// new bytes in: the guest ends as the CPU engine leaves it.
func TestResidentDropsUnmapped(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := 0; round < 2; round++ {
		if round == 1 {
			before, _ := res.BroughtBack()
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				if err := mm.Unmap(dataBase+0x8000, 0x8000); err != nil {
					t.Fatal(err)
				}
				if err := mm.Map(dataBase+0x8000, 0x8000, gvinst.PermRead|gvinst.PermWrite); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					_ = mm.Store(yr.Lo+uint64(8*i), 8, math.Float64bits(float64(i%13)-0.5))
				}
			}
			if after, _ := res.BroughtBack(); after != before {
				t.Errorf("unmapping y brought %d bytes back, want none", after-before)
			}
		}
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatal(err)
		}
		if round == 1 && st.BytesIn < yr.Hi-yr.Lo-gvinst.PageSize {
			t.Errorf("the launch after y was mapped anew copied %d bytes in, want y's new bytes", st.BytesIn)
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
		t.Fatal("memory differs from the CPU engine's")
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
}

// callCounter counts a context's driver calls by kind.
type callCounter struct {
	gpu.Context
	memsets, events, dtod, htod int
}

func (c *callCounter) CopyHtoD(dst gpu.DevicePtr, src []byte) error {
	c.htod++
	return c.Context.CopyHtoD(dst, src)
}

func (c *callCounter) Memset(dst gpu.DevicePtr, b byte, n uint64) error {
	c.memsets++
	return c.Context.Memset(dst, b, n)
}

func (c *callCounter) NewEvent() (gpu.Event, error) {
	c.events++
	return c.Context.NewEvent()
}

func (c *callCounter) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	c.dtod++
	return c.Context.CopyDtoD(dst, src, n)
}

// TestErrorRecordReused launches the saxpy kernel with one Resident: the
// error record is cleared before the first launch and again only after a
// launch whose kernel failed, so a launch that follows a failure
// succeeds, and launches after a success make no memset; no launch makes
// timing events of its own.
func TestErrorRecordReused(t *testing.T) {
	const n = 1000
	_, k, sim, fn := saxpyKernel(t)
	ctx := &callCounter{Context: sim}
	mem, cpu := lazyGuest(t, n)
	var res Resident
	defer func() { _ = res.Close() }()
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round, want := range []struct {
		fail    bool
		memsets int
	}{{false, 1}, {false, 0}, {true, 0}, {false, 1}, {false, 0}} {
		xf := xr
		if want.fail {
			xf.Hi = xr.Lo + 8*100 // threads past x[99] fail
		}
		ctx.memsets = 0
		_, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xf, yr), &res)
		var ke *KernelError
		if want.fail != (err != nil) || want.fail && !errors.As(err, &ke) {
			t.Fatalf("round %d: want failure %v, got %v", round, want.fail, err)
		}
		if ctx.memsets != want.memsets {
			t.Errorf("round %d: %d memsets, want %d", round, ctx.memsets, want.memsets)
		}
	}
	if ctx.events != 0 {
		t.Errorf("the launches made %d events of their own, want none (the context times its launches)", ctx.events)
	}
}

// TestLoadJoinsChanges changes the low byte of every element of x's first
// three pages between two launches of the saxpy kernel (a time step's CPU
// writing a row, whose pages end in unchanged bytes): the second launch
// copies them in with one copy, not one per page (three before), and the
// results stay the CPU engine's.
func TestLoadJoinsChanges(t *testing.T) {
	const n = 3000
	bs, k, sim, fn := saxpyKernel(t)
	ctx := &callCounter{Context: sim}
	refMem, refCPU := lazyGuest(t, n)
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	defer func() { _ = res.Close() }()
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round := 0; round < 2; round++ {
		if round == 1 {
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				for i := uint64(0); i < 3*gvinst.PageSize/8; i++ {
					v, _ := mm.Load(dataBase+8*i, 8)
					_ = mm.Store(dataBase+8*i, 8, math.Float64bits(math.Nextafter(math.Float64frombits(v), 10)))
				}
			}
		}
		ctx.htod = 0
		st, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res)
		if err != nil {
			t.Fatal(err)
		}
		// (And one for y's last element, which the CPU wrote.)
		if round == 1 && (ctx.htod != 2 || st.BytesIn < 3*gvinst.PageSize-16 || st.BytesIn > 3*gvinst.PageSize+8) {
			t.Errorf("x's three changed pages and y's last element took %d copies (%d bytes), want two", ctx.htod, st.BytesIn)
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
		t.Fatal("memory differs from the CPU engine's")
	}
}

// TestResidentWideColumnWalk launches the saxpy loop with a lazy Resident,
// which leaves y on the device, then reads one element a row of y seen as
// a matrix whose rows are 18.4 pages long (wider than strideAhead), as a
// walk down a column does. The pages come back gathered on the
// device, a doubling number of rows a copy (not one copy a row), each
// byte exactly, and only the walked pages take host memory. On a context
// that copies rows at a stride (gpu.StridedCopier), each copy is one
// strided copy, and nothing is gathered on the device.
func TestResidentWideColumnWalk(t *testing.T) {
	for _, strided := range []bool{false, true} {
		t.Run(fmt.Sprintf("strided=%v", strided), func(t *testing.T) { wideColumnWalk(t, strided) })
	}
}

// stridedCountingContext is a countingContext that copies rows at a
// stride, and counts those copies and the copies on the device.
type stridedCountingContext struct {
	*countingContext
	strided, dtod int
}

func (c *stridedCountingContext) CopyDtoHStrided(dst []byte, src gpu.DevicePtr, width, pitch, rows uint64) error {
	c.strided++
	return c.Context.(gpu.StridedCopier).CopyDtoHStrided(dst, src, width, pitch, rows)
}

func (c *stridedCountingContext) CopyDtoD(dst, src gpu.DevicePtr, n uint64) error {
	c.dtod++
	return c.Context.CopyDtoD(dst, src, n)
}

func wideColumnWalk(t *testing.T, strided bool) {
	const rowPages, rows = 18, 24
	const rowBytes = rowPages*gvinst.PageSize + 1640 // not whole pages
	const n = (rows + 1) * rowPages * gvinst.PageSize / 8
	bs, k, sim, fn := saxpyKernel(t)
	counting := &countingContext{Context: sim}
	var ctx gpu.Context = counting
	sc := &stridedCountingContext{countingContext: counting}
	if strided {
		ctx = sc
	}
	yBase := uint64(dataBase + 8*n)
	guest := func() (*gvinst.Memory, *gvinst.CPU) {
		mem := gvinst.NewMemory(1 << 28)
		if err := mem.Map(dataBase, 16*n, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			_ = mem.Store(dataBase+uint64(8*i), 8, math.Float64bits(float64(i%97)*0.1+1/3.0))
			_ = mem.Store(yBase+uint64(8*i), 8, math.Float64bits(float64(i%89)/7.0))
		}
		cpu := &gvinst.CPU{PC: 0x1000}
		cpu.State[gvinst.MXCSR] = 0x1f80
		cpu.State[gvinst.S6] = dataBase
		cpu.State[gvinst.S7] = yBase
		cpu.State[gvinst.S2] = uint64(n) * 8
		cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
		return mem, cpu
	}
	refMem, refCPU := guest()
	runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), refCPU)
	mem, cpu := guest()
	res := Resident{Lazy: true}
	xr, yr := Range{dataBase, yBase}, Range{yBase, yBase + 8*n}
	if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	host0, d0 := mem.HostBytes(), counting.dtoh
	for r := 0; r < rows; r++ {
		a := yr.Lo + uint64(r)*rowBytes + 16
		got, err := mem.Load(a, 8)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := refMem.Load(a, 8); got != want {
			t.Fatalf("row %d: %#x, want %#x", r, got, want)
		}
	}
	if calls := counting.dtoh - d0 + sc.strided; calls > 6 {
		t.Errorf("the walk down %d rows brought y back in %d copies, want a doubling number of rows a copy", rows, calls)
	}
	// (The first rows' faults, before the stride shows, come back as
	// windows.)
	if strided && (sc.strided == 0 || sc.dtod != 0) {
		t.Errorf("%d strided copies, %d copies on the device: want the rows strided, nothing gathered", sc.strided, sc.dtod)
	}
	if grown := mem.HostBytes() - host0; grown > rows*gvinst.PageSize {
		t.Errorf("the walk over %d pages took %d bytes of host memory", rows, grown)
	}
	// What came back is what the device held, byte for byte; the rest
	// comes back when read.
	last := *cpu
	last.State[gvinst.S0] = (n - 1) * 8
	runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
	want, got := make([]byte, 16*n), make([]byte, 16*n)
	_ = refMem.Read(dataBase, want)
	if err := mem.Read(dataBase, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatal("memory differs from the CPU engine's")
	}
}

// TestResidentGrowsByPages runs the saxpy loop over footprints that grow
// by an element a launch, as cholesky's do (rows below column j, up to
// column j): a buffer that grows is made to the end of its last page, so
// the launches after it find it holding their footprints, and make no
// new buffer (each would copy the old one on the device and walk its
// pages) until the footprint leaves the page.
func TestResidentGrowsByPages(t *testing.T) {
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, 3000)
	res := Resident{Lazy: true}
	var grown []*resBuf
	for n := uint64(1000); n < 1010; n++ {
		xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
		if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.bufs) != 2 {
			t.Fatalf("%d elements: %d buffers, want one per array", n, len(res.bufs))
		}
		if n == 1001 {
			grown = append([]*resBuf(nil), res.bufs...)
			for _, b := range grown {
				if b.r.Hi%gvinst.PageSize != 0 {
					t.Errorf("a grown buffer ends at %#x, not at a page's end", b.r.Hi)
				}
			}
		}
		if n > 1001 && (res.bufs[0] != grown[0] || res.bufs[1] != grown[1]) {
			t.Errorf("%d elements: a new buffer, though the grown ones hold the footprints", n)
		}
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestResidentMergesMany runs the saxpy loop a row of 50 elements a
// launch, last row first (rows that share pages, every one a buffer of
// its own, y's pages all stale), then once over all 3000 elements: that
// launch merges the 60 buffers of each array into one, and the guest ends
// up as the CPU engine leaves it after the same two passes. Then the same
// rows first to last: the second row's footprint meets the end of the
// first's buffer, so its own buffer is made with room to grow, and the
// rows after it grow that one in place (a handful of allocations, not one
// a row).
func TestResidentMergesMany(t *testing.T) {
	const n, row = 3000, 50
	for _, forward := range []bool{false, true} {
		bs, k, ctx, fn := saxpyKernel(t)
		cc := &countingContext{Context: ctx}
		// One element more, which no launch reaches: no thread takes the
		// loop's exit.
		refMem, refCPU := lazyGuest(t, n+1)
		mem, cpu := lazyGuest(t, n+1)
		for pass := 0; pass < 2; pass++ {
			rc := *refCPU
			rc.State[gvinst.S2] = 8 * n
			runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		}
		res := Resident{Lazy: true}
		for i := uint64(0); i < n/row; i++ {
			a := (n/row - 1 - i) * row
			if forward {
				a = i * row
			}
			c := *cpu
			c.State[gvinst.S0] = 8 * a
			in := saxpyInput(k, &c, row+1, Range{dataBase + 8*a, dataBase + 8*(a+row)}, Range{dataBase + 0x8000 + 8*a, dataBase + 0x8000 + 8*(a+row)})
			if _, err := Launch(cc, fn, k, mem, in, &res); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case !forward && len(res.bufs) != 2*n/row:
			t.Fatalf("%d buffers after the rows backwards, want one per row and array (%d)", len(res.bufs), 2*n/row)
		case forward && (len(res.bufs) != 4 || cc.allocs > 12):
			t.Fatalf("forward: %d buffers and %d allocations after the rows, want two buffers per array (the first row's, and the one the others grew in place)", len(res.bufs), cc.allocs)
		}
		in := saxpyInput(k, cpu, n+1, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
		if _, err := Launch(cc, fn, k, mem, in, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.bufs) != 2 {
			t.Errorf("forward %v: %d buffers after the launch over everything, want one per array", forward, len(res.bufs))
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
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("forward %v: memory differs from the CPU engine's at byte %#x", forward, i)
				}
			}
		}
	}
}

// TestResidentMergeCopiesRuns launches the saxpy loop over the last
// quarter of its arrays, then over all of them: the merged buffers' first
// three quarters, which no old buffer holds, are copied in as one run per
// array, not a copy per page (atax's product on an H100 merged the rows
// its initialisation had made on the CPU before the device was ready in
// 27,048 copies of a page, 40 us each). The memory after it is the CPU
// engine's.
func TestResidentMergeCopiesRuns(t *testing.T) {
	const n = 3000
	bs, k, ctx, fn := saxpyKernel(t)
	cc := &countingContext{Context: ctx}
	refMem, refCPU := lazyGuest(t, n+1)
	mem, cpu := lazyGuest(t, n+1)
	const a = 3 * n / 4
	for pass := 0; pass < 2; pass++ {
		rc := *refCPU
		rc.State[gvinst.S2] = 8 * n
		if pass == 0 {
			rc.State[gvinst.S0] = 8 * a
		}
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
	}
	res := Resident{Lazy: true}
	c := *cpu
	c.State[gvinst.S0] = 8 * a
	in := saxpyInput(k, &c, n-a+1, Range{dataBase + 8*a, dataBase + 8*n}, Range{dataBase + 0x8000 + 8*a, dataBase + 0x8000 + 8*n})
	if _, err := Launch(cc, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	before := cc.htod
	in = saxpyInput(k, cpu, n+1, Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n})
	if _, err := Launch(cc, fn, k, mem, in, &res); err != nil {
		t.Fatal(err)
	}
	// Two arrays, 18 KB of each to copy in (over 4 pages): a run each,
	// and a few small copies (the launch's parameters, its error word).
	if copies := cc.htod - before; copies > 6 {
		t.Errorf("%d copies to the device for the merge, want a run per array", copies)
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
