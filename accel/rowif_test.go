package accel_test

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
)

// TestProbeRowsWithAnIf accelerates rows whose inner loop has an if that
// the recorded prefix of each row never takes (testdata/rowif.c): the
// skipped iterations ran other instructions than the recorded ones, so
// their count comes from the registers that count them, and the rows
// launch (they fell back with "live-in value not affine" before).
func TestProbeRowsWithAnIf(t *testing.T) {
	path := buildC(t, "rowif")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "60", "50", "2"}, Engine: testEngine})
	args := []string{path, "300", "400", "3"}
	rep := offloadedAsNative(t, path, args, prof)
	launched := false
	for _, h := range rep.HotSpots {
		t.Logf("%s: %s, launches %d, fallbacks %v %s", h.Entry, h.Schedule, h.Launches, h.FallbackReasons, h.LastFallback)
		if h.FallbackReasons[accel.ReasonNotAffine] > 0 {
			t.Errorf("%s fell back: %s", h.Entry, h.LastFallback)
		}
		if strings.HasPrefix(h.Schedule, "grid(i)") && h.Launches >= 3 {
			launched = true
		}
	}
	if !launched {
		t.Error("the row loop did not launch in every round")
	}
}
