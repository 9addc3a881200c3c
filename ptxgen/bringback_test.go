package ptxgen

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gvinst"
)

// bringBackGuest is a saxpy guest over n doubles, x at dataBase and y
// right after it, off a page boundary (x's last page is y's first), in
// memory of its own and in a reference memory; and the saxpy kernel
// loaded on gpusim behind a context that counts copies.
type bringBackGuest struct {
	t        *testing.T
	n        int
	mem, ref *gvinst.Memory
	cpu      *gvinst.CPU
	bs       blockSet
	k        *Kernel
	ctx      *countingContext
	fn       gpu.Function
	xr, yr   Range
	res      *Resident
}

func newBringBackGuest(t *testing.T, n int) *bringBackGuest {
	t.Helper()
	bs, k, sim, fn := saxpyKernel(t)
	g := &bringBackGuest{t: t, n: n, bs: bs, k: k, ctx: &countingContext{Context: sim}, fn: fn, res: &Resident{Lazy: true}}
	xBase := uint64(dataBase)
	yBase := xBase + uint64(8*n) + 8*13
	g.xr, g.yr = Range{xBase, xBase + uint64(8*n)}, Range{yBase, yBase + uint64(8*n)}
	size := (g.yr.Hi - dataBase + gvinst.PageSize) &^ (gvinst.PageSize - 1)
	guest := func() *gvinst.Memory {
		mem := gvinst.NewMemory(1 << 28)
		if err := mem.Map(dataBase, size, gvinst.PermRead|gvinst.PermWrite); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			_ = mem.Store(xBase+uint64(8*i), 8, math.Float64bits(float64(i%97)*0.1+1/3.0))
			_ = mem.Store(yBase+uint64(8*i), 8, math.Float64bits(float64(i%89)/7.0))
		}
		return mem
	}
	g.mem, g.ref = guest(), guest()
	g.cpu = &gvinst.CPU{PC: 0x1000}
	g.cpu.State[gvinst.MXCSR] = 0x1f80
	g.cpu.State[gvinst.S6] = xBase
	g.cpu.State[gvinst.S7] = yBase
	g.cpu.State[gvinst.S2] = uint64(n) * 8
	g.cpu.State[gvinst.XReg(0)] = math.Float64bits(1.0000001)
	return g
}

// launch runs the saxpy loop's first n-tail iterations as a launch that
// leaves y on the device, and the whole loop on the reference memory.
func (g *bringBackGuest) launch(tail int) {
	g.t.Helper()
	in := saxpyInput(g.k, g.cpu, uint64(g.n), g.xr, g.yr)
	in.Count = uint64(g.n - tail)
	if _, err := Launch(g.ctx, g.fn, g.k, g.mem, in, g.res); err != nil {
		g.t.Fatal(err)
	}
	rc := *g.cpu
	runToSyscall(g.t, gvinst.NewInterpreter(g.ref, g.bs, gvinst.InterpOptions{}), &rc)
}

// runTail runs the loop's last tail iterations on the CPU engine over the
// guest's memory.
func (g *bringBackGuest) runTail(tail int) {
	g.t.Helper()
	last := *g.cpu
	last.State[gvinst.S0] = uint64(g.n-tail) * 8
	runToSyscall(g.t, gvinst.NewInterpreter(g.mem, g.bs, gvinst.InterpOptions{}), &last)
}

// same fails the test unless the guest's memory holds what the reference
// does, every byte.
func (g *bringBackGuest) same(what string) {
	g.t.Helper()
	n := g.yr.Hi - dataBase
	want, got := make([]byte, n), make([]byte, n)
	_ = g.ref.Read(dataBase, want)
	if err := g.mem.Read(dataBase, got); err != nil {
		g.t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		i := 0
		for want[i] == got[i] {
			i++
		}
		g.t.Fatalf("%s: memory differs from the CPU engine's at %#x", what, dataBase+uint64(i))
	}
}

// TestBringBackSequentialRead reads a 1 MiB array a launch left on the
// device in order, as the final checksum of a program does: it comes back
// in a few copies whose runs double from the fault window's (five: 16,
// 32, 64, 128 pages and the rest; a page at a time to start with took
// nine), every byte what the CPU engine computes.
func TestBringBackSequentialRead(t *testing.T) {
	const pages = 256
	g := newBringBackGuest(t, pages*gvinst.PageSize/8)
	g.launch(1)
	g.runTail(1)
	d0, st0 := g.ctx.dtoh, g.res.BringBackStats()
	for a := g.yr.Lo; a < g.yr.Hi; a += 8 {
		got, err := g.mem.Load(a, 8)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := g.ref.Load(a, 8); got != want {
			t.Fatalf("y at %#x: %#x, want %#x", a, got, want)
		}
	}
	st := g.res.BringBackStats()
	if calls := g.ctx.dtoh - d0; calls > 5 || st.Runs-st0.Runs != uint64(calls) {
		t.Errorf("reading y in order brought it back in %d copies (%d runs), want at most 5", calls, st.Runs-st0.Runs)
	}
	if st.Bytes-st0.Bytes < g.yr.Hi-g.yr.Lo-gvinst.PageSize {
		t.Errorf("brought back %d bytes of y's %d", st.Bytes-st0.Bytes, g.yr.Hi-g.yr.Lo)
	}
	g.same("after reading y")
	if err := g.res.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBringBackTail lets the CPU run the last 2000 iterations of a launch
// over a device-resident array, as a CPU tail runs the last row of a
// matrix: BringBack over the tail's footprint brings its stale pages back
// in one batch of one copy a range (x's last elements share a page with
// y's first), and the tail then finds no page stale.
func TestBringBackTail(t *testing.T) {
	const n, tail = 40000, 2000
	g := newBringBackGuest(t, n)
	g.launch(tail)
	d0, st0 := g.ctx.dtoh, g.res.BringBackStats()
	foot := []Range{
		{g.xr.Hi - 8*tail, g.xr.Hi},
		{g.yr.Hi - 8*tail, g.yr.Hi},
	}
	if err := g.res.BringBack(foot); err != nil {
		t.Fatal(err)
	}
	if calls, runs := g.ctx.dtoh-d0, g.res.BringBackStats().Runs-st0.Runs; calls != 1 || runs != 2 {
		t.Errorf("bringing the tail's footprint back took %d copies of %d runs, want one batch of 2 (y's last pages, and y's first, which x's last elements share)", calls, runs)
	}
	g.runTail(tail)
	if st := g.res.BringBackStats(); st.Faults != st0.Faults {
		t.Errorf("the tail found %d pages stale after its footprint came back", st.Faults-st0.Faults)
	}
	if g.res.Stale(Range{g.yr.Lo, g.yr.Hi - 8*tail - gvinst.PageSize}) == 0 {
		t.Error("the rest of y should have stayed on the device")
	}
	g.same("after the tail")
	if err := g.res.Close(); err != nil {
		t.Fatal(err)
	}
	g.same("after Close")
}

// TestBringBackDifferential leaves y on the device and then reads, writes
// and brings back ranges of it at random (jumping around, across y's
// first page, which it shares with x, and the pages the guest wrote since
// a bring-back), launches again and checks that the guest sees every
// byte the CPU engine's run does, after each step and at the end.
func TestBringBackDifferential(t *testing.T) {
	const n = 24000 // 47 pages of each array
	for _, window := range []int{1, 4, faultWindow} {
		g := newBringBackGuest(t, n)
		g.res.FaultWindow = window
		rng := rand.New(rand.NewSource(int64(window)))
		for round := 0; round < 3; round++ {
			g.launch(1)
			g.runTail(1)
			for op := 0; op < 200; op++ {
				i := rng.Intn(n + 13) // y and the 13 words before it
				a := g.yr.Lo - 8*13 + uint64(8*i)
				switch rng.Intn(4) {
				case 0, 1:
					got, err := g.mem.Load(a, 8)
					if err != nil {
						t.Fatal(err)
					}
					if want, _ := g.ref.Load(a, 8); got != want {
						t.Fatalf("window %d round %d op %d: %#x holds %#x, want %#x", window, round, op, a, got, want)
					}
				case 2:
					v := rng.Uint64()
					for _, m := range []*gvinst.Memory{g.mem, g.ref} {
						if err := m.Store(a, 8, v); err != nil {
							t.Fatal(err)
						}
					}
				case 3:
					var rs []Range
					for range 1 + rng.Intn(3) {
						lo := g.yr.Lo - 8*13 + uint64(rng.Intn(8*(n+13)))
						rs = append(rs, Range{lo, min(lo+uint64(rng.Intn(12*gvinst.PageSize)), g.yr.Hi)})
					}
					if err := g.res.BringBack(rs); err != nil {
						t.Fatal(err)
					}
				}
			}
			g.same("after the random accesses")
		}
		if err := g.res.Close(); err != nil {
			t.Fatal(err)
		}
		g.same("after Close")
	}
}

// TestLoadBatchesRuns changes one element every 128 KiB of x (farther
// apart than a copy joins changes over) after a launch, and launches
// again: the launch copies the eight changed elements in in one batch,
// one call (a copy each took eight), and the guest ends as the CPU
// engine leaves it.
func TestLoadBatchesRuns(t *testing.T) {
	const n = 1 << 17 // 1 MiB of each array
	g := newBringBackGuest(t, n)
	g.launch(1)
	g.runTail(1)
	for e := 0; e < n; e += 16 << 10 {
		a := g.xr.Lo + uint64(8*e) + 8
		for _, m := range []*gvinst.Memory{g.mem, g.ref} {
			v, _ := m.Load(a, 8)
			if err := m.Store(a, 8, v^0x10); err != nil {
				t.Fatal(err)
			}
		}
	}
	h0 := g.ctx.htod
	in := saxpyInput(g.k, g.cpu, uint64(g.n), g.xr, g.yr)
	st, err := Launch(g.ctx, g.fn, g.k, g.mem, in, g.res)
	if err != nil {
		t.Fatal(err)
	}
	if calls := g.ctx.htod - h0; calls != 1 || st.BytesIn < 8 || st.BytesIn > 8*gvinst.PageSize {
		t.Errorf("the launch copied %d bytes in in %d calls, want the 8 changed elements in one", st.BytesIn, calls)
	}
	if st.Parts.CopiesHtoD != 1 {
		t.Errorf("the launch's copy parts count %d copies in, want one batch", st.Parts.CopiesHtoD)
	}
	rc := *g.cpu
	runToSyscall(t, gvinst.NewInterpreter(g.ref, g.bs, gvinst.InterpOptions{}), &rc)
	g.runTail(1)
	g.same("after the second launch")
	if err := g.res.Close(); err != nil {
		t.Fatal(err)
	}
}

// mappedContext is a context whose host memory the device reaches
// (gpu.MappedAllocator, gpusim's), counting copies from the device and
// memsets.
type mappedContext struct {
	gpu.Context
	ma            gpu.MappedAllocator
	dtoh, memsets int
}

func (c *mappedContext) AllocMapped(n uint64) ([]byte, gpu.DevicePtr, error) {
	return c.ma.AllocMapped(n)
}

func (c *mappedContext) FreeMapped(b []byte) error { return c.ma.FreeMapped(b) }

func (c *mappedContext) CopyDtoH(dst []byte, src gpu.DevicePtr) error {
	c.dtoh++
	return c.Context.CopyDtoH(dst, src)
}

func (c *mappedContext) Memset(dst gpu.DevicePtr, b byte, n uint64) error {
	c.memsets++
	return c.Context.Memset(dst, b, n)
}

// TestErrorRecordMapped launches the saxpy kernel with a lazy Resident
// over a context with mapped host memory: the kernels' error record lies
// there, so no launch copies it back or clears it with a driver call (a
// copy each after every launch before), and a launch whose kernel fails
// is still told, and the one after it succeeds.
func TestErrorRecordMapped(t *testing.T) {
	const n = 1000
	_, k, sim, fn := saxpyKernel(t)
	ctx := &mappedContext{Context: sim, ma: sim.(gpu.MappedAllocator)}
	mem, cpu := lazyGuest(t, n)
	res := Resident{Lazy: true}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	for round, fail := range []bool{false, false, true, false, true, false} {
		xf := xr
		if fail {
			xf.Hi = xr.Lo + 8*100 // threads past x[99] fail
		}
		_, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xf, yr), &res)
		var ke *KernelError
		if fail != (err != nil) || fail && (!errors.As(err, &ke) || ke.Code != ErrCodeFootprint) {
			t.Fatalf("round %d: want failure %v, got %v", round, fail, err)
		}
	}
	if ctx.dtoh != 0 || ctx.memsets != 0 {
		t.Errorf("the launches made %d copies from the device and %d memsets, want none", ctx.dtoh, ctx.memsets)
	}
	if err := res.Close(); err != nil {
		t.Fatal(err)
	}
}
