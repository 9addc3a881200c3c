package accel

import (
	"reflect"
	"testing"

	"github.com/gxbit/gxbit/ptxgen"
)

// TestInterleaved checks which hot spots' device footprints make an
// instance's CPU side pay for bringing pages back and copying them in
// again: only the others' that launched since its last prediction (any,
// before its first) and still launch; never its own.
func TestInterleaved(t *testing.T) {
	a := &Accelerator{}
	upd, scale, initSpot := &spot{a: a}, &spot{a: a}, &spot{a: a}
	a.order = []*spot{upd, scale, initSpot}
	// A kernel that loads site 0 and stores site 1, and one that only
	// stores.
	k := &ptxgen.Kernel{Sites: []ptxgen.Site{{X86: 1}, {X86: 2, Store: true}}}
	storeOnly := &ptxgen.Kernel{Sites: []ptxgen.Site{{X86: 3, Store: true}}}
	arr := func(lo, hi uint64) ptxgen.Range { return ptxgen.Range{Lo: lo, Hi: hi} }

	if r, w := upd.interleaved(); r != nil || w != nil {
		t.Fatalf("nothing launched: reads %v, writes %v", r, w)
	}
	// The initialisation writes the matrix on the device, before the
	// update's first prediction: the first instance pays for it.
	initSpot.deviceUse(storeOnly, []ptxgen.Range{arr(0x10000, 0x20000)})
	if r, w := upd.interleaved(); r != nil || !reflect.DeepEqual(w, []ptxgen.Range{arr(0x10000, 0x20000)}) {
		t.Errorf("first prediction after the initialisation launched: reads %v, writes %v; want its write", r, w)
	}
	// The update's own launches: nothing comes again.
	upd.deviceUse(k, []ptxgen.Range{arr(0x10000, 0x18000), arr(0x18000, 0x20000)})
	if r, w := upd.interleaved(); r != nil || w != nil {
		t.Errorf("only its own launch since: reads %v, writes %v", r, w)
	}
	// Another hot spot launching between the update's instances (LU's
	// trailing update around its column scaling).
	scale.deviceUse(k, []ptxgen.Range{arr(0x30000, 0x31000), arr(0x12000, 0x13000)})
	r, w := upd.interleaved()
	if !reflect.DeepEqual(r, []ptxgen.Range{arr(0x30000, 0x31000)}) || !reflect.DeepEqual(w, []ptxgen.Range{arr(0x12000, 0x13000)}) {
		t.Errorf("after the other's launch: reads %v, writes %v", r, w)
	}
	if r, w := upd.interleaved(); r != nil || w != nil {
		t.Errorf("no launch since the last prediction: reads %v, writes %v", r, w)
	}
	// A disarmed hot spot launches no more.
	scale.deviceUse(k, []ptxgen.Range{arr(0x30000, 0x31000), arr(0x12000, 0x13000)})
	scale.rep.Disarmed = true
	if r, w := upd.interleaved(); r != nil || w != nil {
		t.Errorf("the other disarmed: reads %v, writes %v", r, w)
	}
}

// TestUnionRanges checks the merging of footprints: sorted, disjoint,
// touching ones joined, empty ones dropped.
func TestUnionRanges(t *testing.T) {
	got := unionRanges([]ptxgen.Range{{Lo: 50, Hi: 60}, {Lo: 0, Hi: 10}, {Lo: 10, Hi: 20}, {Lo: 30, Hi: 30}, {Lo: 55, Hi: 70}, {Lo: 15, Hi: 18}})
	want := []ptxgen.Range{{Lo: 0, Hi: 20}, {Lo: 50, Hi: 70}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("union %v, want %v", got, want)
	}
	var seen []ptxgen.Range
	within(ptxgen.Range{Lo: 5, Hi: 55}, want, func(r ptxgen.Range) { seen = append(seen, r) })
	if w := []ptxgen.Range{{Lo: 5, Hi: 20}, {Lo: 50, Hi: 55}}; !reflect.DeepEqual(seen, w) {
		t.Errorf("within %v, want %v", seen, w)
	}
}
