package accel_test

import (
	"slices"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestIfSidesParallel profiles and offloads testdata/ifsides.c, whose
// store a[i][j] = x gcc -O2 duplicates into both sides of the if: each
// copy runs at the scattered iterations that took its side. Phase 1 must
// fit them from those points (no two of which differ in one level alone:
// "too few samples to fit level 0" before) and find the r, i, j nest
// parallel at i and j; phase 2 must take each copy to move with the row
// its loop reads whole, not by the accidental step of its own window (it
// saw iterations dependent, then its footprint too short, before), and
// launch it with the native output.
func TestIfSidesParallel(t *testing.T) {
	path := buildC(t, "ifsides")
	args := []string{path, "40", "50"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	nest := ""
	for _, h := range prof.HotSpots {
		if len(h.Levels) != 3 {
			continue
		}
		nest = h.Entry.String()
		var kinds []string
		for _, l := range h.Levels {
			kinds = append(kinds, l.Verdict)
		}
		if !slices.Equal(kinds, []string{"sequential", "parallel", "parallel"}) {
			t.Fatalf("the r, i, j nest at %s has levels %v: %s", nest, kinds, h.Reason)
		}
	}
	if nest == "" {
		t.Fatal("the r, i, j nest is no hot spot")
	}
	rep := offloadedAsNative(t, path, args, prof)
	for _, h := range rep.HotSpots {
		t.Logf("%s: %s, launches %d, fallbacks %v %s", h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.Reason)
		if h.Entry == nest && (h.Launches == 0 || len(h.FallbackReasons) > 0) {
			t.Errorf("the r, i, j nest launched %d times, fallbacks %v", h.Launches, h.FallbackReasons)
		}
	}
}
