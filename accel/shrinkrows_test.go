package accel_test

import (
	"testing"

	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestShrinkingEntries profiles testdata/shrinkrows.c, whose j loop is a
// nest root entered once per k with n-k-1 trips, with a probe budget that
// runs out after a few entries: the entries counted after it must each
// keep their own trip count. Before, they all took the number of the last
// sampled entry, whose one trip count became two ("trip count of level i
// is not affine in the outer indices: two values"), and the nest stayed
// sequential. It must be parallel at j, with both i loops in the thread,
// and launch with the native output.
func TestShrinkingEntries(t *testing.T) {
	path := buildC(t, "shrinkrows", "-lm")
	args := []string{path, "40", "30"}
	prof := phase1Collect(t, pipeline.Config{Path: path, Args: args, Engine: testEngine}, profile.CollectOptions{MaxProbesPerNest: 2000})
	entry := ""
	for _, h := range prof.HotSpots {
		if len(h.Levels) == 1 && len(h.InnerLoops) == 2 {
			entry = h.Entry.String()
			if h.Verdict != "parallel" {
				t.Fatalf("the j loop at %s is %s: %s", entry, h.Verdict, h.Reason)
			}
		}
	}
	if entry == "" {
		t.Fatal("no hot spot of one level with two inner loops (the j loop)")
	}
	rep := offloadedAsNative(t, path, args, prof)
	for _, h := range rep.HotSpots {
		if h.Entry != entry {
			continue
		}
		t.Logf("%s: %s, launches %d, fallbacks %v", h.Entry, h.Schedule, h.Launches, h.FallbackReasons)
		if h.Schedule != "grid(i) thread(u0,u1)" || h.Launches == 0 {
			t.Errorf("the j loop ran as %q with %d launches, want grid(i) thread(u0,u1) launched", h.Schedule, h.Launches)
		}
		return
	}
	t.Errorf("the j loop at %s is not in the report", entry)
}
