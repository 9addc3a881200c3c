package accel

import (
	"testing"
	"time"

	"github.com/gxbit/gxbit/ptxgen"
)

// TestExtrapolate moves a replay on from the two before it: LU's
// trailing update, whose rows start a row and an element further and
// shorten by one an instance; and the progressions that do not
// extrapolate (a trip count or footprint going below zero, a site seen
// in one instance and not the other, another kernel).
func TestExtrapolate(t *testing.T) {
	k := &ptxgen.Kernel{TwoD: true}
	const row = 8 * 100
	mk := func(j uint64) *replay {
		lo := 0x10000 + j*(row+8)
		return &replay{k: k, start: []uint64{lo, 100 - j}, steps: []uint64{row, 0}, last: 98 - j,
			lastRow0: 99 - j, cpuIter: time.Duration(99-j) * time.Microsecond, insns: float64(4 * (99 - j)),
			obs: map[[2]uint64]*siteObs{{0x401000, 1}: {seen: [2]bool{true, true}, lo: [2]uint64{lo, lo + row}, hi: [2]uint64{lo + 8*(99-j), lo + row + 8*(99-j)}}},
			in:  ptxgen.LaunchInput{InnerTrip0: 99 - j, InnerSteps: []uint64{8}, Dense: []bool{true}}}
	}
	c := extrapolate(mk(3), mk(4))
	want := mk(5)
	if c == nil {
		t.Fatal("LU's progression did not extrapolate")
	}
	if !c.matches(want.start) || c.last != want.last || c.lastRow0 != want.lastRow0 || c.in.InnerTrip0 != want.in.InnerTrip0 || c.steps[0] != row {
		t.Errorf("extrapolated start %v last %d row %d trip %d steps %v, want %v %d %d %d", c.start, c.last, c.lastRow0, c.in.InnerTrip0, c.steps, want.start, want.last, want.lastRow0, want.in.InnerTrip0)
	}
	if o, w := c.obs[[2]uint64{0x401000, 1}], want.obs[[2]uint64{0x401000, 1}]; *o != *w {
		t.Errorf("extrapolated footprints %+v, want %+v", *o, *w)
	}
	if c.cpuIter != want.cpuIter || c.in.Dense != nil || c.before == nil {
		t.Errorf("cpuIter %v (want %v), Dense %v (want none: not trusted), before %p", c.cpuIter, want.cpuIter, c.in.Dense, c.before)
	}
	if n := c.next(0); n != nil {
		t.Error("an extrapolated replay went on to an instance that is not the next")
	}
	// Down to a trip count below zero: none.
	if extrapolate(mk(97), mk(98)) != nil {
		t.Error("a trip count below zero extrapolated")
	}
	a, b := mk(3), mk(4)
	b.obs[[2]uint64{0x401000, 1}].seen[1] = false
	if extrapolate(a, b) != nil {
		t.Error("a site seen in one instance and not the other extrapolated")
	}
	a, b = mk(3), mk(4)
	b.k = &ptxgen.Kernel{TwoD: true}
	if extrapolate(a, b) != nil {
		t.Error("two kernels' instances extrapolated")
	}
	a, b = mk(3), mk(4)
	b.obs[[2]uint64{0x401000, 1}].lo[0] = a.obs[[2]uint64{0x401000, 1}].lo[0] - 0x20000
	if extrapolate(a, b) != nil {
		t.Error("a footprint below address zero extrapolated")
	}
}
