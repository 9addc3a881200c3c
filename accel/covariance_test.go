package accel_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestCovarianceOuterSampled profiles testdata/nests/covariance.c at a
// size where an iteration of the product's i loop takes thousands of
// probes: its j loop (shorter at each i) pauses, resumes only at its end,
// and so the next i begins unrecorded. That iteration alone must go
// unrecorded: the i loop paused to its end after it, sampled at i = 0
// only, and the soundness rule of the fit (a level seen at one value has
// an unknown step) left the nest sequential. It must be parallel at i and
// j, launch as one 2D grid with k in the thread, and give the native
// output.
func TestCovarianceOuterSampled(t *testing.T) {
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "covariance.c"), filepath.Join(t.TempDir(), "covariance"), "-O2")
	args := []string{path, "120", "90"}
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
		if !slices.Equal(kinds, []string{"parallel", "parallel", "reduction"}) {
			t.Fatalf("the product nest at %s has levels %v: %s", nest, kinds, h.Reason)
		}
	}
	if nest == "" {
		t.Fatal("the product nest is no hot spot")
	}
	rep := offloadedAsNative(t, path, args, prof)
	for _, h := range rep.HotSpots {
		if h.Entry != nest {
			continue
		}
		t.Logf("%s: %s, launches %d, fallbacks %v", h.Entry, h.Schedule, h.Launches, h.FallbackReasons)
		if h.Schedule != "grid(i,j) thread(k)" || h.Launches == 0 {
			t.Errorf("the product nest ran as %q with %d launches, want grid(i,j) thread(k) launched", h.Schedule, h.Launches)
		}
		return
	}
	t.Errorf("the product nest at %s is not in the report", nest)
}
