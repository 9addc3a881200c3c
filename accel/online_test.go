package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
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

// TestRunOnlineOuterLevelOfLongRows runs gemm, whose product nest is
// entered once, with a probe budget per nest smaller than one iteration
// of its outer loop takes, as at the sizes where the single run matters
// (an outer iteration there is millions of probes). The collector must
// still see several outer iterations, pausing the probes of the
// iterations it does not record, so that the outer level is found
// parallel, and the rest of the instance must launch as the schedule's
// few kernels (not once per inner loop), with the native output.
func TestRunOnlineOuterLevelOfLongRows(t *testing.T) {
	dir := buildNests(t, []string{"O2-static"})
	path := filepath.Join(dir, "O2-static", "gemm")
	args := []string{path, "240", "100", "150"}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, on, err := pipeline.RunOnline(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		pipeline.OnlineOptions{Driver: gpusim.New(gpusim.Options{}), ProfileInsns: 1 << 50, AlwaysOffload: true,
			// An outer iteration: 150 × 100 multiply-adds, some 120,000
			// probes. Short slices let the pause work on k's iterations
			// of 100, as it does at large sizes on iterations of
			// thousands.
			Collect: profile.CollectOptions{MaxProbesPerNest: 100_000, SliceInsns: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Errorf("online run %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
	if on.Why != nil {
		t.Fatalf("phase 2 did not run: %v", on.Why)
	}
	t.Logf("%d rounds, %d guest instructions profiled\n%s", on.Rounds, on.ProfiledInstructions, accel.FormatReport(on.Report))
	outer, launches := false, 0
	for _, h := range on.Report.HotSpots {
		launches += h.Launches
		if h.Launches > 0 && strings.HasPrefix(h.Schedule, "grid(i,") && strings.Contains(h.Schedule, "thread(") {
			outer = true
		}
	}
	if !outer {
		t.Errorf("no hot spot launched as a grid over the outer level with a loop inside the thread")
	}
	// The beta kernel and the product kernel once per instance, after
	// the rest of the row the profiling round ended in (a launch per k
	// there, as AlwaysOffload asks) and the initialisation nests; one
	// launch per (i, k) would be tens of thousands.
	if launches == 0 || launches > 2*150 {
		t.Errorf("%d launches: want the product nest's instance offloaded as a few kernels", launches)
	}
}
