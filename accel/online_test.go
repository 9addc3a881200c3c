package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
)

// TestRunOnlineStopsBySamples runs matmul once with both phases and no
// bound on the profiling round: only what the collector has seen can end
// it (every nest entered has run enough outer iterations, or has spent its
// probes). The round must end within the product nest's only instance,
// after a small part of the run, and the rest of that instance must run
// on the GPU, with the native output.
func TestRunOnlineStopsBySamples(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	args := []string{path, "200"}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileInsns: 1 << 50, AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	if on.Why != nil {
		t.Fatalf("phase 2 did not run: %v", on.Why)
	}
	t.Logf("%d rounds, %d guest instructions profiled of %d\n%s", on.Rounds, on.ProfiledInstructions, on.Report.GuestInstructions, accel.FormatReport(on.Report))
	if on.Rounds < 1 || on.LimitedRounds != 0 {
		t.Errorf("%d profiling rounds, %d ended by the instruction bound: want at least one, each ended by what it saw", on.Rounds, on.LimitedRounds)
	}
	// The product nest is 200³ multiply-adds; the round needs a few of its
	// 200 outer iterations.
	if on.ProfiledInstructions == 0 || on.ProfiledInstructions > on.Report.GuestInstructions/4 {
		t.Errorf("%d of %d guest instructions ran under the collector: the round did not end by what it saw", on.ProfiledInstructions, on.Report.GuestInstructions)
	}
	launches := 0
	for _, h := range on.Report.HotSpots {
		launches += h.Launches
	}
	if launches == 0 {
		t.Errorf("nothing launched after the profiling round")
	}
}
