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

// TestJacobi1DSecondStep profiles testdata/nests/jacobi1d.c with a probe
// budget that runs out in the first time step: thinning must go on into
// the second, so that the sweeps' trip counts (and their accesses) are
// seen at two values of t. Stopped at the second step's header, every
// sample was at t = 0, the fit's soundness rule left the sweeps' trip
// counts unknown ("the inner loop … has no affine, positive trip count"),
// and the time loop had no schedule. It must now have both sweeps as
// inner loops with trip counts, and run with the native output.
func TestJacobi1DSecondStep(t *testing.T) {
	path := gccStatic(t, filepath.Join("..", "testdata", "nests", "jacobi1d.c"), filepath.Join(t.TempDir(), "jacobi1d"), "-O2")
	args := []string{path, "6000", "6"}
	prof := phase1Collect(t, pipeline.Config{Path: path, Args: args, Engine: testEngine}, profile.CollectOptions{MaxProbesPerNest: 20000})
	steps := false
	for _, h := range prof.HotSpots {
		if len(h.Levels) != 1 || len(h.InnerLoops) != 2 {
			continue
		}
		steps = true
		if strings.Contains(h.Reason, "trip count") {
			t.Errorf("the time loop at %s: %s", h.Entry, h.Reason)
		}
		for _, il := range h.InnerLoops {
			if il.TripCount == "" {
				t.Errorf("the sweep at %s has no trip count (seen %v)", il.Header, il.ObservedTrips)
			}
		}
	}
	if !steps {
		t.Fatal("the time loop (one level, two sweeps) is no hot spot")
	}
	want := runNative(t, path, args[1:]...)
	var out bytes.Buffer
	res, _, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want || res.ExitStatus != 0 {
		t.Fatalf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
	}
}
