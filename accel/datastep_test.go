package accel_test

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestDataDependentStep profiles testdata/datastep.c with an input where
// pass's index always steps by one, so phase 1 fits it affinely, then
// accelerates an input where it skips elements from the second round on.
// A kernel that placed thread u at i = u would write the elements the CPU
// skips; each thread checks that its iteration advanced i by one step, so
// the launches of the skipping rounds fail and run on the CPU: the output
// is the native one, and the report names the error. After eight failed
// launches in a row the hot spot goes back to the CPU for good.
func TestDataDependentStep(t *testing.T) {
	path := buildC(t, "datastep", "-O0")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "3000", "3", "99"}, Engine: testEngine})
	args := []string{path, "3000", "14", "2"}
	rep := offloadedAsNative(t, path, args, prof)
	stepped := false
	for _, h := range rep.HotSpots {
		if h.Function != "pass" {
			continue
		}
		t.Logf("%s: launches %d, fallbacks %v (%s), disarmed %v", h.Entry, h.Launches, h.FallbackReasons, h.LastFallback, h.Disarmed)
		stepped = h.Launches > 0 && strings.Contains(h.LastFallback, "did not advance by its step")
		if !h.Disarmed || h.FallbackReasons["kernel reported an error"] != 8 {
			t.Errorf("pass was not sent back to the CPU after 8 failed launches")
		}
	}
	if !stepped {
		t.Error("pass was not launched, or no launch failed on its step check")
	}
}
