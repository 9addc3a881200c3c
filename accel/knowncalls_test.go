package accel_test

import (
	"testing"

	"github.com/gxbit/gxbit/internal/corpus"
)

// TestMemsetNest runs testdata/nests' twomm two-phase on gpusim: gcc -O2
// turns the zeroing of tmp's row i in the first product into a call of
// memset inside the i loop. Phase 1 models the call (profile.KnownCalls)
// and finds i parallel, and phase 2 runs the memset in the kernel: the
// product's i level launches once per instance, not its j level once per
// i. The output is native's.
func TestMemsetNest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a nests program")
	}
	dir := buildNests(t, []string{"O2-static"})
	progs, err := corpus.Programs(dir, "O2-static")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Name != "twomm" {
			continue
		}
		rep := accelerateAt(t, p, []string{"60", "62", "64", "66"})
		found := false
		for _, h := range rep.HotSpots {
			t.Logf("%s %s: %d launches, %d fallbacks %s%s", h.Entry, h.Schedule, h.Launches, h.Fallbacks, h.Reason, h.LastFallback)
			if h.Schedule != "grid(i) thread(j,k)" {
				continue
			}
			found = true
			if h.Launches != 1 || h.Reason != "" {
				t.Errorf("the first product's i level %s made %d launches (%s), want 1", h.Entry, h.Launches, h.Reason)
			}
		}
		if !found {
			t.Error("no hot spot at the first product's i level: its memset call made it no candidate")
		}
		return
	}
	t.Fatal("twomm not built")
}
