package accel

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// TestExitArrival checks the trip count model against stepping the loop:
// the first arrival whose compare says leave.
func TestExitArrival(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	cmps := []gvinst.Cmp{gvinst.CmpLt, gvinst.CmpLe, gvinst.CmpGt, gvinst.CmpGe, gvinst.CmpNe, gvinst.CmpEq}
	types := []gvinst.Type{gvinst.S32, gvinst.U32, gvinst.S64, gvinst.U64, gvinst.S8}
	for n := 0; n < 20000; n++ {
		e := ptxgen.ExitTest{Cmp: cmps[rng.Intn(len(cmps))], Type: types[rng.Intn(len(types))], ContinueIf: rng.Intn(2) == 0}
		a0 := uint64(rng.Int63n(200) - 100)
		da := uint64(rng.Int63n(9) - 4)
		b0 := uint64(rng.Int63n(200) - 100)
		db := uint64(0)
		if rng.Intn(4) == 0 {
			db = uint64(rng.Int63n(3) - 1)
		}
		if rng.Intn(3) == 0 {
			e.BImm, e.Imm = true, int64(b0)
		}
		// Brute force: step up to 2000 arrivals, in the compare's type.
		want, found := uint64(0), false
		for j := uint64(0); j < 2000; j++ {
			b := b0 + db*j
			if e.BImm {
				b = uint64(e.Imm)
			}
			if !e.EvalExit(a0+da*j, b) {
				want, found = j, true
				break
			}
		}
		got, ok := exitArrival(e, a0, da, b0, db)
		if ok && !found && got >= 2000 {
			// Beyond the stepping: check the claimed exit directly.
			at := func(j uint64) bool {
				b := b0 + db*j
				if e.BImm {
					b = uint64(e.Imm)
				}
				return e.EvalExit(a0+da*j, b)
			}
			if at(got) || !at(got-1) {
				t.Fatalf("%+v a0=%d da=%d b0=%d db=%d: model says %d, which is not the first exit", e, int64(a0), int64(da), int64(b0), int64(db), got)
			}
			continue
		}
		if ok && (!found || got != want) {
			t.Fatalf("%+v a0=%d da=%d b0=%d db=%d: model says %d, stepping says %d (found %v)", e, int64(a0), int64(da), int64(b0), int64(db), got, want, found)
		}
		// The model may decline (wrapping, no exit), never be wrong; it
		// must find the plain counted loops.
		if !ok && found && want < 150 && e.Type.IsSigned() && e.Type.Bits() >= 32 && (e.Cmp == gvinst.CmpLt || e.Cmp == gvinst.CmpGt) && e.ContinueIf && da != 0 {
			t.Errorf("%+v a0=%d da=%d b0=%d db=%d: model declined, stepping exits at %d", e, int64(a0), int64(da), int64(b0), int64(db), want)
		}
	}
}

// TestCheckStrides checks the probe against the profile's access
// functions: heat3d's write B[i][j][k] along i moves by 102400 bytes per
// probed iteration; a profile that fitted 0 there (a level it saw at one
// value) is not this run's model, and the launch must prove the iterations
// disjoint from the footprints (restride set). A matching step, a window
// whose width changes (a triangular row) and an access the profile did not
// fit leave it alone.
func TestCheckStrides(t *testing.T) {
	const store, load = 0x4017b7, 0x401763
	obs := func(lo0, w0, lo1, w1 uint64) *siteObs {
		return &siteObs{seen: [2]bool{true, true}, lo: [2]uint64{lo0, lo1}, hi: [2]uint64{lo0 + w0, lo1 + w1}}
	}
	tests := []struct {
		name  string
		steps map[[2]uint64]modelStep
		byX86 map[[2]uint64]*siteObs
		want  string
	}{
		{"matching", map[[2]uint64]modelStep{{store, 1}: {102400, true}},
			map[[2]uint64]*siteObs{{store, 1}: obs(0x10000, 640, 0x10000+102400, 640)}, ""},
		{"fitted 0 along i", map[[2]uint64]modelStep{{store, 1}: {0, true}, {load, 0}: {102400, true}},
			map[[2]uint64]*siteObs{{store, 1}: obs(0x10000, 640, 0x10000+102400, 640), {load, 0}: obs(0x90000, 640, 0x90000+102400, 640)},
			"the access at 0x4017b7 moves by 102400 bytes per iteration, the profile says 0"},
		{"triangular window", map[[2]uint64]modelStep{{store, 1}: {0, true}},
			map[[2]uint64]*siteObs{{store, 1}: obs(0x10000, 8, 0x10000+800, 16)}, ""},
		{"not fitted", map[[2]uint64]modelStep{{store, 1}: {}},
			map[[2]uint64]*siteObs{{store, 1}: obs(0x10000, 640, 0x10000+102400, 640)}, ""},
	}
	for _, tc := range tests {
		sp := &spot{modelStep: tc.steps}
		restride := ""
		sp.checkStrides(tc.byX86, &restride)
		if restride != tc.want {
			t.Errorf("%s: restride %q, want %q", tc.name, restride, tc.want)
		}
	}
	// fcond's two sides of an if store to one row of 32000 bytes: each
	// side's window happened to keep its width and move by 31984 (the
	// first element that took it differed), the row's by 32000.
	const then, other = 0x401652, 0x401660
	sides := map[[2]uint64]modelStep{{then, 1}: {32000, true}, {other, 1}: {32000, true}}
	row := 0x100000
	bySides := map[[2]uint64]*siteObs{
		{then, 1}:  obs(uint64(row+16), 31984, uint64(row+32000), 31984),
		{other, 1}: obs(uint64(row), 31992, uint64(row+32000), 32000),
	}
	for _, grouped := range []bool{true, false} {
		sp := &spot{modelStep: sides, groupOf: map[[2]uint64]int{{then, 1}: 3, {other, 1}: 3}}
		if !grouped {
			sp.groupOf[[2]uint64{other, 1}] = 4
		}
		restride := ""
		sp.checkStrides(bySides, &restride)
		if grouped && restride != "" {
			t.Errorf("the two sides of an if in one row: restride %q", restride)
		}
		if !grouped && restride == "" {
			t.Errorf("a side alone in its array moving by 31984 for 32000: no restride")
		}
	}
	// An earlier reason (the IVs moved otherwise) stays.
	sp := &spot{modelStep: tests[1].steps}
	restride := "s1 moves by 0x8 per iteration, the profile says 4"
	sp.checkStrides(tests[1].byX86, &restride)
	if restride != "s1 moves by 0x8 per iteration, the profile says 4" {
		t.Errorf("restride replaced: %q", restride)
	}
}

// TestDisjointIterationsPerInstance checks the footprint proof a launch
// makes when its profile came from another size: threemm's product writes
// row i of its result and reads row i of its first operand, which the
// profile put in one group (it wrote E in one call and read it in the
// next); in one instance they are two matrices apart, and each row alone
// moves by its width, so the iterations are disjoint. Rows of one matrix
// read one ahead of the row written, and a write observed in one of the
// two iterations only, are still refused; a write observed in neither is
// left to the empty footprint the launch gives it.
func TestDisjointIterationsPerInstance(t *testing.T) {
	const write, read = 0x4019b0, 0x401998
	k := &ptxgen.Kernel{Sites: []ptxgen.Site{{X86: read}, {X86: write, Store: true}}}
	sp := &spot{kernel: k, hs: &profile.HotSpot{Verdict: profile.VerdictParallel, ParallelLevels: []int{0}},
		groupOf: map[[2]uint64]int{{read, 0}: 0, {write, 1}: 0}}
	row := func(lo uint64) *siteObs {
		return &siteObs{seen: [2]bool{true, true}, lo: [2]uint64{lo, lo + 1200}, hi: [2]uint64{lo + 1200, lo + 2400}}
	}
	apart := map[[2]uint64]*siteObs{{read, 0}: row(0x100000), {write, 1}: row(0x200000)}
	if why, _ := sp.disjointIterations(apart, 300); why != "" {
		t.Errorf("rows of two matrices: %s", why)
	}
	ahead := map[[2]uint64]*siteObs{{read, 0}: row(0x100000 + 1200), {write, 1}: row(0x100000)}
	if why, _ := sp.disjointIterations(ahead, 300); !strings.Contains(why, "overlaps the next") {
		t.Errorf("a row read one ahead of the row written: %q, want the windows to overlap", why)
	}
	once := row(0x100000)
	once.seen[1] = false
	seenOnce := map[[2]uint64]*siteObs{{read, 0}: row(0x100000), {write, 1}: once}
	if why, _ := sp.disjointIterations(seenOnce, 300); !strings.Contains(why, "did not run in both") {
		t.Errorf("a write observed in one iteration only: %q", why)
	}
	// A write that ran in neither is left out: the launch gives it an
	// empty footprint (unseenSites), which a thread that runs it fails.
	unseen := map[[2]uint64]*siteObs{{read, 0}: row(0x100000)}
	if why, _ := sp.disjointIterations(unseen, 300); why != "" {
		t.Errorf("a write observed in neither iteration: %q, want it left to its empty footprint", why)
	}
	sites := []ptxgen.Range{{Lo: 0x100000, Hi: 0x200000}, {Lo: 0x100000, Hi: 0x200000}}
	sp.unseenSites(unseen, sites)
	if sites[0].Hi == 0 || sites[1] != (ptxgen.Range{}) {
		t.Errorf("footprints after unseenSites: %v, want the write's empty and the read's kept", sites)
	}
}
