package accel_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// TestUntrustedProfile accelerates testdata/sequential.c (a prefix sum
// and a Gauss-Seidel sweep, both truly sequential) with a profile edited
// by hand to mark every level of every nest parallel. Phase 2 must see
// from the probed iterations that they are not, run them on the CPU, and
// give the native output; the report names the reason.
func TestUntrustedProfile(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			path := gccStatic(t, filepath.Join("testdata", "sequential.c"), filepath.Join(t.TempDir(), "sequential"), opt, "-fno-tree-vectorize", "-fno-inline")
			args := []string{path, "3000", "40"}
			prof := phase1(t, pipeline.Config{Path: path, Args: args, Engine: testEngine})
			edited := 0
			for i := range prof.HotSpots {
				h := &prof.HotSpots[i]
				if h.Function != "prefix" && h.Function != "gauss_seidel" {
					continue
				}
				if h.Verdict == profile.VerdictParallel {
					t.Fatalf("phase 1 marked %s's nest parallel: %v", h.Function, h.ParallelLevels)
				}
				h.Verdict, h.Reason, h.ParallelLevels = profile.VerdictParallel, "", nil
				for l := range h.Levels {
					h.ParallelLevels = append(h.ParallelLevels, l)
				}
				edited++
			}
			if edited < 2 {
				t.Fatalf("found %d of the two sequential nests in the profile", edited)
			}
			want := runNative(t, path, args[1:]...)
			var out bytes.Buffer
			res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: args, Stdout: &out, Stderr: &out, Engine: testEngine},
				accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want || res.ExitStatus != 0 {
				t.Errorf("accelerated %q (status %d), native %q", out.String(), res.ExitStatus, want)
			}
			for _, h := range rep.HotSpots {
				if h.Function != "prefix" && h.Function != "gauss_seidel" {
					continue
				}
				t.Logf("%s: offloadable %v %s, launches %d, fallbacks %v (%s)", h.Function, h.Offloadable, h.Reason, h.Launches, h.FallbackReasons, h.LastFallback)
				if h.Launches != 0 {
					t.Errorf("%s: %d launches of a sequential loop", h.Function, h.Launches)
				}
			}
		})
	}
}
