package accel_test

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/pipeline"
)

// TestArgminNest offloads k-means' assignment step (testdata/argmin.c at
// -O2): a point loop whose two latches each run a copy of the loop's
// compare (profile's latchExitTwins, ptxgen's sameExitOperands), around a
// float argmin whose comiss flags a conditional move reads (gvinst's
// FlagBitsPass). Before either, phase 1 rejected the nest ("leaves from
// two places") and ptxgen the kernel ("GETFLAGS reads the flags across
// blocks"). The point loop must launch, with the native output.
func TestArgminNest(t *testing.T) {
	path := buildC(t, "argmin")
	args := []string{path, "3000", "12", "3"}
	prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
	rep := offloadedAsNative(t, path, args, prof)
	launched := false
	for _, h := range rep.HotSpots {
		t.Logf("%s %s: %s, launches %d, fallbacks %v %s", h.Entry, h.Function, h.Schedule, h.Launches, h.FallbackReasons, h.Reason)
		if h.Schedule == "grid(i) thread(j)" && h.Launches > 0 {
			launched = true
		}
	}
	if !launched {
		t.Error("the point loop (grid(i), the centre loop in the thread) did not launch")
	}
}

// TestIfSidesExit profiles testdata/ifsides.c, whose inner loop's if has
// a copy of the loop's compare at the end of each side, one leaving by je
// and one going back by jne: phase 1 takes them for one exit test, so no
// loop of the nest is rejected as leaving from two places.
func TestIfSidesExit(t *testing.T) {
	path := buildC(t, "ifsides")
	prof := phase1(t, pipeline.Config{Path: path, Args: []string{path, "40", "50"}, Engine: testEngine})
	inner := false
	for _, h := range prof.HotSpots {
		for _, l := range h.Levels {
			if strings.Contains(l.Reason, "leaves from two places") {
				t.Errorf("%s level %s: %s", h.Entry, l.Index, l.Reason)
			}
		}
		inner = inner || len(h.Levels) == 3
	}
	if !inner {
		t.Error("the r, i, j nest is no hot spot")
	}
}
