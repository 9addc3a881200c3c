package accel_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
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
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Fatalf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
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
