package accel

import (
	"testing"
	"time"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// pageResidency is a residency of one buffer the device holds, held, in
// which the guest wrote the pages dirty since it was copied in.
type pageResidency struct {
	held  ptxgen.Range
	dirty map[uint64]bool // page numbers
}

func (p pageResidency) ToCopy(r ptxgen.Range) uint64 {
	n := p.Unheld(r)
	for pn := r.Lo / gvinst.PageSize; r.Hi > r.Lo && pn <= (r.Hi-1)/gvinst.PageSize; pn++ {
		if p.dirty[pn] {
			lo, hi := max(r.Lo, pn*gvinst.PageSize, p.held.Lo), min(r.Hi, (pn+1)*gvinst.PageSize, p.held.Hi)
			if lo < hi {
				n += hi - lo
			}
		}
	}
	return n
}

func (p pageResidency) Unheld(r ptxgen.Range) uint64 {
	n := r.Hi - r.Lo
	if lo, hi := max(r.Lo, p.held.Lo), min(r.Hi, p.held.Hi); lo < hi {
		n -= hi - lo
	}
	return n
}

func (p pageResidency) ToMerge(ptxgen.Range) uint64 { return 0 }

// TestOwnPagesShared follows cholesky's columns at 2400 on an H100's
// measured costs: the hot spot launched its first column, and the cost
// model sent the next one to the CPU, which wrote a double in every row
// below the diagonal. The next column's launch copies those pages in
// again, once: priced as an outlay the columns still to come share, it
// pays against its 1 ms on the CPU; the same pages written by other host
// code between the instances come again at every instance, and are
// charged whole (as every page was before: 3.8 ms of copies against 1 ms
// of CPU, and fourteen columns later the hot spot was disarmed).
func TestOwnPagesShared(t *testing.T) {
	const n, row = 2400, 2400 * 8
	const base = 0x10000000
	c := DeviceCosts{LaunchLatency: 428 * time.Microsecond, HostToDevice: 4.48e9, DeviceToHost: 7.4e9}
	// Column j's kernel: loads row i and row j, stores A[i][j] for
	// i > j; its sites' footprints over the rows below the diagonal.
	k := &ptxgen.Kernel{Sites: []ptxgen.Site{{X86: 1}, {X86: 2}, {X86: 3, Store: true}}}
	col := func(j uint64) []ptxgen.Range {
		return []ptxgen.Range{
			{Lo: base + (j+1)*row, Hi: base + n*row},                     // A[i][0..j)
			{Lo: base + j*row, Hi: base + j*row + j*8},                   // A[j][0..j)
			{Lo: base + (j+1)*row + j*8, Hi: base + (n-1)*row + j*8 + 8}, // A[i][j]
		}
	}
	matrix := ptxgen.Range{Lo: base, Hi: base + n*row}
	// The CPU ran column 47: a page in every row below it is dirty.
	dirty := map[uint64]bool{}
	for i := uint64(48); i < n; i++ {
		dirty[(base+i*row+47*8)/gvinst.PageSize] = true
	}
	res := pageResidency{held: matrix, dirty: dirty}
	predict := func(sp *spot, j uint64) Estimate {
		e := c.Predict(n-1-j, 430*time.Nanosecond, 250, 100*time.Microsecond, 0, 150*time.Nanosecond)
		e.Copy = sp.launchCopies(res, k, ptxgen.LaunchInput{Sites: col(j)}).time(c, 1, 1, n)
		return e
	}
	own := &spot{a: &Accelerator{}}
	own.ranOnCPU(k, col(47))
	if e := predict(own, 48); !e.Pays() || e.Copy > 50*time.Microsecond {
		t.Errorf("column 48 after the hot spot's own CPU run of column 47: %s; want it to pay, its copies shared", e)
	}
	other := &spot{}
	if e := predict(other, 48); e.Pays() || e.Copy < 2*time.Millisecond {
		t.Errorf("column 48 after other host code wrote the same pages: %s; want its copies charged whole, not paying", e)
	}
	// A launch copies them in: the next CPU run's pages are its own again
	// from nothing.
	own.deviceUse(k, col(48))
	if own.fellBack != nil {
		t.Errorf("after a launch: own pages %v, want none", own.fellBack)
	}
}

// TestTailAt checks that a CPU tail's timing prices iterations of other
// sizes in proportion to their instructions, and that the fastest per
// instruction is kept: cholesky's first columns, the shortest, must not
// price the long ones.
func TestTailAt(t *testing.T) {
	sp := &spot{}
	if d := sp.tailAt(1000); d != 0 {
		t.Fatalf("no tail timed: %v", d)
	}
	sp.tailInsns = 100
	sp.timedTail(time.Microsecond)
	if d := sp.tailAt(1000); d != 10*time.Microsecond {
		t.Errorf("a tail of 100 instructions in 1 us prices 1000 at %v, want 10 us", d)
	}
	// A longer tail, slower per instruction: kept out.
	sp.tailInsns = 1000
	sp.timedTail(20 * time.Microsecond)
	if d := sp.tailAt(1000); d != 10*time.Microsecond {
		t.Errorf("after a slower tail: %v, want 10 us", d)
	}
	// Faster per instruction: replaces it.
	sp.timedTail(5 * time.Microsecond)
	if d := sp.tailAt(2000); d != 10*time.Microsecond {
		t.Errorf("after a faster tail: 2000 instructions at %v, want 10 us", d)
	}
	// A tail whose instructions are unknown prices as timed.
	u := &spot{}
	u.timedTail(3 * time.Microsecond)
	if d := u.tailAt(1000); d != 3*time.Microsecond {
		t.Errorf("unknown instructions: %v, want 3 us", d)
	}
}

// TestRowAt checks the instructions of a row after the probed ones.
func TestRowAt(t *testing.T) {
	if got := rowAt([]float64{100, 200, 300}, 5); got != 800 {
		t.Errorf("linear rows: %g, want 800", got)
	}
	if got := rowAt([]float64{300, 200, 100}, 5); got != 1 {
		t.Errorf("shrinking past empty: %g, want 1", got)
	}
	if got := rowAt([]float64{100, 5000, 5100}, 5); got != 5100 {
		t.Errorf("not linear: %g, want the last row's 5100", got)
	}
	if got := rowAt([]float64{100, 200}, 5); got != 200 {
		t.Errorf("two rows: %g, want the last row's 200", got)
	}
}

// TestMeasuredCostsOnePricing checks that every prediction prices copies
// at what the launches measured since the start where it is slower than
// the device's bare copies: a probed instance's and an extrapolated
// replay's alike (replayPays priced at the start's bandwidths).
func TestMeasuredCostsOnePricing(t *testing.T) {
	a := &Accelerator{costs: &DeviceCosts{HostToDevice: 15e9, HostToNewBuffer: 10e9, DeviceToDevice: 100e9, DeviceToHost: 8e9}}
	a.copyIn.add(240<<20, 180*time.Millisecond)
	a.merges.add(160<<20, 400*time.Millisecond)
	c := a.measuredCosts()
	in, merge := float64(240<<20)/0.18, float64(160<<20)/0.4
	near := func(got, want float64) bool { return got > 0.99*want && got < 1.01*want }
	if !near(c.HostToDevice, in) || !near(c.HostToNewBuffer, in) || !near(c.DeviceToDevice, merge) {
		t.Errorf("measured costs: to device %g, new buffers %g, on the device %g; want %g, %g, %g", c.HostToDevice, c.HostToNewBuffer, c.DeviceToDevice, in, in, merge)
	}
	if c.DeviceToHost != 8e9 {
		t.Errorf("bringing back %g, want the device's 8e9 (nothing brought back yet)", c.DeviceToHost)
	}
}

// TestRecentLeast checks that one stalled launch does not price the
// instances after it, and that a kernel that got slower for good does
// within recentLaunches launches.
func TestRecentLeast(t *testing.T) {
	var r recentLeast
	us := time.Microsecond
	for i, c := range []struct{ d, want time.Duration }{
		{2 * us, 2 * us},
		{113 * us, 2 * us}, // the stalled one
		{2 * us, 2 * us},
		{5 * us, 2 * us},
		{5 * us, 2 * us},
		{5 * us, 5 * us}, // slower for good: three in a row
	} {
		if got := r.add(c.d); got != c.want {
			t.Errorf("launch %d at %v: %v, want %v", i, c.d, got, c.want)
		}
	}
}

// TestExpectedInstances: a sweep nest whose entries the profile sampled
// (5) inside a time step's nest that ran 20 steps has 20 instances, as
// its level's trips around it say; a nest entered twice whose mapped
// level is its second has its entries times the first level's mean trips.
func TestExpectedInstances(t *testing.T) {
	sweep := &profile.HotSpot{Entries: 5, Levels: []profile.Level{{Header: 0x1608, ObservedTrips: []int64{2000, 2000}}, {Header: 0x1618}}}
	steps := &profile.HotSpot{Entries: 1, Levels: []profile.Level{{Header: 0x15f0, ObservedTrips: []int64{20}}, {Header: 0x1608}, {Header: 0x1618}}}
	sp := &spot{hs: sweep}
	if got := sp.expectedInstances(nil); got != 5 {
		t.Errorf("alone: %d instances, want the 5 entries sampled", got)
	}
	if got := sp.expectedInstances([]*profile.HotSpot{sweep, steps}); got != 20 {
		t.Errorf("inside the steps' nest: %d instances, want 20", got)
	}
	inner := &spot{hs: &profile.HotSpot{Entries: 2, Levels: []profile.Level{{Header: 0x2000, ObservedTrips: []int64{30, 50}}, {Header: 0x2010}}}, levelIndex: 1}
	if got := inner.expectedInstances(nil); got != 80 {
		t.Errorf("a second level: %d instances, want 2 entries times 40 trips", got)
	}
}
