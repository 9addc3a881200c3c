package accel_test

import (
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestTwoSweepsOffloaded profiles profile/testdata/twosweeps.c (a time
// loop around two sweeps of a grid: the first stores on both sides of an
// if and counts per row, the second folds the result back) with a probe
// budget the first sweep spends in the first time step, and slices
// shorter than a row, as at a real size; then offloads it on the
// simulated GPU. Both sweeps must launch, and the output be native's.
// Before, the second sweep was sequential (its induction variables were
// lost: TestSecondSweepSampled) and ran on the CPU, its arrays crossing
// the bus twice a step; the first fell back at every instance, its two
// conditional stores' windows taken for overlapping.
func TestTwoSweepsOffloaded(t *testing.T) {
	path := gccStatic(t, filepath.Join("..", "profile", "testdata", "twosweeps.c"), filepath.Join(t.TempDir(), "twosweeps"), "-O2")
	args := []string{path, "48", "120", "3"}
	prof := phase1Collect(t, pipeline.Config{Path: path, Args: args, Engine: testEngine}, profile.CollectOptions{MaxProbesPerNest: 3000, SliceInsns: 256})
	// The sweeps are the loops right inside the time loop (a hot spot of
	// one level whose inner loops are the sweeps' rows and columns).
	sweeps := map[string]bool{}
	for _, h := range prof.HotSpots {
		if len(h.Levels) == 1 && len(h.InnerLoops) == 4 {
			for _, il := range h.InnerLoops {
				if il.Parent == h.Levels[0].Index {
					sweeps[il.Header.String()] = true
				}
			}
		}
	}
	if len(sweeps) != 2 {
		t.Fatalf("the time loop's sweeps: %v, want two", sweeps)
	}
	rep := offloadedAsNative(t, path, args, prof)
	launched := map[string]int{}
	for _, h := range rep.HotSpots {
		launched[h.Header] += h.Launches
	}
	n := 0
	for s := range sweeps {
		if launched[s] > 0 {
			n++
		}
	}
	if n != 2 {
		for _, h := range rep.HotSpots {
			t.Logf("%s: %d launches, fallbacks %v %s", h.Header, h.Launches, h.FallbackReasons, h.LastFallback)
		}
		t.Fatalf("%d of the sweeps %v launched, want both", n, sweeps)
	}
}
